//! A simulated power cut: every write not yet synced is dropped, in the log and in the data
//! file alike, then the environment is reopened. LMDB's commit point is its two meta pages, so
//! the data file "as the disk holds it" is: the current file (the page cache, every unsynced
//! page write included), with the meta pages as they were when the last checkpoint's sync
//! returned, and (variants) a random share of the pages written since rolled back to their
//! content at the checkpoint. The log holds only synced records (the writes below are all
//! acknowledged, so synced). Expected: every acknowledged write present, nothing else, and the
//! file's structure clean. Without the checkpointer's reader, unsynced commits overwrite pages
//! of the checkpoint and the same cut finds the damage.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use datalith::admin;
use datalith::kv::Verify;
use datalith::kv::{EnvOptions, Environment, KvOp, Table, TableKind};
use rand::{Rng, RngExt, SeedableRng};

#[path = "common/table.rs"]
mod table;

const PAGE: usize = 4096;
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options(guard_pages: bool) -> EnvOptions {
    options_applying(guard_pages, Duration::ZERO)
}

/// With LMDB written `delay` after a group: zero gives as many unsynced LMDB commits as
/// groups, each able to reuse pages; the default gathers groups into fewer commits.
fn options_applying(guard_pages: bool, delay: Duration) -> EnvOptions {
    let mut o = EnvOptions::default();
    o.log_apply_delay = delay;
    // Only the test's own checkpoints: the cut must know which one was the last. A log that
    // grows may have to wait for one before it does (`a_log_that_grew_...` covers that).
    o.log_checkpoint_interval = std::time::Duration::from_secs(3600);
    o.log_checkpoint_bytes = u64::MAX;
    o.log_checkpoint_freed_bytes = u64::MAX;
    o.log_initial_bytes = o.log_file_bytes;
    o.log_guard_pages = guard_pages;
    o
}

fn value(rng: &mut impl Rng) -> Vec<u8> {
    let len = rng.random_range(100..900);
    let b: u8 = rng.random();
    vec![b; len]
}

/// Random acknowledged transactions on `t`, mirrored in `model`.
fn write(env: &Environment, t: &Table, model: &mut Model, txns: usize, rng: &mut impl Rng) {
    for _ in 0..txns {
        let mut ops = Vec::new();
        for _ in 0..12 {
            let key = format!("k{:05}", rng.random_range(0..400)).into_bytes();
            if rng.random_bool(0.15) {
                ops.push(KvOp::delete(t, key.clone()));
                model.remove(&key);
            } else {
                let v = value(rng);
                ops.push(KvOp::put(t, key.clone(), v.clone()));
                model.insert(key, v);
            }
        }
        env.transact_kv(ops).unwrap();
    }
}

fn contents(env: &Environment, t: &Table) -> Model {
    table::table_contents(env, t)
}

/// A live environment (`options(true)`) holding `txns` random transactions, checkpointed: its
/// directory, the environment, its table, the model, and the data file at the checkpoint.
fn checkpointed(
    txns: usize,
    rng: &mut impl Rng,
) -> (tempfile::TempDir, Environment, Table, Model, Vec<u8>) {
    let live = tempfile::tempdir().unwrap();
    let env = Environment::open(live.path(), options(true)).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    write(&env, &t, &mut model, txns, rng);
    env.checkpoint().unwrap();
    let at_checkpoint = std::fs::read(live.path().join("data.mdb")).unwrap();
    (live, env, t, model, at_checkpoint)
}

/// Puts `value(i)` at `key(i)` for each `i` of `0..n`, one acknowledged transaction each.
fn put_each(
    env: &Environment,
    t: &Table,
    model: &mut Model,
    n: u32,
    key: impl Fn(u32) -> Vec<u8>,
    mut value: impl FnMut(u32) -> Vec<u8>,
) {
    for i in 0..n {
        let (k, v) = (key(i), value(i));
        env.transact_kv(vec![KvOp::put(t, k.clone(), v.clone())])
            .unwrap();
        model.insert(k, v);
    }
}

