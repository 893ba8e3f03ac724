//! `datalith serve --log kafka://...`: two nodes on one topic serve one database. Needs a
//! Kafka broker: `scale/kafka.sh up` starts one and prints its address, and
//! `DATALITH_TEST_KAFKA=ADDRESS` points this test at it (`.ci/run` does both). Without the
//! variable the test says it was skipped, unless `DATALITH_REQUIRE_KAFKA` is set (CI sets
//! it), which makes that a failure.

use std::time::{Duration, Instant};

use datalith::edn::{to_edn_string, Edn};

use crate::client::{send, Reply};
use crate::server::{self, Server};

fn broker() -> Option<String> {
    match std::env::var("DATALITH_TEST_KAFKA") {
        Ok(b) if !b.is_empty() => Some(b),
        _ if std::env::var_os("DATALITH_REQUIRE_KAFKA").is_some() => {
            panic!("DATALITH_REQUIRE_KAFKA is set but DATALITH_TEST_KAFKA names no broker")
        }
        _ => {
            eprintln!("skipped: no DATALITH_TEST_KAFKA (scale/kafka.sh up starts a broker)");
            None
        }
    }
}

fn post(s: &Server, op: &str, body: &str) -> Reply {
    send(
        "POST",
        &s.url(&format!("/db/db/{op}")),
        &[
            ("Content-Type", "application/edn"),
            ("Accept", "application/edn"),
        ],
        Some(body),
    )
}

fn transact(s: &Server, tx: &str) -> Reply {
    post(
        s,
        "transact",
        &to_edn_string(&Edn::Map(vec![(
            Edn::kw(":tx-data"),
            Edn::String(tx.to_string()),
        )])),
    )
}

fn get(m: &Edn, key: &str) -> Edn {
    let Edn::Map(kvs) = m else {
        panic!("not a map: {}", to_edn_string(m))
    };
    let key = Edn::kw(key);
    kvs.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no {} in {}", to_edn_string(&key), to_edn_string(m)))
}

fn basis_after(reply: &Reply) -> i64 {
    match get(&get(&reply.edn(), ":db-after"), ":basis-t") {
        Edn::Long(t) => t,
        other => panic!("basis {}", to_edn_string(&other)),
    }
}

/// Every datom the node holds at `basis` (waiting for it), in EAVT order, printed.
fn all_datoms(s: &Server, basis: i64) -> Vec<String> {
    let reply = post(
        s,
        "datoms",
        &format!("{{:index :eavt :limit 100000 :basis-t {basis}}}"),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    match get(&reply.edn(), ":result") {
        Edn::Vector(rows) | Edn::List(rows) => rows.iter().map(to_edn_string).collect(),
        other => panic!("result {}", to_edn_string(&other)),
    }
}

/// The `datalith` command.
fn datalith() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_datalith"))
}

