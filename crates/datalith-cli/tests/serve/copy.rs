//! `GET /db/NAME/copy` and `datalith copy --connect URL NAME DIR`: a consistent copy of a
//! served database taken over the network, for the admin role only; the copy opens with the
//! server's datoms, a cut-off copy is never taken for a whole one, and a client that leaves
//! midway leaves the server serving.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::client::send;
use crate::server;

const EDN: (&str, &str) = ("Content-Type", "application/edn");

fn copy_cli(url: &str, token: &str, name: &str, dst: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args(["copy", "--connect", url, name])
        .arg(dst)
        .env("DATALITH_TOKEN", token)
        .output()
        .unwrap()
}

fn count_names(db: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_datalith"))
        .arg("query")
        .arg(db)
        .arg("[:find (count ?e) . :where [?e :person/name]]")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn admins_copy_a_served_database_over_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "root admin * {}\nreader read people {}\n",
            crate::auth::sha256_hex("admin-secret"),
            crate::auth::sha256_hex("reader-secret"),
        ),
    )
    .unwrap();
    let s = server::start_in(
        dir.path(),
        &["people"],
        // One place to run: a copy that kept its place after its client left would stall
        // every later request.
        &[
            "--tokens",
            tokens.to_str().unwrap(),
            "--max-concurrent",
            "1",
            "--queue-timeout-ms",
            "20000",
            "--log-requests",
        ],
    )
    .expect("starts");
    let admin = ("Authorization", "Bearer admin-secret");
    let schema = r#"{:tx-data "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}]"}"#;
    assert_eq!(
        send(
            "POST",
            &s.url("/db/people/transact"),
            &[EDN, admin],
            Some(schema)
        )
        .status,
        200
    );
    // More pages than the loopback socket's buffers hold, so a client that leaves is noticed
    // while LMDB still writes.
    for batch in 0..80 {
        let people: Vec<String> = (0..500)
            .map(|i| format!(r#"{{:person/name "p{batch}-{i}"}}"#))
            .collect();
        let body = format!("{{:tx-data [{}]}}", people.join(" "));
        let r = send(
            "POST",
            &s.url("/db/people/transact"),
            &[EDN, admin],
            Some(&body),
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let url = s.url("");
    let url = url.trim_end_matches('/');

    // The admin's copy opens with the server's datoms, and checks.
    let dst = dir.path().join("copied");
    let out = copy_cli(url, "admin-secret", "people", &dst);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("checked"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(count_names(&dst), "40000");

    // Refusals, each with its category, leaving nothing behind.
    let cases: [(&str, &str, &str, &str); 4] = [
        (
            "reader-secret",
            "people",
            "by-reader",
            ":datalith.error/forbidden",
        ),
        (
            "wrong-secret",
            "people",
            "by-stranger",
            ":datalith.error/unauthorized",
        ),
        (
            "admin-secret",
            "nobody",
            "of-nobody",
            ":datalith.error/unknown-database",
        ),
        (
            "admin-secret",
            "people",
            "copied",
            "already holds a database",
        ),
    ];
    for (token, name, into, error) in cases {
        let dst = dir.path().join(into);
        let out = copy_cli(url, token, name, &dst);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{token} {name}: copied");
        assert!(stderr.contains(error), "{token} {name}: {stderr}");
        if into != "copied" {
            assert!(!dst.exists(), "{token} {name}: {} was left", dst.display());
        }
    }

    // A client that reads the head and a little of the body, then leaves: the server goes on
    // serving, and a later copy is whole.
    for _ in 0..3 {
        let mut stream = std::net::TcpStream::connect(s.addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET /db/people/copy HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-secret\r\n\r\n"
        )
        .unwrap();
        let mut some = [0u8; 4096];
        let n = stream.read(&mut some).unwrap();
        assert!(
            String::from_utf8_lossy(&some[..n]).starts_with("HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&some[..n])
        );
    }
    let again = dir.path().join("again");
    let out = copy_cli(url, "admin-secret", "people", &again);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(count_names(&again), "40000");
    let r = send(
        "POST",
        &s.url("/db/people/transact"),
        &[EDN, admin],
        Some(r#"{:tx-data [{:person/name "after"}]}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);

    // Each copy asked for is in the request log, with its status and token.
    let (_, log) = s.stop();
    let copies: Vec<&str> = log.lines().filter(|l| l.contains(":op :copy")).collect();
    assert!(
        copies
            .iter()
            .any(|l| l.contains(":status 200") && l.contains(r#":token "root""#)),
        "{log}"
    );
    assert!(copies.iter().any(|l| l.contains(":status 403")), "{log}");
}
