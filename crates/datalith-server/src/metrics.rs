//! What `GET /metrics` shows, in Prometheus's text format: requests by operation and status,
//! their latencies as a histogram, the requests running and the connections open, and per
//! database its basis, file and log sizes, leased values, the age of the oldest open
//! snapshot (a snapshot held long keeps LMDB from reusing pages), and the committer's
//! counters (`Environment::commit_counters`: commits, the write requests grouped in them,
//! the largest group, map growths, log records and bytes).
//!
//! Counting takes one short lock a request: cheap beside the request itself, and simpler
//! than per-label atomics while the labels are few.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::open_connections::OpenConnections;
use crate::served::Served;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 15] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    10.0,
];

#[derive(Default)]
struct Latency {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The server's counters.
#[derive(Default)]
pub struct Metrics {
    /// Answers by (operation, status).
    answers: Mutex<BTreeMap<(&'static str, u16), u64>>,
    latency: Mutex<BTreeMap<&'static str, Latency>>,
    /// Connections open now.
    pub connections: AtomicI64,
    /// Connections closed because a write waited `--send-timeout-ms` for the client.
    pub send_timeouts: Arc<AtomicU64>,
    /// The open connections, and how many were asked to close to make room.
    pub open_connections: Arc<OpenConnections>,
    /// Sources (the certificate, the tokens) a SIGHUP read again and put in use.
    pub reloads: AtomicU64,
    /// ... and those it kept, because their files did not read cleanly.
    pub reload_failures: AtomicU64,
    /// Requests refused by `--address-rate`, before an operation was known (so not in
    /// `datalith_requests_total`).
    pub address_rate_refusals: AtomicU64,
}

impl Metrics {
    /// Counts one answer of `op` with `status`, which took `took`.
    pub fn record(&self, op: &'static str, status: u16, took: Duration) {
        let seconds = took.as_secs_f64();
        {
            let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
            *answers.entry((op, status)).or_default() += 1;
        }
        let mut latency = self.latency.lock().unwrap_or_else(|p| p.into_inner());
        let l = latency.entry(op).or_default();
        l.count += 1;
        l.sum += seconds;
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                l.buckets[i] += 1;
            }
        }
    }

