//! Files no bigger than they need to be (issue 57): an empty database is small, the log grows
//! with use and keeps what it holds across a reopen, and an update-only churn leaves the data
//! file proportional to its live data (`limits::LOG_CHECKPOINT_DATA_BYTES`).

use std::time::Duration;

use datalith::kv::wal::LOG_FILE;
use datalith::kv::{EnvOptions, Environment, KvOp, TableKind};
use datalith::{Database, DbOptions};

fn len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn an_empty_database_takes_under_a_megabyte() {
    let dir = tempfile::tempdir().unwrap();
    drop(Database::open(dir.path(), DbOptions::default()).unwrap());
    // (file, its length) for every file the database left
    let files: Vec<(String, u64)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().into_string().unwrap(), len(&e.path()))
        })
        .collect();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&LOG_FILE), "{files:?}");
    let total: u64 = files.iter().map(|(_, b)| b).sum();
    assert!(total < 1_000_000, "{total} bytes: {files:?}");
}

/// `n` puts of 4 KB values under keys `prefix{i}`, one acknowledged transaction each.
fn puts(env: &Environment, prefix: &str, n: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let t = env.table("t", TableKind::Plain).unwrap();
    (0..n)
        .map(|i| {
            let (k, v) = (format!("{prefix}{i:05}").into_bytes(), vec![i as u8; 4000]);
            env.transact_kv(vec![KvOp::put(&t, k.clone(), v.clone())])
                .unwrap();
            (k, v)
        })
        .collect()
}

fn missing(env: &Environment, written: &[(Vec<u8>, Vec<u8>)]) -> usize {
    let t = env.table("t", TableKind::Plain).unwrap();
    let txn = env.read().unwrap();
    let view = txn.view();
    written
        .iter()
        .filter(|(k, v)| view.get(&t, k).unwrap() != Some(&v[..]))
        .count()
}

#[test]
fn a_burst_grows_the_log_and_a_reopen_keeps_its_length_and_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(LOG_FILE);
    let mut o = EnvOptions::default();
    o.log_file_bytes = 4 << 20;
    // Only the ring's own needs move the checkpoint: the burst's records stay live.
    o.log_checkpoint_interval = Duration::from_secs(3600);
    o.log_checkpoint_bytes = u64::MAX;
    let env = Environment::open(dir.path(), o.clone()).unwrap();
    let created = len(&log);
    assert_eq!(env.log_bytes().unwrap(), Some(created));
    let mut written = puts(&env, "a", 300);
    let grown = len(&log);
    assert!(grown >= 4 * created, "{created} -> {grown}");
    assert_eq!(env.log_bytes().unwrap(), Some(grown));
    drop(env);

    let env = Environment::open(dir.path(), o).unwrap();
    assert_eq!(len(&log), grown, "a reopen keeps the grown length");
    assert_eq!(missing(&env, &written), 0);
    // The reopened log takes more than it holds, growing to its largest and wrapping.
    written.extend(puts(&env, "b", 1500));
    assert_eq!(len(&log), 4 << 20);
    drop(env);
    let env = Environment::open(dir.path(), EnvOptions::default()).unwrap();
    assert_eq!(missing(&env, &written), 0);
}

#[test]
fn an_update_only_churn_leaves_the_data_file_proportional() {
    // Each group is written into LMDB at once (as many LMDB commits as groups, each copying
    // the pages it touches), and checkpoints come only from the data file's growth: without
    // that trigger the file grows by every page copied until the ring fills (~64 MiB of log).
    let dir = tempfile::tempdir().unwrap();
    let mut o = EnvOptions::default();
    o.log_apply_delay = Duration::ZERO;
    o.log_checkpoint_interval = Duration::from_secs(3600);
    o.log_checkpoint_bytes = u64::MAX;
    let env = Environment::open(dir.path(), o).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let key = |i: u64| format!("key{:05}", (i * 7_919) % 5_000).into_bytes();
    // 5,000 keys of 100-byte values (~1 MB live), then 1,500 transactions of 100 updates.
    for chunk in 0..50u64 {
        let ops = (chunk * 100..chunk * 100 + 100)
            .map(|i| KvOp::put(&t, key(i), vec![0; 100]))
            .collect();
        env.transact_kv(ops).unwrap();
    }
    for round in 0..1_500u64 {
        let ops = (0..100)
            .map(|j| KvOp::put(&t, key(round * 37 + j * 50), vec![round as u8; 100]))
            .collect();
        env.transact_kv(ops).unwrap();
    }
    env.apply_logged().unwrap();
    let data = len(&dir.path().join("data.mdb"));
    assert!(data < 32 << 20, "the data file is {data} bytes");
    let free = env.free_pages().unwrap() * env.page_bytes().unwrap() as u64;
    assert!(free > 0 && free < data, "{free} bytes free of {data}");
}

/// Blobs are written once: a group of large values skips the log (the data file holds it,
/// made durable by a checkpoint before it is acknowledged), a group of small values is logged,
/// and both are there after a reopen.
#[test]
fn a_group_of_blobs_skips_the_log_and_a_group_of_small_values_does_not() {
    let dir = tempfile::tempdir().unwrap();
    // (name, values in the group, bytes each, whether the group is logged)
    let cases = [
        ("blobs: 100 of 10 KB", 100u32, 10_000usize, false),
        ("small values: 2,000 of 100 B", 2_000, 100, true),
        ("a few blobs, under half a MiB", 20, 10_000, true),
    ];
    let mut written = Vec::new();
    {
        let env = Environment::open(dir.path(), EnvOptions::default()).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        for (name, n, bytes, logged) in cases {
            let records = env.commit_counters().log_records;
            let ops: Vec<KvOp> = (0..n)
                .map(|i| {
                    let (k, v) = (format!("{name}/{i}").into_bytes(), vec![i as u8; bytes]);
                    written.push((k.clone(), v.clone()));
                    KvOp::put(&t, k, v)
                })
                .collect();
            env.transact_kv(ops).unwrap();
            let now = env.commit_counters().log_records;
            assert_eq!(
                now > records,
                logged,
                "{name}: log records {records} -> {now}"
            );
        }
    }
    let env = Environment::open(dir.path(), EnvOptions::default()).unwrap();
    assert_eq!(missing(&env, &written), 0);
}
