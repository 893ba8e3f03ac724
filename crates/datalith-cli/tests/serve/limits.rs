//! What protects the server: the body limit, the concurrency limit, the loopback rule; and
//! a graceful stop that finishes the running request and closes the databases.

use std::time::{Duration, Instant};

use crate::client::{send, try_send};
use crate::server;

const EDN: (&str, &str) = ("Content-Type", "application/edn");

/// The memory a query may hold on these servers: the slow query below reaches it in about
/// half a second (debug build), and its process stays within a few hundred MB.
const QUERY_MEMORY: &str = "200000000";

/// A query that runs until it holds `QUERY_MEMORY` (the sums of a cross product of 9M rows,
/// which no plan can skip), then stops with `:datalith.error/resource-exhausted` (504).
fn slow_query() -> String {
    r#"{:query "[:find (max ?s) . :where [(range 0 3000) [?x ...]] [(range 0 3000) [?y ...]] [(+ ?x ?y) ?s]]" :timeout 20000}"#.to_string()
}

#[test]
fn bodies_over_the_limit_and_requests_past_the_places_are_refused() {
    let s = server::start(
        &["people"],
        &[
            "--max-body-bytes",
            "1000",
            "--max-concurrent",
            "1",
            "--queue-timeout-ms",
            "100",
            "--query-memory-limit",
            QUERY_MEMORY,
        ],
    );
    let big = format!(
        r#"{{:query "[:find ?x :in [?x ...]]" :args [{}]}}"#,
        "1 ".repeat(1000)
    );
    let reply = send("POST", &s.url("/db/people/q"), &[EDN], Some(&big));
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(
        reply.body.contains(":datalith.error/body-too-large"),
        "{}",
        reply.body
    );
    // One place: while a slow query holds it, another request waits 100 ms, then gets 503.
    let url = s.url("/db/people/q");
    let slow = std::thread::spawn(move || send("POST", &url, &[EDN], Some(&slow_query())));
    let start = Instant::now();
    let mut refused = None;
    while start.elapsed() < Duration::from_secs(3) && refused.is_none() {
        let reply = send(
            "POST",
            &s.url("/db/people/q"),
            &[EDN],
            Some(r#"{:query "[:find ?x . :in ?x]" :args [1]}"#),
        );
        if reply.status == 503 {
            refused = Some(reply);
        }
    }
    let refused =
        refused.expect("a request past the one place is refused while the slow query runs");
    assert_eq!(refused.retry_after.as_deref(), Some("1"));
    assert!(
        refused.body.contains(":datalith.error/overloaded"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(":cognitect.anomalies/busy"),
        "{}",
        refused.body
    );
    let slow = slow.join().unwrap();
    assert_eq!(slow.status, 504, "{}", slow.body);
}

#[test]
fn a_query_whose_client_leaves_is_cancelled_and_frees_its_place() {
    // One place, a long wait for it, and room for the slow query to run for seconds.
    let s = server::start(
        &["people"],
        &[
            "--max-concurrent",
            "1",
            "--queue-timeout-ms",
            "10000",
            "--query-memory-limit",
            "2000000000",
        ],
    );
    let url = s.url("/db/people/q");
    let gave_up = try_send(
        Duration::from_millis(300),
        "POST",
        &url,
        &[EDN],
        Some(&slow_query()),
    );
    assert!(gave_up.is_err(), "the slow query answered within 300 ms");
    // Its query is stopped when the connection closes, so the next request gets the place
    // at once instead of after the slow query's seconds.
    let start = Instant::now();
    let reply = send(
        "POST",
        &url,
        &[EDN],
        Some(r#"{:query "[:find ?x . :in ?x]" :args [1]}"#),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn sigterm_finishes_the_running_request_then_closes_the_databases() {
    let dir = tempfile::tempdir().unwrap();
    let s = server::start_in(
        dir.path(),
        &["people"],
        &["--query-memory-limit", QUERY_MEMORY],
    )
    .unwrap();
    let schema = r#"{:tx-data "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"}"#;
    assert_eq!(
        send("POST", &s.url("/db/people/transact"), &[EDN], Some(schema)).status,
        200
    );
    assert_eq!(
        send(
            "POST",
            &s.url("/db/people/transact"),
            &[EDN],
            Some(r#"{:tx-data [{:n 7}]}"#)
        )
        .status,
        200
    );
    let url = s.url("/db/people/q");
    let running = std::thread::spawn(move || send("POST", &url, &[EDN], Some(&slow_query())));
    std::thread::sleep(Duration::from_millis(300));
    let (status, stderr) = s.stop();
    // The request that was running got its answer (its timeout), not a cut connection.
    let reply = running.join().unwrap();
    assert_eq!(reply.status, 504, "{}", reply.body);
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("databases closed"), "{stderr}");
    // Closed cleanly: another process opens it at once and finds the write.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args([
            "query",
            dir.path().join("people").to_str().unwrap(),
            "[:find ?n . :where [_ :n ?n]]",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "7");
}

#[test]
fn listening_beyond_loopback_needs_tokens_and_tls_or_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let tls = dir.path().join("tls");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args(["cert", "--out", tls.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(made.status.success());
    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let cases: &[(&[&str], &str)] = &[
        (&["--listen", "0.0.0.0:0"], "without --tokens"),
        (&["--listen", "0.0.0.0:0", "--insecure"], "without --tokens"),
        (
            &[
                "--listen",
                "0.0.0.0:0",
                "--tls-cert",
                cert,
                "--tls-key",
                key,
            ],
            "without --tokens",
        ),
        (&["--tls-cert", cert], "--tls-key"),
    ];
    for (args, want) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_datalith"))
            .arg("serve")
            .arg(dir.path().join("people"))
            .args(*args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_datalith"))
        .arg("serve")
        .arg(dir.path().join("people"))
        .args([
            "--listen",
            "0.0.0.0:0",
            "--tokens",
            tokens.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without TLS"), "{stderr}");
    assert!(stderr.contains("--tls-cert"), "{stderr}");
    assert!(stderr.contains("--insecure"), "{stderr}");
}

#[test]
fn past_the_connection_limit_the_idlest_connection_makes_room_and_slow_clients_are_cut_off() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let s = server::start(
        &["people"],
        &["--max-connections", "2", "--header-timeout-ms", "1500"],
    );
    let connect = || TcpStream::connect(s.addr()).unwrap();
    let health = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    // Two connections take both places: one idle, one sending its headers a piece at a time.
    let mut idle = connect();
    std::thread::sleep(Duration::from_millis(50));
    let mut slow = connect();
    slow.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
    // A third is served at once: the idle one, the idlest, is closed to make room.
    let start = Instant::now();
    let mut third = connect();
    third.write_all(health).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut answer = String::new();
    third.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        start.elapsed() < Duration::from_millis(1000),
        "{:?}",
        start.elapsed()
    );
    let mut buf = [0u8; 64];
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        idle.read(&mut buf).unwrap_or(0),
        0,
        "the idle one stayed open"
    );
    // The slow client is cut off by the header timeout (1.5 s), never answered.
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        slow.read(&mut buf).unwrap_or(0),
        0,
        "the slow client was answered"
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    let closed = send("GET", &s.url("/metrics"), &[], None).body;
    assert!(
        closed.contains("datalith_connections_closed_for_room_total 1"),
        "{closed}"
    );
}

#[test]
fn past_the_connection_limit_connections_running_requests_are_left_to_finish() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let s = server::start(
        &["people"],
        &[
            "--max-connections",
            "2",
            "--query-memory-limit",
            QUERY_MEMORY,
        ],
    );
    // Both places run a slow query (each ends with its memory limit, 504, after a while).
    let running: Vec<_> = (0..2)
        .map(|_| {
            let url = s.url("/db/people/q");
            std::thread::spawn(move || {
                let reply = send("POST", &url, &[EDN], Some(&slow_query()));
                (reply, Instant::now())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A third waits for a place instead of closing either.
    let mut third = TcpStream::connect(s.addr()).unwrap();
    third
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut answer = String::new();
    third.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let served = Instant::now();
    let mut first_end = None::<Instant>;
    for r in running {
        let (reply, ended) = r.join().unwrap();
        // Answered, not closed: the query's own end (its memory limit).
        assert_eq!(reply.status, 504, "{}", reply.body);
        assert!(
            reply.body.contains(":datalith.error/resource-exhausted"),
            "{}",
            reply.body
        );
        first_end = Some(first_end.map_or(ended, |f| f.min(ended)));
    }
    // The third came in only once one of them had ended (its client saw the end a moment
    // after the server freed the place).
    let first_end = first_end.unwrap();
    assert!(
        served + Duration::from_millis(100) >= first_end,
        "served {:?} before a running request ended",
        first_end.duration_since(served)
    );
}

#[test]
fn a_body_that_does_not_arrive_in_time_is_answered_408() {
    use std::io::{Read, Write};
    let s = server::start(&["people"], &["--body-timeout-ms", "300"]);
    let mut stream = std::net::TcpStream::connect(s.addr()).unwrap();
    stream
        .write_all(b"POST /db/people/q HTTP/1.1\r\nHost: x\r\nContent-Type: application/edn\r\nContent-Length: 100\r\n\r\n{:query")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let start = Instant::now();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains(":datalith.error/request-timeout"),
        "{answer}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_client_address_past_its_rate_is_told_to_wait() {
    let s = server::start(&["people"], &["--address-rate", "3"]);
    let get = |path: &str| send("GET", &s.url(path), &[], None);
    // A burst of three from 127.0.0.1, whatever the route, then refusals; /health is not
    // counted (probes never see 429).
    let cases: &[(&str, u16)] = &[
        // path, status
        ("/dbs", 200),
        ("/health", 200),
        ("/db/people/stat", 200),
        ("/no/such/route", 404),
        ("/dbs", 429),
        ("/db/people/stat", 429),
        ("/health", 200),
    ];
    let got: Vec<(&str, u16)> = cases.iter().map(|(p, _)| (*p, get(p).status)).collect();
    assert_eq!(got, cases);
    let refused = get("/dbs");
    assert_eq!(refused.status, 429);
    assert_eq!(refused.retry_after.as_deref(), Some("1"));
    for want in [
        ":datalith.error/rate-limited",
        ":cognitect.anomalies/busy",
        "address \\\"127.0.0.1\\\"",
        ":limited :address",
    ] {
        assert!(refused.body.contains(want), "{want}: {}", refused.body);
    }
    // A second later the bucket is full again.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(get("/dbs").status, 200);
    // The three refusals are counted, though no operation was read of them.
    let metrics = get("/metrics");
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .body
            .contains("\ndatalith_address_rate_refused_total 3\n"),
        "{}",
        metrics.body
    );
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_rate() {
    let via = |s: &server::Server, client: &str| {
        send("GET", &s.url("/dbs"), &[("X-Forwarded-For", client)], None).status
    };
    // 127.0.0.1 is the proxy here: each client it forwards counts alone.
    let s = server::start(
        &["people"],
        &["--address-rate", "2", "--trusted-proxy", "127.0.0.1"],
    );
    let got: Vec<u16> = ["203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.8"]
        .iter()
        .map(|c| via(&s, c))
        .collect();
    assert_eq!(got, [200, 200, 429, 200]);
    // A client's own entry before the proxy's does not buy it a new bucket.
    assert_eq!(via(&s, "198.51.100.1, 203.0.113.7"), 429);
    // Without --trusted-proxy the header is anyone's word: every request is 127.0.0.1's.
    let s = server::start(&["people"], &["--address-rate", "2"]);
    let got: Vec<u16> = ["203.0.113.7", "203.0.113.8", "203.0.113.9"]
        .iter()
        .map(|c| via(&s, c))
        .collect();
    assert_eq!(got, [200, 200, 429]);
}