/// The directory as the disk would hold it after the cut: see the module doc.
fn cut(live: &Path, at_checkpoint: &[u8], revert_share: f64, seed: u64) -> tempfile::TempDir {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut disk = std::fs::read(live.join("data.mdb")).unwrap();
    disk[..2 * PAGE].copy_from_slice(&at_checkpoint[..2 * PAGE]);
    for start in (2 * PAGE..disk.len()).step_by(PAGE) {
        let end = (start + PAGE).min(disk.len());
        let old = at_checkpoint.get(start..end);
        if old != Some(&disk[start..end]) && rng.random_bool(revert_share) {
            match old {
                Some(old) => disk[start..end].copy_from_slice(old),
                None => disk[start..end].fill(0),
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.mdb"), disk).unwrap();
    std::fs::copy(
        live.join(datalith::kv::wal::LOG_FILE),
        dir.path().join(datalith::kv::wal::LOG_FILE),
    )
    .unwrap();
    dir
}

/// Writes, checkpoints, writes more (acknowledged, unsynced in the data file), cuts the power
/// with `revert_share` of the unsynced pages lost, and reopens. `Ok` when the reopened store
/// holds exactly the model and its structure is clean; otherwise what went wrong.
fn cut_and_reopen(guard_pages: bool, revert_share: f64, seed: u64) -> Result<(), String> {
    cut_and_reopen_applying(guard_pages, Duration::ZERO, revert_share, seed)
}

fn cut_and_reopen_applying(
    guard_pages: bool,
    delay: Duration,
    revert_share: f64,
    seed: u64,
) -> Result<(), String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let live = tempfile::tempdir().unwrap();
    let env = Environment::open(live.path(), options_applying(guard_pages, delay)).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    write(&env, &t, &mut model, 60, &mut rng);
    env.checkpoint().unwrap();
    let at_checkpoint = std::fs::read(live.path().join("data.mdb")).unwrap();
    write(&env, &t, &mut model, 60, &mut rng);
    // Every group in LMDB (unsynced) before the cut, as the applier would have done soon.
    env.apply_logged().unwrap();
    let disk = cut(live.path(), &at_checkpoint, revert_share, seed);
    // The file as the cut left it, walked by the project's own checker before LMDB reads it:
    // a tree whose pages were recycled can send LMDB's own walk into an assertion, which
    // aborts the process (seen in CI: `IS_LEAF(mp)` in `mdb_cursor_next`), not an error.
    admin::check_structure(&disk.path().join("data.mdb"), Verify::Everything)
        .map_err(|e| format!("check before reopening: {e}"))?;
    let reopened = Environment::open(disk.path(), EnvOptions::default())
        .map_err(|e| format!("reopen: {e}"))?;
    let t = reopened
        .table("t", TableKind::Plain)
        .map_err(|e| format!("table: {e}"))?;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| contents(&reopened, &t)))
        .map_err(|_| "reading the reopened store failed".to_string())?;
    drop(reopened);
    if found != model {
        return Err(format!(
            "{} keys found, {} expected; first difference at {:?}",
            found.len(),
            model.len(),
            found
                .iter()
                .zip(&model)
                .find(|(a, b)| a != b)
                .map(|(a, _)| String::from_utf8_lossy(a.0).into_owned())
        ));
    }
    admin::check_structure(&disk.path().join("data.mdb"), Verify::Everything)
        .map_err(|e| format!("check: {e}"))?;
    Ok(())
}

#[test]
fn a_power_cut_keeps_every_acknowledged_write_and_nothing_else() {
    // (share of the unsynced page writes lost at the cut, seed)
    let cases = [
        (0.0, 1),
        (0.0, 2),
        (0.5, 3),
        (0.5, 4),
        (0.1, 5),
        (0.9, 6),
        (1.0, 7),
    ];
    let gathered = EnvOptions::default().log_apply_delay;
    for delay in [Duration::ZERO, gathered] {
        for (share, seed) in cases {
            assert_eq!(
                cut_and_reopen_applying(true, delay, share, seed),
                Ok(()),
                "LMDB written {delay:?} after a group, revert share {share}, seed {seed}"
            );
        }
    }
}

#[test]
fn without_the_page_guard_the_same_cut_finds_damage() {
    // Unsynced commits then reuse pages of the checkpointed tree: restoring the checkpoint's
    // meta pages points at overwritten pages. At least one of the cuts must notice.
    let failures = [(0.0, 1), (0.0, 2), (0.5, 3), (0.1, 5)]
        .into_iter()
        .filter(|&(share, seed)| cut_and_reopen(false, share, seed).is_err())
        .count();
    assert!(failures > 0, "no cut noticed the recycled pages");
}

