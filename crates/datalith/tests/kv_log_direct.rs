//! Log records of 4 KiB or more are written around the page cache in whole blocks
//! (`kv::wal::direct`): a record that starts inside a block rewrites the block's earlier bytes,
//! and its last block is padded with zeros where the bytes after it are dead. Here a ring small
//! enough to wrap many times takes records of 4-12 KiB (and small ones between, written
//! buffered), with checkpoints only when the ring is full, so that the write position keeps
//! meeting the needed records ahead of it. At several points the directory is copied as a
//! crash would leave it (the data file with the checkpoint's meta pages, the log as written)
//! and reopened: every acknowledged write must come back, and nothing else.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use datalith::kv::{EnvOptions, Environment, KvOp, TableKind};
use rand::{RngExt, SeedableRng};

#[path = "common/table.rs"]
mod table;
use table::table_contents;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> EnvOptions {
    let mut o = EnvOptions::default();
    o.log_file_bytes = 512 * 1024;
    o.log_initial_bytes = o.log_file_bytes;
    // Checkpoints only when the ring is full (the committer's own, between transactions), so
    // that a copy taken between transactions has one checkpoint throughout.
    o.log_checkpoint_interval = Duration::from_secs(3600);
    o.log_checkpoint_bytes = u64::MAX;
    o.log_checkpoint_freed_bytes = u64::MAX;
    // The applier lags, so a checkpoint (whose start is the end of the last applied record)
    // leaves needed records ahead of a write position that wrapped.
    o.log_apply_delay = Duration::from_millis(300);
    o
}

/// The directory as a crash that loses nothing unsynced leaves it: the files as they are.
/// The data file's meta pages are newer than the log's checkpoint (the applier's unsynced
/// commits): recovery puts the checkpoint's back and replays the records after it.
fn crash_copy(live: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["data.mdb", datalith::kv::wal::LOG_FILE] {
        std::fs::copy(live.join(name), dir.path().join(name)).unwrap();
    }
    dir
}

#[test]
fn records_written_in_whole_blocks_come_back_after_a_crash_in_a_ring_that_wraps() {
    for seed in 1..=3u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let live = tempfile::tempdir().unwrap();
        let env = Environment::open(live.path(), options()).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        let mut model = Model::new();
        let mut copies = Vec::new();
        let mut written = 0usize;
        for i in 0..600u32 {
            // Mostly records of 4-12 KiB (written direct), one in five small (buffered).
            let (ops, len) = match rng.random_bool(0.2) {
                true => (1, rng.random_range(10..200)),
                false => (rng.random_range(2..6), rng.random_range(1500..2500)),
            };
            let mut batch = Vec::new();
            for _ in 0..ops {
                let key = format!("k{:04}", rng.random_range(0..300)).into_bytes();
                let value = vec![rng.random::<u8>(); len];
                written += key.len() + value.len();
                batch.push(KvOp::put(&t, key.clone(), value.clone()));
                model.insert(key, value);
            }
            env.transact_kv(batch).unwrap();
            if i % 150 == 149 {
                env.apply_logged().unwrap();
                copies.push((crash_copy(live.path()), model.clone()));
            }
        }
        // The ring went round several times (each record is at least its values' bytes).
        assert!(
            written as u64 > 4 * options().log_file_bytes,
            "seed {seed}: {written} bytes"
        );
        drop(env);
        for (n, (dir, expected)) in copies.iter().enumerate() {
            let reopened = Environment::open(dir.path(), EnvOptions::default())
                .unwrap_or_else(|e| panic!("seed {seed}, copy {n}: reopen: {e}"));
            let t = reopened.table("t", TableKind::Plain).unwrap();
            let found = table_contents(&reopened, &t);
            assert!(
                &found == expected,
                "seed {seed}, copy {n}: {} keys found, {} expected",
                found.len(),
                expected.len()
            );
        }
    }
}