/// A node started on `dir` once `copy` has written a copy of another node's database there:
/// it holds the datoms `a` holds, a write through `a` after the copy included, and applied
/// only the records after the copy.
fn join_from_copy(
    mut copy: std::process::Command,
    dir: &std::path::Path,
    a: &Server,
    args: &[&str],
    who: &str,
) -> Server {
    let out = copy.output().unwrap();
    assert!(
        out.status.success(),
        "{who}'s copy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = transact(a, &format!(r#"[{{:person/name "after {who}'s copy"}}]"#));
    assert_eq!(w.status, 200, "{}", w.body);
    let t = basis_after(&w);
    let node = server::start_in(dir, &["db"], args)
        .unwrap_or_else(|e| panic!("node {who} does not start from the copy: {e}"));
    assert_eq!(
        all_datoms(a, t),
        all_datoms(&node, t),
        "{who}, joined from a copy"
    );
    let applied = stat_of(&node, ":applied");
    assert!(
        applied <= 2,
        "{who} applied {applied} records: it did not start from the copy"
    );
    node
}

fn stat_of(s: &Server, key: &str) -> i64 {
    let reply = send(
        "GET",
        &s.url("/db/db/stat"),
        &[("Accept", "application/edn")],
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    match get(&get(&reply.edn(), ":replica"), key) {
        Edn::Long(n) => n,
        other => panic!("{key} {}", to_edn_string(&other)),
    }
}

#[test]
fn two_nodes_share_one_database_through_the_log() {
    let Some(broker) = broker() else { return };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let url = format!(
        "kafka://{broker}/datalith-test-{}-{nanos}",
        std::process::id()
    );
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["--log", url.as_str()];
    let a = server::start_in(dir_a.path(), &["db"], &args).expect("node A starts");
    let mut b = server::start_in(dir_b.path(), &["db"], &args).expect("node B starts");

    let schema = transact(
        &a,
        "[{:db/ident :person/name :db/valueType :db.type/string
           :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
          {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
          {:db/ident :person/friend :db/valueType :db.type/ref
           :db/cardinality :db.cardinality/many}]",
    );
    assert_eq!(schema.status, 200, "{}", schema.body);

    // Writes through either node: tempids, refs to earlier entities by lookup ref, upserts.
    let mut last = basis_after(&schema);
    for i in 0..40 {
        let node = if i % 2 == 0 { &a } else { &b };
        let tx = match i {
            0 => r#"[{:db/id "p" :person/name "P0" :person/age 0}]"#.to_string(),
            _ => format!(
                r#"[{{:db/id "p" :person/name "P{i}" :person/age {i}
                     :person/friend [[:person/name "P{}"]]}}
                    {{:person/name "P0" :person/age {i}}}]"#,
                i - 1
            ),
        };
        let reply = transact(node, &tx);
        assert_eq!(reply.status, 200, "tx {i}: {}", reply.body);
        let t = basis_after(&reply);
        assert!(t > last, "tx {i}: basis {t} after {last}");
        last = t;
        assert!(
            to_edn_string(&get(&reply.edn(), ":tempids")).contains("\"p\""),
            "tx {i}: {}",
            reply.body
        );
        // Read-your-writes on the node that took the write, without naming a basis (its
        // reads answer from its data file's state only once that state holds every write
        // it acknowledged).
        let seen = post(
            node,
            "q",
            &format!(
                "{{:query \"[:find ?a . :where [?e :person/name \\\"P{i}\\\"] [?e :person/age ?a]]\"}}"
            ),
        );
        assert_eq!(seen.status, 200, "tx {i}: {}", seen.body);
        assert_eq!(
            get(&seen.edn(), ":result"),
            Edn::Long(i),
            "tx {i}: {}",
            seen.body
        );
    }

    // A refusal reaches the submitter with its own category, and changes nothing anywhere.
    let refused = transact(&b, r#"[[:db/cas [:person/name "P3"] :person/age 99 100]]"#);
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(
        refused.body.contains(":db.error/cas-failed"),
        "{}",
        refused.body
    );

    // Read-your-writes across nodes: a basis A answered with, asked of B.
    let w = transact(&a, r#"[{:person/name "Ann"}]"#);
    assert_eq!(w.status, 200, "{}", w.body);
    let t = basis_after(&w);
    let seen = post(
        &b,
        "q",
        &format!("{{:query \"[:find ?e . :where [?e :person/name \\\"Ann\\\"]]\" :basis-t {t}}}"),
    );
    assert_eq!(seen.status, 200, "{}", seen.body);
    assert!(
        !matches!(get(&seen.edn(), ":result"), Edn::Nil),
        "{}",
        seen.body
    );

    // The same datoms on both nodes, at the same basis.
    let on_a = all_datoms(&a, t);
    assert_eq!(on_a, all_datoms(&b, t), "the nodes hold different datoms");
    assert!(on_a.len() > 200, "{} datoms", on_a.len());

    // A node that was down catches up from the offset its files record.
    let (status, _) = b.stop();
    assert!(status.success(), "node B stopped with {status}");
    let mut t = t;
    for i in 0..20 {
        let reply = transact(&a, &format!(r#"[{{:person/name "Q{i}" :person/age {i}}}]"#));
        assert_eq!(reply.status, 200, "{}", reply.body);
        t = basis_after(&reply);
    }
    b = server::start_in(dir_b.path(), &["db"], &args).expect("node B starts again");
    assert_eq!(all_datoms(&a, t), all_datoms(&b, t), "B after its restart");
    let deadline = Instant::now() + Duration::from_secs(30);
    while stat_of(&b, ":lag-tx") != 0 {
        assert!(Instant::now() < deadline, "B still lags after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }

    // A new node joins from a copy of a running node's files (which record the last offset
    // they hold) and the log after it: it applies only what came after the copy.
    let dir_c = tempfile::tempdir().unwrap();
    let mut copy = datalith();
    copy.arg("copy")
        .arg(dir_a.path().join("db"))
        .arg(dir_c.path().join("db"));
    let c = join_from_copy(copy, dir_c.path(), &a, &args, "C");
    let w = transact(&c, r#"[{:person/name "through C"}]"#);
    assert_eq!(w.status, 200, "{}", w.body);
    let t = basis_after(&w);
    assert_eq!(all_datoms(&a, t), all_datoms(&c, t), "A reads C's write");
    assert_eq!(all_datoms(&b, t), all_datoms(&c, t), "B reads C's write");

    // Another joins from a copy fetched from a running node over the network (`GET
    // /db/NAME/copy`): no file system shared with it.
    let dir_d = tempfile::tempdir().unwrap();
    let b_url = b.url("");
    let mut copy = datalith();
    copy.args(["copy", "--connect", b_url.trim_end_matches('/'), "db"])
        .arg(dir_d.path().join("db"));
    let d = join_from_copy(copy, dir_d.path(), &a, &args, "D");
    drop(d);

    // A database with transactions of its own cannot join a log.
    let lone = tempfile::tempdir().unwrap();
    let c = server::start_in(lone.path(), &["db"], &[]).expect("a plain server starts");
    assert_eq!(
        transact(
            &c,
            r#"[{:db/ident :x/y :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#
        )
        .status,
        200
    );
    drop(c);
    let err = match server::start_in(lone.path(), &["db"], &args) {
        Ok(_) => panic!("a database with its own transactions joined the log"),
        Err(stderr) => stderr,
    };
    assert!(err.contains("never served with a log"), "{err}");
}