#[test]
fn a_log_that_wrapped_many_times_replays_across_the_wrap() {
    // (checkpoint trigger in log bytes, of a ring of about 1 MiB): only when the ring is full
    // (the committer's own checkpoints), and often (the background checkpointer's).
    for (trigger, interval_ms) in [(u64::MAX, 3_600_000), (256 << 10, 20)] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(trigger);
        let live = tempfile::tempdir().unwrap();
        let mut o = options(true);
        o.log_file_bytes = 1 << 20;
        o.log_checkpoint_bytes = trigger;
        o.log_checkpoint_interval = std::time::Duration::from_millis(interval_ms);
        let env = Environment::open(live.path(), o).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        let mut model = Model::new();
        // About 5 KiB of log per transaction: the ring wraps every ~200.
        write(&env, &t, &mut model, 700, &mut rng);
        assert_eq!(
            killed_and_reopened(live.path(), env),
            model,
            "trigger {trigger}"
        );
    }
}

/// Kills `env` (the directory `live`) and reopens what a kill leaves: the data file as the page
/// cache holds it, every unsynced commit included, and the log. Recovery rolls the data file
/// back to the last checkpoint and replays the ring from there. Returns table `t`'s contents.
fn killed_and_reopened(live: &Path, env: Environment) -> Model {
    // The groups LMDB has not got yet go there now: the copy below is then one instant (no
    // LMDB commit follows it that a checkpoint in the log could name).
    env.apply_logged().unwrap();
    let disk = cut(live, &std::fs::read(live.join("data.mdb")).unwrap(), 0.0, 1);
    drop(env);
    let reopened = Environment::open(disk.path(), EnvOptions::default()).unwrap();
    let t = reopened.table("t", TableKind::Plain).unwrap();
    contents(&reopened, &t)
}

#[test]
fn a_new_log_written_ahead_of_the_committer_replays_every_record() {
    // A fresh log's blocks are zeroed by the checkpointer thread while the committer appends
    // records just behind (`kv::wal::fill`); no checkpoint after the first, so recovery
    // replays the whole ~7 MiB written, across many zeroed chunks. A zero written over a record
    // ends the replay there.
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let live = tempfile::tempdir().unwrap();
    let mut o = options(true);
    o.log_file_bytes = 16 << 20;
    let env = Environment::open(live.path(), o).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    write(&env, &t, &mut model, 1400, &mut rng);
    let found = killed_and_reopened(live.path(), env);
    assert!(
        found == model,
        "{} keys found after replay, {} expected",
        found.len(),
        model.len()
    );
}

/// The cause an environment reports after a failed checkpoint, checked for what it must say.
fn assert_names_the_checkpoint(err: &datalith::kv::KvError) {
    let text = err.to_string();
    assert!(
        text.contains("checkpoint") && text.contains("reopened"),
        "the error does not say what failed and what to do: {text}"
    );
}

#[test]
fn a_failed_checkpoint_is_never_retried_and_reopening_recovers_every_acknowledged_write() {
    // Linux may report a failed write-back once and then call the pages clean, so a second
    // sync can succeed for pages the disk never got. The disk below lost every page written
    // since the last good checkpoint, meta pages included: had a retried checkpoint recorded
    // the newer state in the log, its records would be gone and those writes with them.
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let (live, env, t, mut model, at_checkpoint) = checkpointed(60, &mut rng);
    write(&env, &t, &mut model, 60, &mut rng);
    env.apply_logged().unwrap();

    env.inject_checkpoint_failure();
    let failed = env.checkpoint().unwrap_err();
    assert!(
        matches!(failed, datalith::kv::KvError::CommitFailed { .. }),
        "{failed:?}"
    );
    assert_names_the_checkpoint(&failed);
    let retried = env.checkpoint().unwrap_err();
    assert_names_the_checkpoint(&retried);
    let refused = env
        .transact_kv(vec![KvOp::put(&t, b"after".to_vec(), b"1".to_vec())])
        .unwrap_err();
    assert!(
        matches!(refused, datalith::kv::KvError::Poisoned { .. }),
        "{refused:?}"
    );
    assert_names_the_checkpoint(&refused);
    assert!(env.poisoned().is_some());
    assert_eq!(contents(&env, &t), model, "reads still see every write");

    let disk = cut(live.path(), &at_checkpoint, 1.0, 21);
    drop(env);
    let reopened = Environment::open(disk.path(), EnvOptions::default()).unwrap();
    let t = reopened.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&reopened, &t), model);
    reopened
        .transact_kv(vec![KvOp::put(&t, b"after".to_vec(), b"1".to_vec())])
        .unwrap();
    drop(reopened);
    admin::check_structure(&disk.path().join("data.mdb"), Verify::Everything).unwrap();
}

