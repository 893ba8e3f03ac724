//! The key-value routes: every one in EDN and in JSON, bytes both ways, pages forward and
//! back, the roles they need, bad input, and one table shared with the embedded API.

use datalith::edn::{read_one, Edn};
use datalith::kv::KvOp;
use datalith::{Database, DbOptions};

use crate::auth::sha256_hex;
use crate::client::{run_table, send, Fmt, Row};
use crate::server;

const fn row(
    path: &'static str,
    fmt: Fmt,
    body: &'static str,
    status: u16,
    want: &'static [&'static str],
) -> Row {
    Row {
        method: if body.is_empty() { "GET" } else { "POST" },
        path,
        fmt,
        headers: &[],
        body,
        status,
        want,
    }
}

use Fmt::{Edn as E, Json as J};

#[test]
fn every_kv_route_in_edn_and_json() {
    let s = server::start(&["people"], &[]);
    let rows = [
        // A table never written reads as empty, and is not created by the read.
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key "a"}"#,
            200,
            &["{:result nil}"],
        ),
        row("/db/people/kv-range", E, r#"{:table "t"}"#, 200, &["{:result []}"]),
        row("/db/people/kv-count", E, r#"{:table "t"}"#, 200, &["{:result 0}"]),
        row("/db/people/kv-tables", E, "", 200, &["{:result []}"]),
        // Writes: one key as bytes or as a string, many in one transaction.
        row(
            "/db/people/kv-put",
            E,
            r#"{:table "t" :key #bytes [97] :value #bytes [0 255]}"#,
            200,
            &[":puts 1", ":deletes 0"],
        ),
        row(
            "/db/people/kv-put",
            J,
            r##"{"table": "t", "key": "b", "value": {"#tag": ["bytes", [1]]}}"##,
            200,
            &[":puts 1"],
        ),
        row(
            "/db/people/kv-write",
            E,
            r#"{:table "t" :put [["c" "3"] ["d" "4"] ["e" "5"]] :delete ["d" "zz"]}"#,
            200,
            &[":puts 3", ":deletes 2"],
        ),
        row(
            "/db/people/kv-write",
            J,
            r##"{"table": "u", "put": [[{"#tag": ["bytes", [7]]}, "x"]]}"##,
            200,
            &[":puts 1"],
        ),
        // Reads, answered as bytes in both formats.
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key "a"}"#,
            200,
            &["{:result #bytes [0 255]}"],
        ),
        row(
            "/db/people/kv-get",
            J,
            r##"{"table": "t", "key": {"#tag": ["bytes", [98]]}}"##,
            200,
            &["{:result #bytes [1]}", r##"raw:{":result":{"#tag":["bytes",[1]]}}"##],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key "d"}"#,
            200,
            &["{:result nil}"],
        ),
        row(
            "/db/people/kv-tables",
            J,
            "",
            200,
            &[r#"{:result ["t" "u"]}"#],
        ),
        row("/db/people/kv-count", E, r#"{:table "t"}"#, 200, &["{:result 4}"]),
        row(
            "/db/people/kv-count",
            J,
            r#"{"table": "t", "after": "a", "end": "e"}"#,
            200,
            &["{:result 2}"],
        ),
        row(
            "/db/people/kv-count",
            E,
            r#"{:table "t" :start "b" :through "e"}"#,
            200,
            &["{:result 3}"],
        ),
        // Ranges: bounds both ways, pages, reverse, keys alone.
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :start "b" :end "e"}"#,
            200,
            &["{:result [[#bytes [98] #bytes [1]] [#bytes [99] #bytes [51]]]}"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :limit 2}"#,
            200,
            &[
                "{:result [[#bytes [97] #bytes [0 255]] [#bytes [98] #bytes [1]]], :next-start #bytes [99]}",
            ],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :start #bytes [99] :limit 2}"#,
            200,
            &["{:result [[#bytes [99] #bytes [51]] [#bytes [101] #bytes [53]]]}"],
        ),
        row(
            "/db/people/kv-range",
            J,
            r#"{"table": "t", "reverse": true, "keys-only": true, "limit": 3}"#,
            200,
            &[":result [#bytes [101] #bytes [99] #bytes [98]]",
                ":next-through #bytes [97]"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :reverse true :keys-only true :through "a"}"#,
            200,
            &["{:result [#bytes [97]]}"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :after "a" :through "b" :keys-only true}"#,
            200,
            &["{:result [#bytes [98]]}"],
        ),
        // Deletes; an absent key is no error.
        row(
            "/db/people/kv-delete",
            E,
            r#"{:table "t" :key "a"}"#,
            200,
            &[":deletes 1"],
        ),
        row(
            "/db/people/kv-delete",
            J,
            r#"{"table": "t", "key": "a"}"#,
            200,
            &[":deletes 1"],
        ),
        row("/db/people/kv-count", E, r#"{:table "t"}"#, 200, &["{:result 3}"]),
        // The Datalog store is untouched: a table named like one of its indexes is the
        // program's own.
        row(
            "/db/people/kv-put",
            E,
            r#"{:table "eav" :key "x" :value "y"}"#,
            200,
            &[":puts 1"],
        ),
        row(
            "/db/people/q",
            E,
            r#"{:query "[:find (count ?e) . :where [?e :db/ident]]"}"#,
            200,
            &[":result "],
        ),
    ];
    run_table(&s, &rows);
}

