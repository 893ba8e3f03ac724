//! Bearer tokens: none, wrong, a read-only token writing, a token on another database.

use crate::client::{edn_row as row, run_table};
use crate::server;

/// The token file's hash of `token`, made as the docs tell users to make it.
pub fn sha256_hex(token: &str) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(token.as_bytes())?;
            c.wait_with_output()
        })
        .expect("sha256sum, as the README tells users to run it");
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

const R: (&str, &str) = ("Authorization", "Bearer reader-secret");
const W: (&str, &str) = ("Authorization", "Bearer writer-secret");
const A: (&str, &str) = ("Authorization", "Bearer admin-secret");

#[test]
fn tokens_roles_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "# name role database sha256\nreader read people {}\nwriter write people {}\nroot admin * {}\n",
            sha256_hex("reader-secret"),
            sha256_hex("writer-secret"),
            sha256_hex("admin-secret"),
        ),
    )
    .unwrap();
    let s = server::start_in(
        dir.path(),
        &["people", "films"],
        &["--tokens", tokens.to_str().unwrap(), "--log-requests"],
    )
    .expect("starts");
    const SCHEMA: &str = r#"{:tx-data "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"}"#;
    const Q: &str = r#"{:query "[:find (count ?e) . :where [?e :n]]"}"#;
    let rows = [
        row("GET", "/health", &[], "", 200, &[":status :ok"]),
        row(
            "GET",
            "/dbs",
            &[],
            "",
            401,
            &[
                ":db/error :datalith.error/unauthorized",
                ":cognitect.anomalies/forbidden",
            ],
        ),
        row(
            "POST",
            "/db/people/q",
            &[],
            Q,
            401,
            &[":datalith.error/unauthorized", "no token"],
        ),
        row(
            "POST",
            "/db/people/q",
            &[("Authorization", "Bearer wrong-secret")],
            Q,
            401,
            &["unknown token"],
        ),
        row(
            "POST",
            "/db/people/q",
            &[("Authorization", "Basic cmVhZGVy")],
            Q,
            401,
            &["Bearer TOKEN"],
        ),
        // An unknown database is told only to a known token.
        row(
            "POST",
            "/db/nope/q",
            &[],
            Q,
            401,
            &[":datalith.error/unauthorized"],
        ),
        row(
            "POST",
            "/db/nope/q",
            &[R],
            Q,
            404,
            &[":datalith.error/unknown-database"],
        ),
        row("POST", "/db/people/transact", &[W], SCHEMA, 200, &[":tx "]),
        row(
            "POST",
            "/db/people/transact",
            &[R],
            r#"{:tx-data "[{:n 1}]"}"#,
            403,
            &[
                ":db/error :datalith.error/forbidden",
                ":cognitect.anomalies/forbidden",
                "has read",
            ],
        ),
        row(
            "POST",
            "/db/people/transact",
            &[W],
            r#"{:tx-data "[{:n 1}]"}"#,
            200,
            &[],
        ),
        row("POST", "/db/people/q", &[R], Q, 200, &[":result 1"]),
        row(
            "GET",
            "/db/people/stat",
            &[R],
            "",
            200,
            &[r#":name "people""#],
        ),
        row("POST", "/db/films/q", &[R], Q, 403, &["has no role"]),
        row(
            "POST",
            "/db/people/q",
            &[R],
            r#"{:query "[:find ?e :in $ $f :where [$f ?e :n]]" :args [#datalith/db "films"]}"#,
            403,
            &[":datalith.error/forbidden", r#":database "films""#],
        ),
        row(
            "POST",
            "/db/films/transact",
            &[W],
            SCHEMA,
            403,
            &[":datalith.error/forbidden"],
        ),
        row("POST", "/db/films/transact", &[A], SCHEMA, 200, &[]),
        row("GET", "/dbs", &[R], "", 200, &[r#":databases ["people"]"#]),
        row(
            "GET",
            "/dbs",
            &[A],
            "",
            200,
            &[r#":databases ["films" "people"]"#],
        ),
        row(
            "GET",
            "/metrics",
            &[],
            "",
            401,
            &[":datalith.error/unauthorized"],
        ),
        row(
            "GET",
            "/metrics",
            &[R],
            "",
            200,
            &[r#"datalith_requests_total{op="transact",status="403"} 2"#],
        ),
    ];
    run_table(&s, &rows);
    let reply = crate::client::send("GET", &s.url("/dbs"), &[], None);
    assert_eq!(
        reply.www_authenticate.as_deref(),
        Some("Bearer realm=\"datalith\"")
    );
    // Every request is logged, one EDN map a line, with the token's name.
    let log = std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap();
    let refused = log
        .lines()
        .filter_map(|l| datalith::edn::read_one(l).ok())
        .find(|m| m.to_string().contains(":status 403") && m.to_string().contains(":op :transact"))
        .unwrap_or_else(|| panic!("no logged refusal in {log}"));
    assert!(
        refused.to_string().contains(r#":token "reader""#),
        "{refused}"
    );
}

#[test]
fn a_token_file_with_a_wrong_line_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "reader read films 0123\n").unwrap();
    let Err(stderr) = server::start_in(
        dir.path(),
        &["people"],
        &["--tokens", tokens.to_str().unwrap()],
    ) else {
        panic!("started with a wrong token file")
    };
    assert!(
        stderr.contains("line 1: database \"films\" is not served"),
        "{stderr}"
    );
}

#[test]
fn a_token_past_its_rate_is_told_to_wait() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "reader read * {}\nother read * {}\n",
            sha256_hex("reader-secret"),
            sha256_hex("other-secret")
        ),
    )
    .unwrap();
    let s = server::start_in(
        dir.path(),
        &["people"],
        &["--tokens", tokens.to_str().unwrap(), "--token-rate", "2"],
    )
    .expect("starts");
    let stat = |token: &str| {
        crate::client::send(
            "GET",
            &s.url("/db/people/stat"),
            &[("Authorization", token)],
            None,
        )
    };
    let statuses: Vec<u16> = (0..3).map(|_| stat(R.1).status).collect();
    assert_eq!(statuses, [200, 200, 429]);
    let refused = stat(R.1);
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.retry_after.as_deref(), Some("1"));
    assert!(
        refused.body.contains(":datalith.error/rate-limited"),
        "{}",
        refused.body
    );
    // Another token has its own rate.
    assert_eq!(stat("Bearer other-secret").status, 200);
}