#[test]
fn a_checkpoint_failing_in_the_background_stops_writes_until_reopened() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(22);
    let live = tempfile::tempdir().unwrap();
    let mut o = EnvOptions::default();
    o.log_checkpoint_interval = Duration::from_millis(5);
    o.log_checkpoint_bytes = 1;
    let env = Environment::open(live.path(), o).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    write(&env, &t, &mut model, 20, &mut rng);
    env.inject_checkpoint_failure();
    // Writes go on (each acknowledged one joins the model) until the checkpointer, making
    // them durable, fails and stops them.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    for i in 0u32.. {
        assert!(
            std::time::Instant::now() < deadline,
            "the checkpointer's failure never stopped writes"
        );
        let key = format!("late{i:05}").into_bytes();
        match env.transact_kv(vec![KvOp::put(&t, key.clone(), b"1".to_vec())]) {
            Ok(()) => {
                model.insert(key, b"1".to_vec());
            }
            Err(refused) => {
                assert!(
                    matches!(refused, datalith::kv::KvError::Poisoned { .. }),
                    "{refused:?}"
                );
                assert_names_the_checkpoint(&refused);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(env.poisoned().is_some());
    assert_eq!(contents(&env, &t), model);
    drop(env);
    let reopened = Environment::open(live.path(), EnvOptions::default()).unwrap();
    let t = reopened.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&reopened, &t), model);
    reopened
        .transact_kv(vec![KvOp::put(&t, b"after".to_vec(), b"1".to_vec())])
        .unwrap();
}

#[test]
fn a_power_cut_during_recovery_keeps_the_checkpoint_whole() {
    // Recovery replays the log into LMDB with unsynced commits, then checkpoints. Until that
    // checkpoint's slot is durable, the log's slot still names the old checkpoint, so replay
    // must not rewrite a page of the old checkpoint's tree: a second cut, after every page
    // replay wrote reached the disk but before the new slot did, reopens on that tree.
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let (live, env, t, mut model, at_checkpoint) = checkpointed(40, &mut rng);
    // ~13 MB of records: replay commits several transactions (`REPLAY_BATCH_BYTES`), so
    // without the guard a later one reuses pages an earlier one freed from the old tree.
    let key = |i: u32| format!("k{:05}", i % 400).into_bytes();
    put_each(&env, &t, &mut model, 800, key, |_| {
        vec![rng.random::<u8>(); 16_000]
    });
    write(&env, &t, &mut model, 40, &mut rng);
    env.apply_logged().unwrap();
    let log_before = std::fs::read(live.path().join(datalith::kv::wal::LOG_FILE)).unwrap();
    let crashed = cut(live.path(), &at_checkpoint, 0.0, 31);
    drop(env);

    let recovered = Environment::open(crashed.path(), EnvOptions::default()).unwrap();
    let t = recovered.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&recovered, &t), model, "the first recovery");
    drop(recovered);

    let second = tempfile::tempdir().unwrap();
    let mut disk = std::fs::read(crashed.path().join("data.mdb")).unwrap();
    disk[..2 * PAGE].copy_from_slice(&at_checkpoint[..2 * PAGE]);
    std::fs::write(second.path().join("data.mdb"), disk).unwrap();
    std::fs::write(second.path().join(datalith::kv::wal::LOG_FILE), log_before).unwrap();
    admin::check_structure(&second.path().join("data.mdb"), Verify::Everything)
        .expect("the old checkpoint's tree is whole");
    let reopened = Environment::open(second.path(), EnvOptions::default()).unwrap();
    let t = reopened.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&reopened, &t), model, "the second recovery");
}