#[test]
fn bad_kv_requests_get_clear_errors() {
    let s = server::start(&["people"], &[]);
    let long_key = format!(r#"{{:table "t" :key "{}"}}"#, "k".repeat(512));
    let long_key: &'static str = Box::leak(long_key.into_boxed_str());
    const INCORRECT: &str = ":cognitect.anomalies/incorrect";
    let rows = [
        row(
            "/db/people/kv-get",
            E,
            r#"{:key "a"}"#,
            400,
            &["missing field :table"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t"}"#,
            400,
            &["missing field :key"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table 7 :key "a"}"#,
            400,
            &[":table must be"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "" :key "a"}"#,
            400,
            &[":table must be"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key 42}"#,
            400,
            &[INCORRECT, ":key must be bytes"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key #bytes [256]}"#,
            400,
            &[":key must be bytes"],
        ),
        row(
            "/db/people/kv-get",
            J,
            r##"{"table": "t", "key": {"#tag": ["bytes", "abc"]}}"##,
            400,
            &[":key must be bytes"],
        ),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key ""}"#,
            400,
            &[":key is empty"],
        ),
        row("/db/people/kv-get", E, long_key, 400, &["at most 511"]),
        row(
            "/db/people/kv-get",
            E,
            r#"{:table "t" :key "a" :value "b"}"#,
            400,
            &["unknown field :value"],
        ),
        row(
            "/db/people/kv-put",
            E,
            r#"{:table "t" :key "a"}"#,
            400,
            &["missing field :value"],
        ),
        row(
            "/db/people/kv-write",
            E,
            r#"{:table "t" :put [["a"]]}"#,
            400,
            &[":put holds [key value] pairs"],
        ),
        row(
            "/db/people/kv-write",
            E,
            r#"{:table "t" :put "a"}"#,
            400,
            &[":put must be"],
        ),
        row(
            "/db/people/kv-write",
            E,
            r#"{:table "t" :delete [1]}"#,
            400,
            &[":delete must be bytes"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :start "a" :after "b"}"#,
            400,
            &[":start and :after are the same bound"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :limit 0}"#,
            400,
            &[":limit 0 is not from 1"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :limit 100001}"#,
            400,
            &[":limit 100001"],
        ),
        row(
            "/db/people/kv-range",
            E,
            r#"{:table "t" :reverse "yes"}"#,
            400,
            &[":reverse must be true or false"],
        ),
        row(
            "/db/people/kv-count",
            E,
            r#"{:table "t" :limit 1}"#,
            400,
            &["unknown field :limit"],
        ),
        row("/db/people/kv-get", E, "[1 2]", 400, &["must be a map"]),
        row(
            "/db/people/kv-get",
            J,
            r##"{"table": "#x"}"##,
            400,
            &["missing field :key"],
        ),
        row(
            "/db/nobody/kv-get",
            E,
            r#"{:table "t" :key "a"}"#,
            404,
            &[":datalith.error/unknown-database"],
        ),
        Row {
            method: "GET",
            path: "/db/people/kv-get",
            fmt: E,
            headers: &[],
            body: "",
            status: 405,
            want: &[":datalith.error/method-not-allowed"],
        },
        Row {
            method: "POST",
            path: "/db/people/kv-tables",
            fmt: E,
            headers: &[],
            body: "{}",
            status: 405,
            want: &[":datalith.error/method-not-allowed"],
        },
    ];
    run_table(&s, &rows);
    // Nothing the refusals carried was written.
    let reply = send(
        "GET",
        &s.url("/db/people/kv-tables"),
        &[("Accept", "application/edn")],
        None,
    );
    assert_eq!(
        reply.edn(),
        read_one("{:result []}").unwrap(),
        "{}",
        reply.body
    );
}

const R: (&str, &str) = ("Authorization", "Bearer reader-secret");
const W: (&str, &str) = ("Authorization", "Bearer writer-secret");

const fn auth_row(
    path: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    status: u16,
    want: &'static [&'static str],
) -> Row {
    Row {
        method: if body.is_empty() { "GET" } else { "POST" },
        path,
        fmt: E,
        headers,
        body,
        status,
        want,
    }
}