    /// The text `/metrics` answers with.
    pub fn render(&self, served: &Served, running: usize) -> String {
        let mut out = String::new();
        family(
            &mut out,
            "datalith_requests_total",
            "counter",
            "Requests answered, by operation and HTTP status.",
        );
        let answers = self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for ((op, status), n) in &answers {
            let _ = writeln!(
                out,
                "datalith_requests_total{{op=\"{op}\",status=\"{status}\"}} {n}"
            );
        }
        family(
            &mut out,
            "datalith_request_seconds",
            "histogram",
            "Time from a request's arrival to its answer, by operation.",
        );
        {
            let latency = self.latency.lock().unwrap_or_else(|p| p.into_inner());
            for (op, l) in latency.iter() {
                for (bound, n) in BUCKETS.iter().zip(l.buckets) {
                    let _ = writeln!(
                        out,
                        "datalith_request_seconds_bucket{{op=\"{op}\",le=\"{bound}\"}} {n}"
                    );
                }
                let _ = writeln!(
                    out,
                    "datalith_request_seconds_bucket{{op=\"{op}\",le=\"+Inf\"}} {}\n\
                     datalith_request_seconds_sum{{op=\"{op}\"}} {}\n\
                     datalith_request_seconds_count{{op=\"{op}\"}} {}",
                    l.count, l.sum, l.count
                );
            }
        }
        family(
            &mut out,
            "datalith_requests_running",
            "gauge",
            "Requests holding one of the --max-concurrent places.",
        );
        let _ = writeln!(out, "datalith_requests_running {running}");
        let connections = [
            (
                "datalith_connections_open",
                "gauge",
                "Connections open.",
                self.connections.load(Ordering::Relaxed),
            ),
            (
                "datalith_send_timeouts_total",
                "counter",
                "Connections closed because the client took none of an answer for \
                 --send-timeout-ms.",
                self.send_timeouts.load(Ordering::Relaxed) as i64,
            ),
            (
                "datalith_connections_closed_for_room_total",
                "counter",
                "Idle connections asked to close because every --max-connections place was taken.",
                self.open_connections
                    .closed_for_room
                    .load(Ordering::Relaxed) as i64,
            ),
            (
                "datalith_reloads_total",
                "counter",
                "The certificate or the tokens read again on SIGHUP and put in use.",
                self.reloads.load(Ordering::Relaxed) as i64,
            ),
            (
                "datalith_reload_failures_total",
                "counter",
                "The certificate or the tokens kept on SIGHUP: their files did not read cleanly.",
                self.reload_failures.load(Ordering::Relaxed) as i64,
            ),
            (
                "datalith_address_rate_refused_total",
                "counter",
                "Requests refused with 429 by --address-rate, before their operation was read.",
                self.address_rate_refusals.load(Ordering::Relaxed) as i64,
            ),
        ];
        for (name, kind, help, value) in connections {
            family(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        database_gauges(&mut out, served);
        out
    }
}

/// A metric family's header.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// One family per property, a sample per database.
fn database_gauges(out: &mut String, served: &Served) {
    type Read = fn(&crate::ops::Source) -> Option<f64>;
    let gauges: [(&str, &str, &str, Read); 14] = [
        (
            "datalith_basis_t",
            "gauge",
            "The id of the latest transaction.",
            |s| s.latest().ok()?.basis_t().ok().map(|b| b as f64),
        ),
        (
            "datalith_file_bytes",
            "gauge",
            "The data file's size.",
            |s| {
                let path = s.database.env().path().join("data.mdb");
                std::fs::metadata(path).ok().map(|m| m.len() as f64)
            },
        ),
        (
            "datalith_log_bytes",
            "gauge",
            "The write-ahead log's length now (it shrinks at each checkpoint).",
            |s| {
                s.database
                    .env()
                    .log_bytes()
                    .ok()
                    .flatten()
                    .map(|b| b as f64)
            },
        ),
        (
            "datalith_free_pages",
            "gauge",
            "Pages LMDB freed, to be reused.",
            |s| s.database.env().free_pages().ok().map(|p| p as f64),
        ),
        (
            "datalith_leases",
            "gauge",
            "Database values kept for :basis-t.",
            |s| Some(s.leases.count() as f64),
        ),
        (
            "datalith_oldest_snapshot_seconds",
            "gauge",
            "Age of the oldest snapshot open in the server (0: none).",
            |s| {
                Some(
                    s.database
                        .env()
                        .oldest_snapshot()
                        .map_or(0.0, |o| o.age.as_secs_f64()),
                )
            },
        ),
        (
            "datalith_commits_total",
            "counter",
            "Commits of the data file since the server opened it (one sync each when durable): \
             groups of write requests.",
            |s| Some(s.database.env().commit_counters().batches as f64),
        ),
        (
            "datalith_commit_requests_total",
            "counter",
            "Write requests applied or refused in those commits.",
            |s| Some(s.database.env().commit_counters().requests as f64),
        ),
        (
            "datalith_commit_largest_group",
            "gauge",
            "The most write requests one commit held so far.",
            |s| Some(s.database.env().commit_counters().largest_batch as f64),
        ),
        (
            "datalith_commit_direct_total",
            "counter",
            "Commits the committer wrote into the data file itself instead of leaving them to \
             its LMDB writer (large groups after a read met waiting writes, bulk loads).",
            |s| Some(s.database.env().commit_counters().direct_batches as f64),
        ),
        (
            "datalith_map_growths_total",
            "counter",
            "Times the memory map was grown.",
            |s| Some(s.database.env().commit_counters().map_growths as f64),
        ),
        (
            "datalith_log_records_total",
            "counter",
            "Groups written to the write-ahead log.",
            |s| Some(s.database.env().commit_counters().log_records as f64),
        ),
        (
            "datalith_log_written_bytes_total",
            "counter",
            "Bytes written to the write-ahead log, headers included.",
            |s| Some(s.database.env().commit_counters().log_bytes as f64),
        ),
        (
            "datalith_log_sync_seconds_total",
            "counter",
            "Time spent syncing those records (one sync a record): over datalith_log_records_total, the mean sync.",
            |s| Some(s.database.env().commit_counters().log_sync_nanos as f64 / 1e9),
        ),
    ];
    let names = served.names();
    for (name, kind, help, read) in gauges {
        family(out, name, kind, help);
        for db in &names {
            let Some(source) = served.get(db) else {
                continue;
            };
            if let Some(v) = read(&source) {
                let _ = writeln!(out, "{name}{{db=\"{db}\"}} {v}");
            }
        }
    }
    sync_histogram(out, served, &names);
}

/// `datalith_log_sync_seconds`: the syncs of each database's write-ahead log by how long each
/// took (the device's share of a durable commit, and its spread).
fn sync_histogram(out: &mut String, served: &Served, names: &[String]) {
    family(
        out,
        "datalith_log_sync_seconds",
        "histogram",
        "Syncs of the write-ahead log (one a group written) by how long each took.",
    );
    for db in names {
        let Some(source) = served.get(db) else {
            continue;
        };
        let counters = source.database.env().commit_counters();
        let mut below = 0;
        for (bound, n) in datalith::kv::LOG_SYNC_BUCKET_NANOS
            .iter()
            .zip(counters.log_sync_buckets)
        {
            below += n;
            let _ = writeln!(
                out,
                "datalith_log_sync_seconds_bucket{{db=\"{db}\",le=\"{}\"}} {below}",
                *bound as f64 / 1e9
            );
        }
        let count: u64 = counters.log_sync_buckets.iter().sum();
        let _ = writeln!(
            out,
            "datalith_log_sync_seconds_bucket{{db=\"{db}\",le=\"+Inf\"}} {count}\n\
             datalith_log_sync_seconds_sum{{db=\"{db}\"}} {}\n\
             datalith_log_sync_seconds_count{{db=\"{db}\"}} {count}",
            counters.log_sync_nanos as f64 / 1e9
        );
    }
}
