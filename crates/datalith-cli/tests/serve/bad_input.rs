//! Bad input of every kind gets a clear error (a 4xx with an error body), never a cut
//! connection, and the server keeps serving.

use crate::client::{raw, send};
use crate::server;

#[test]
fn bad_bodies_get_clear_errors_and_the_server_keeps_serving() {
    let s = server::start(&["people"], &[]);
    let deep_edn = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_json = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    // Clauses nested as deep as the reader goes (a 2 MiB stack held ~60 levels of the
    // executor in a debug build: the server aborted), and rules calling rules 1,000 deep.
    let deep_or = format!(
        "{{:query \"[:find ?e :where [?e :db/ident] {}[?e :db/ident :db/doc]{}]\"}}",
        "(or ".repeat(250),
        ")".repeat(250)
    );
    let rule_chain: Vec<String> = (0..1000)
        .map(|i| format!("[(r{i} ?e) (r{} ?e)]", i + 1))
        .chain(["[(r1000 ?e) [?e :db/ident :db/doc]]".to_string()])
        .collect();
    let rule_chain = format!(
        "{{:query \"[:find ?e :in $ % :where (r0 ?e)]\" :args [[{}]]}}",
        rule_chain.join(" ")
    );
    let cases: Vec<(&str, &str, String, u16, &str)> = vec![
        // (path, content type, body, status, error code)
        (
            "/db/people/q",
            "application/edn",
            String::new(),
            400,
            "missing field :query",
        ),
        (
            "/db/people/q",
            "application/edn",
            "{:query".into(),
            400,
            ":datalith.error/invalid-edn",
        ),
        (
            "/db/people/q",
            "application/edn",
            deep_edn,
            400,
            ":datalith.error/invalid-edn",
        ),
        (
            "/db/people/q",
            "application/json",
            deep_json,
            400,
            ":datalith.error/invalid-json",
        ),
        (
            "/db/people/q",
            "application/edn",
            deep_or,
            400,
            "clauses nested deeper than 64",
        ),
        (
            "/db/people/q",
            "application/edn",
            rule_chain,
            400,
            "rules nested too deeply",
        ),
        (
            "/db/people/q",
            "application/json",
            "[1, 2]".into(),
            400,
            "must be a map",
        ),
        (
            "/db/people/q",
            "application/json",
            r#"{"query": 42}"#.into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/q",
            "application/edn",
            "{:query \"[:find ?x :in ?x]\" :args [99999999999999999999999999999999999999999999]}"
                .into(),
            400,
            ":datalith.error/invalid-edn",
        ),
        (
            "/db/people/q",
            "application/edn",
            r#"{:query "[:find ?x :where [?x :a] [(re-find #\"(a+)+\\1\" ?x)]]"}"#.into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/transact",
            "application/edn",
            "{:tx-data 42}".into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/transact",
            "application/edn",
            r#"{:tx-data "[[:db/add]]"}"#.into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/pull",
            "application/edn",
            r#"{:selector "[:a" :eid 1}"#.into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/pull",
            "application/edn",
            r#"{:selector "[*]" :eid "not an entity"}"#.into(),
            400,
            ":cognitect.anomalies/incorrect",
        ),
        (
            "/db/people/datoms",
            "application/edn",
            "{:index :eavt :components [1 2 3 4]}".into(),
            400,
            "at most 3",
        ),
        (
            "/db/people/datoms",
            "application/edn",
            "{:index :avet :limit 100000000}".into(),
            400,
            "most a page holds",
        ),
        (
            "/db/people/tx-range",
            "application/edn",
            "{:start -5}".into(),
            400,
            "non-negative",
        ),
        (
            "/db/%2e%2e/q",
            "application/edn",
            "{}".into(),
            404,
            ":datalith.error/unknown-database",
        ),
    ];
    let mut failures = Vec::new();
    for (path, ct, body, status, code) in &cases {
        let reply = send("POST", &s.url(path), &[("Content-Type", ct)], Some(body));
        let short: String = body.chars().take(60).collect();
        if reply.status != *status || !reply.body.contains(code) {
            failures.push(format!("{path} {short}: {} {}", reply.status, reply.body));
        }
    }
    let post_cbor = |body: &[u8]| {
        crate::client::try_send_bytes(
            std::time::Duration::from_secs(60),
            "POST",
            &s.url("/db/people/q"),
            &[
                ("Content-Type", "application/cbor"),
                ("Accept", "application/edn"),
            ],
            Some(body),
        )
        .unwrap()
    };
    // CBOR bodies: cut short, a length past the body, bytes after the value, nested past
    // the limit, a map repeating a key, a map of fields whose value is no query.
    let cbor_cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0xa1], "1 entries counted, 0 bytes left"),
        (vec![0x82, 0x01, 0x19], "the bytes end inside a value"),
        (
            vec![0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            "bytes left",
        ),
        (vec![0x01, 0x01], "bytes after the value"),
        (vec![0x81; 600], "nested deeper than 512"),
        (
            vec![0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02],
            "repeats its key",
        ),
        (vec![0xff], "a break outside"),
    ];
    for (body, message) in &cbor_cases {
        let reply = post_cbor(body);
        let ok = reply.status == 400
            && reply.body.contains(":datalith.error/invalid-cbor")
            && reply.body.contains(message);
        if !ok {
            failures.push(format!(
                "CBOR {:02x?}: {} {}",
                &body[..body.len().min(8)],
                reply.status,
                reply.body
            ));
        }
    }
    // A CBOR map of fields whose query is a number: the operation's own error.
    let reply = post_cbor(&[0xa1, 0x65, b'q', b'u', b'e', b'r', b'y', 0x18, 42]);
    if reply.status != 400 || !reply.body.contains(":cognitect.anomalies/incorrect") {
        failures.push(format!("CBOR query 42: {} {}", reply.status, reply.body));
    }
    // Bytes that are not UTF-8, in an EDN body.
    let mut request = b"POST /db/people/q HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/edn\r\nContent-Length: 2\r\n\r\n".to_vec();
    request.extend_from_slice(&[0xff, 0xfe]);
    let (status, text) = raw(&s.addr(), &request);
    if status != 400 || !text.contains("not UTF-8") {
        failures.push(format!("non-UTF-8: {text}"));
    }
    // A request line that is not HTTP.
    let (status, _) = raw(&s.addr(), "HELLO\r\n\r\n");
    if status != 400 && status != 0 {
        failures.push(format!("not HTTP: {status}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Still serving.
    assert_eq!(send("GET", &s.url("/health"), &[], None).status, 200);
}