#[test]
fn kv_reads_need_the_read_role_and_writes_the_write_role() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "reader read people {}\nwriter write people {}\n",
            sha256_hex("reader-secret"),
            sha256_hex("writer-secret"),
        ),
    )
    .unwrap();
    let s = server::start_in(
        dir.path(),
        &["people", "films"],
        &["--tokens", tokens.to_str().unwrap()],
    )
    .expect("starts");
    const PUT: &str = r#"{:table "t" :key "a" :value "1"}"#;
    const GET: &str = r#"{:table "t" :key "a"}"#;
    const FORBIDDEN: &[&str] = &[":datalith.error/forbidden", "has read"];
    let rows = [
        auth_row(
            "/db/people/kv-put",
            &[],
            PUT,
            401,
            &[":datalith.error/unauthorized"],
        ),
        auth_row(
            "/db/people/kv-get",
            &[],
            GET,
            401,
            &[":datalith.error/unauthorized"],
        ),
        auth_row(
            "/db/people/kv-tables",
            &[],
            "",
            401,
            &[":datalith.error/unauthorized"],
        ),
        auth_row("/db/people/kv-put", &[R], PUT, 403, FORBIDDEN),
        auth_row("/db/people/kv-delete", &[R], GET, 403, FORBIDDEN),
        auth_row(
            "/db/people/kv-write",
            &[R],
            r#"{:table "t" :put [["a" "2"]]}"#,
            403,
            FORBIDDEN,
        ),
        // A token of another database reaches none of this one's tables.
        auth_row(
            "/db/films/kv-get",
            &[W],
            GET,
            403,
            &[":datalith.error/forbidden"],
        ),
        auth_row(
            "/db/films/kv-put",
            &[W],
            PUT,
            403,
            &[":datalith.error/forbidden"],
        ),
        auth_row("/db/people/kv-put", &[W], PUT, 200, &[":puts 1"]),
        auth_row(
            "/db/people/kv-get",
            &[R],
            GET,
            200,
            &["{:result #bytes [49]}"],
        ),
        auth_row(
            "/db/people/kv-range",
            &[R],
            r#"{:table "t"}"#,
            200,
            &["[[#bytes [97] #bytes [49]]]"],
        ),
        auth_row(
            "/db/people/kv-count",
            &[R],
            r#"{:table "t"}"#,
            200,
            &["{:result 1}"],
        ),
        auth_row(
            "/db/people/kv-tables",
            &[R],
            "",
            200,
            &[r#"{:result ["t"]}"#],
        ),
        // The refused writes wrote nothing.
        auth_row(
            "/db/people/kv-get",
            &[W],
            GET,
            200,
            &["{:result #bytes [49]}"],
        ),
    ];
    run_table(&s, &rows);
}

