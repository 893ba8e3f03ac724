//! `/metrics` follows the database: commits and their requests, log records and bytes, file
//! size, and the age of the oldest snapshot a lease holds.

use std::time::Duration;

use crate::client::send;
use crate::server;

const EDN: (&str, &str) = ("Content-Type", "application/edn");

/// The value of the sample `name{db="people"}`.
fn sample(text: &str, name: &str) -> f64 {
    let prefix = format!("{name}{{db=\"people\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
}

fn metrics(s: &server::Server) -> String {
    let reply = send("GET", &s.url("/metrics"), &[], None);
    assert_eq!(reply.status, 200);
    reply.body
}

#[test]
fn metrics_count_commits_log_and_snapshot_age() {
    let s = server::start(&["people"], &[]);
    let names = [
        "datalith_commits_total",
        "datalith_commit_requests_total",
        "datalith_commit_largest_group",
        "datalith_log_records_total",
        "datalith_log_written_bytes_total",
        "datalith_log_sync_seconds_total",
        "datalith_file_bytes",
    ];
    let before: Vec<f64> = names.iter().map(|n| sample(&metrics(&s), n)).collect();
    let schema = r#"{:tx-data "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"}"#;
    assert_eq!(
        send("POST", &s.url("/db/people/transact"), &[EDN], Some(schema)).status,
        200
    );
    for i in 0..5 {
        let tx = format!("{{:tx-data [{{:n {i}}}]}}");
        assert_eq!(
            send("POST", &s.url("/db/people/transact"), &[EDN], Some(&tx)).status,
            200
        );
    }
    // A leased value is an open snapshot: its age shows.
    let lease = r#"{:query "[:find ?x . :in ?x]" :args [1] :lease-ms 30000}"#;
    assert_eq!(
        send("POST", &s.url("/db/people/q"), &[EDN], Some(lease)).status,
        200
    );
    std::thread::sleep(Duration::from_millis(1200));
    let text = metrics(&s);
    let after: Vec<f64> = names.iter().map(|n| sample(&text, n)).collect();
    let cases: &[(&str, f64)] = &[
        // metric, at least this much more than before six transactions (one at a time, so
        // each is its own commit with its own log record)
        ("datalith_commits_total", 6.0),
        ("datalith_commit_requests_total", 6.0),
        ("datalith_log_records_total", 6.0),
        ("datalith_log_written_bytes_total", 6.0 * 16.0),
        // six syncs of a real file: at least a microsecond each
        ("datalith_log_sync_seconds_total", 6.0 * 1e-6),
    ];
    for (name, more) in cases {
        let i = names.iter().position(|n| n == name).unwrap();
        assert!(
            after[i] - before[i] >= *more,
            "{name}: {} then {}",
            before[i],
            after[i]
        );
    }
    assert!(
        sample(&text, "datalith_commit_largest_group") >= 1.0,
        "{text}"
    );
    // Small transactions one at a time: each left to the LMDB writer.
    assert_eq!(sample(&text, "datalith_commit_direct_total"), 0.0, "{text}");
    assert!(sample(&text, "datalith_file_bytes") > 0.0, "{text}");
    let age = sample(&text, "datalith_oldest_snapshot_seconds");
    assert!((1.0..30.0).contains(&age), "{age}");
    assert_eq!(sample(&text, "datalith_leases"), 1.0);
    assert!(
        text.contains("# TYPE datalith_commits_total counter"),
        "{text}"
    );
    // The syncs as a histogram: one a log record, the buckets cumulative up to the count,
    // the sum the counter's.
    assert!(
        text.contains("# TYPE datalith_log_sync_seconds histogram"),
        "{text}"
    );
    let buckets: Vec<(String, f64)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("datalith_log_sync_seconds_bucket{db=\"people\",le=\""))
        .map(|l| {
            let (le, n) = l.split_once("\"} ").unwrap();
            (le.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(buckets.len(), 12, "{text}");
    assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{buckets:?}");
    let count = sample(&text, "datalith_log_sync_seconds_count");
    assert_eq!(buckets.last().unwrap(), &("+Inf".to_string(), count));
    assert_eq!(count, sample(&text, "datalith_log_records_total"), "{text}");
    assert_eq!(
        sample(&text, "datalith_log_sync_seconds_sum"),
        sample(&text, "datalith_log_sync_seconds_total")
    );
}