#[test]
fn recovery_that_must_grow_the_map_keeps_every_acknowledged_write() {
    // Replay guards the checkpoint's pages, and the map cannot grow while a snapshot is open:
    // replay then makes what it applied durable, names it in a checkpoint slot and grows.
    // Reopened with the smallest map, the replay below needs several growths, in its first
    // batch (nothing replayed to name yet) and in later ones (~32 MB of records).
    let mut rng = rand::rngs::StdRng::seed_from_u64(41);
    let (live, env, t, mut model, at_checkpoint) = checkpointed(10, &mut rng);
    // Fresh keys: the file must hold all of them.
    let key = |i: u32| format!("grow{i:05}").into_bytes();
    put_each(&env, &t, &mut model, 2000, key, |i| {
        vec![(i % 251) as u8; 16_000]
    });
    env.apply_logged().unwrap();
    let crashed = cut(live.path(), &at_checkpoint, 0.0, 41);
    drop(env);
    let mut small = EnvOptions::default();
    small.initial_map_bytes = at_checkpoint.len();
    let reopened = Environment::open(crashed.path(), small).unwrap();
    assert!(
        reopened.map_bytes() > 2 * at_checkpoint.len(),
        "replay grew the map"
    );
    let t = reopened.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&reopened, &t), model);
    drop(reopened);
    admin::check_structure(&crashed.path().join("data.mdb"), Verify::Everything).unwrap();
}

#[test]
fn a_wrap_whose_marker_was_lost_replays_the_records_after_it() {
    // The committer writes a wrap marker and the record after it (at the start of the ring),
    // then syncs once: a crash may keep the record and lose the marker. Replay must follow
    // the wrap to the record, not stop at the lost marker or call the record damage.
    let mut rng = rand::rngs::StdRng::seed_from_u64(51);
    let live = tempfile::tempdir().unwrap();
    let mut o = options(true);
    o.log_file_bytes = 1 << 20;
    let env = Environment::open(live.path(), o).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    // ~530 KB of records, a checkpoint there, then ~580 KB more: past the end of the 1 MiB
    // ring, so the writer wraps once, well before the checkpoint's start.
    write(&env, &t, &mut model, 100, &mut rng);
    env.checkpoint().unwrap();
    let at_checkpoint = std::fs::read(live.path().join("data.mdb")).unwrap();
    write(&env, &t, &mut model, 110, &mut rng);
    env.apply_logged().unwrap();
    let mut log = std::fs::read(live.path().join(datalith::kv::wal::LOG_FILE)).unwrap();
    const WRAP: u8 = 2; // a record header: magic "DLWR", then the kind byte
    let marker = (0..log.len() - 24)
        .find(|&i| &log[i..i + 4] == b"DLWR" && log[i + 4] == WRAP)
        .expect("the ring wrapped");
    log[marker..marker + 24].fill(0);
    let disk = cut(live.path(), &at_checkpoint, 0.0, 51);
    std::fs::write(disk.path().join(datalith::kv::wal::LOG_FILE), &log).unwrap();
    drop(env);
    let reopened = Environment::open(disk.path(), EnvOptions::default()).unwrap();
    let t = reopened.table("t", TableKind::Plain).unwrap();
    assert_eq!(contents(&reopened, &t), model);
}

#[test]
fn a_burst_grows_the_log_and_a_power_cut_keeps_every_acknowledged_write() {
    // A new log starts small and grows (doubling) while the burst's records fill it: the cut
    // must find every record, across each old end, whatever share of the data file's unsynced
    // pages it loses.
    // (share of the unsynced page writes lost, seed)
    for (share, seed) in [(0.0, 61), (0.5, 62), (1.0, 63)] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let live = tempfile::tempdir().unwrap();
        let mut o = options(true);
        o.log_initial_bytes = EnvOptions::default().log_initial_bytes;
        let env = Environment::open(live.path(), o).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        env.checkpoint().unwrap();
        let at_checkpoint = std::fs::read(live.path().join("data.mdb")).unwrap();
        let log_len = || {
            std::fs::metadata(live.path().join(datalith::kv::wal::LOG_FILE))
                .unwrap()
                .len()
        };
        let created = log_len();
        let mut model = Model::new();
        // ~5 KiB of log a transaction, ~1.5 MiB in all.
        write(&env, &t, &mut model, 300, &mut rng);
        env.apply_logged().unwrap();
        assert!(
            log_len() >= 4 * created,
            "the log grew from {created} to {} bytes",
            log_len()
        );
        let disk = cut(live.path(), &at_checkpoint, share, seed);
        drop(env);
        let reopened = Environment::open(disk.path(), EnvOptions::default()).unwrap();
        let t = reopened.table("t", TableKind::Plain).unwrap();
        assert_eq!(contents(&reopened, &t), model, "share {share}");
        drop(reopened);
        admin::check_structure(&disk.path().join("data.mdb"), Verify::Everything).unwrap();
    }
}