/// The value of `key` in the program's table `table` of the database in `dir`, read in process.
fn embedded_get(dir: &std::path::Path, table: &str, key: &[u8]) -> Option<Vec<u8>> {
    let db = Database::open(dir, DbOptions::default()).unwrap();
    let t = db.existing_kv_table(table).unwrap()?;
    let read = db.env().read().unwrap();
    let found = read.view().get(&t, key).unwrap().map(<[u8]>::to_vec);
    found
}

#[test]
fn a_table_written_in_process_is_read_over_http_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = server::start_in(dir.path(), &["people"], &[]).expect("starts");
    let put = send(
        "POST",
        &s.url("/db/people/kv-put"),
        &[("Content-Type", "application/edn")],
        Some(r#"{:table "shared" :key "remote" :value #bytes [1 2]}"#),
    );
    assert_eq!(put.status, 200, "{}", put.body);
    let (status, _) = s.stop();
    assert!(status.success());
    let path = dir.path().join("people");
    assert_eq!(embedded_get(&path, "shared", b"remote"), Some(vec![1, 2]));
    {
        let db = Database::open(&path, DbOptions::default()).unwrap();
        let t = db.kv_table("shared").unwrap();
        db.env()
            .transact_kv(vec![KvOp::put(&t, "local", vec![3u8])])
            .unwrap();
    }
    let s = server::start_in(dir.path(), &["people"], &[]).expect("starts again");
    let got = send(
        "POST",
        &s.url("/db/people/kv-range"),
        &[("Content-Type", "application/edn")],
        Some(r#"{:table "shared"}"#),
    );
    assert_eq!(got.status, 200, "{}", got.body);
    let want: Edn =
        read_one(r#"{:result [[#bytes [108 111 99 97 108] #bytes [3]] [#bytes [114 101 109 111 116 101] #bytes [1 2]]]}"#)
            .unwrap();
    assert_eq!(got.edn(), want);
}

#[test]
fn a_walk_by_pages_reads_every_key_once_both_ways() {
    let s = server::start(&["people"], &[]);
    let put: Vec<String> = (0..250u32)
        .map(|i| format!(r#"[#bytes [{} {}] "v{i}"]"#, i / 256, i % 256))
        .collect();
    let body = format!(r#"{{:table "p" :put [{}]}}"#, put.join(" "));
    let reply = send(
        "POST",
        &s.url("/db/people/kv-write"),
        &[("Content-Type", "application/edn")],
        Some(&body),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    for reverse in [false, true] {
        let (mut seen, mut bound) = (Vec::new(), None::<String>);
        loop {
            let bound_field = match (reverse, &bound) {
                (_, None) => String::new(),
                (false, Some(k)) => format!(":start {k}"),
                (true, Some(k)) => format!(":through {k}"),
            };
            let body = format!(
                r#"{{:table "p" :limit 100 :keys-only true :reverse {reverse} {bound_field}}}"#
            );
            let reply = send(
                "POST",
                &s.url("/db/people/kv-range"),
                &[("Content-Type", "application/edn")],
                Some(&body),
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            let Edn::Map(pairs) = reply.edn() else {
                panic!("{}", reply.body)
            };
            let field = |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == Edn::kw(name))
                    .map(|(_, v)| v.clone())
            };
            let Some(Edn::Vector(keys)) = field(":result") else {
                panic!("{}", reply.body)
            };
            seen.extend(keys);
            let next = if reverse {
                ":next-through"
            } else {
                ":next-start"
            };
            match field(next) {
                Some(k) => bound = Some(datalith::edn::to_edn_string(&k)),
                None => break,
            }
        }
        let mut want: Vec<Edn> = (0..250u32)
            .map(|i| read_one(&format!("#bytes [{} {}]", i / 256, i % 256)).unwrap())
            .collect();
        if reverse {
            want.reverse();
        }
        assert_eq!(seen, want, "reverse {reverse}");
    }
}
