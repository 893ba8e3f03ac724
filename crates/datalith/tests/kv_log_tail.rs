//! The end of the log after a crash: a last record cut short or damaged at any byte must stop
//! recovery cleanly before it (every earlier record applied, it not), and random transactions
//! cut at a random point of the log keep exactly the transactions whose records are whole.
//!
//! Each case opens a copy of a live environment as a power cut leaves it: the data file with
//! the meta pages of its last checkpoint (so recovery must replay the log) and the log as given.

use std::collections::BTreeMap;
use std::path::Path;

use datalith::kv::wal::LOG_FILE;
use datalith::kv::{Durability, EnvOptions, Environment, KvOp, Table, TableKind};
use proptest::prelude::*;

#[path = "common/table.rs"]
mod table;

#[path = "common/dead_pid.rs"]
mod dead_pid;
use dead_pid::dead_pid;

const PAGE: usize = 4096;
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> EnvOptions {
    let mut o = EnvOptions::default();
    o.log_checkpoint_interval = std::time::Duration::from_secs(3600);
    o.log_checkpoint_bytes = u64::MAX;
    o.log_checkpoint_freed_bytes = u64::MAX;
    o.log_file_bytes = 1 << 20;
    o
}

/// One transaction: `(key, Some(value))` puts, `(key, None)` deletes.
type Txn = Vec<(u8, Option<Vec<u8>>)>;

fn apply(model: &mut Model, txn: &Txn) {
    for (k, v) in txn {
        let key = vec![b'k', *k];
        match v {
            Some(v) => model.insert(key, v.clone()),
            None => model.remove(&key),
        };
    }
}

fn ops(t: &Table, txn: &Txn) -> Vec<KvOp> {
    txn.iter()
        .map(|(k, v)| match v {
            Some(v) => KvOp::put(t, vec![b'k', *k], v.clone()),
            None => KvOp::delete(t, vec![b'k', *k]),
        })
        .collect()
}

/// A live environment after `txns`, each acknowledged, with a checkpoint before the first:
/// the data file at the checkpoint's meta pages, the log after each transaction.
struct Recorded {
    _live: tempfile::TempDir,
    disk: Vec<u8>,
    /// The log's bytes after each transaction (index 0: before any).
    logs: Vec<Vec<u8>>,
}

fn record(txns: &[Txn]) -> Recorded {
    record_with(txns, options())
}

/// [`record`], the live environment opened with `options`.
fn record_with(txns: &[Txn], options: EnvOptions) -> Recorded {
    let live = tempfile::tempdir().unwrap();
    let env = Environment::open(live.path(), options).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    env.checkpoint().unwrap();
    let meta = std::fs::read(live.path().join("data.mdb")).unwrap()[..2 * PAGE].to_vec();
    let log = || std::fs::read(live.path().join(LOG_FILE)).unwrap();
    let mut logs = vec![log()];
    for txn in txns {
        env.transact_kv(ops(&t, txn)).unwrap();
        logs.push(log());
    }
    let mut disk = std::fs::read(live.path().join("data.mdb")).unwrap();
    disk[..2 * PAGE].copy_from_slice(&meta);
    Recorded {
        _live: live,
        disk,
        logs,
    }
}

/// Opens the data file `disk` with log `log` in a fresh directory and reads table `t`.
fn reopen(disk: &[u8], log: &[u8]) -> Model {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), disk, log);
    contents(dir.path())
}

/// Opens the environment in `dir` and reads table `t`.
fn contents(dir: &Path) -> Model {
    contents_with(dir, EnvOptions::default())
}

/// [`contents`], opened with `options`.
fn contents_with(dir: &Path, options: EnvOptions) -> Model {
    let env = Environment::open(dir, options).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    table::table_contents(&env, &t)
}

fn write(dir: &Path, disk: &[u8], log: &[u8]) {
    std::fs::write(dir.join("data.mdb"), disk).unwrap();
    std::fs::write(dir.join(LOG_FILE), log).unwrap();
}

/// The bytes where two logs differ: the record written between them.
fn changed(before: &[u8], after: &[u8]) -> std::ops::Range<usize> {
    let first = (0..after.len()).find(|&i| before.get(i) != Some(&after[i]));
    let last = (0..after.len())
        .rev()
        .find(|&i| before.get(i) != Some(&after[i]));
    first.unwrap()..last.unwrap() + 1
}

#[test]
fn a_last_record_cut_or_damaged_at_any_byte_stops_recovery_before_it() {
    let txns: Vec<Txn> = vec![
        vec![(1, Some(b"one".to_vec())), (2, Some(b"two".to_vec()))],
        vec![(3, Some(vec![3; 300])), (1, None)],
        vec![(2, Some(b"deux".to_vec())), (4, Some(b"four".to_vec()))],
    ];
    let rec = record(&txns);
    let mut before_last = Model::new();
    txns[..2].iter().for_each(|t| apply(&mut before_last, t));
    let mut all = before_last.clone();
    apply(&mut all, &txns[2]);
    let (prev, last) = (&rec.logs[2], &rec.logs[3]);
    // The whole log replays everything; the log before the last record stops before it.
    assert_eq!(reopen(&rec.disk, last), all);
    assert_eq!(reopen(&rec.disk, prev), before_last);
    let record_bytes = changed(prev, last);
    assert!(record_bytes.len() > 24, "{record_bytes:?}");
    for at in record_bytes {
        // Written only up to `at` (the rest as it was before), cut off there, and damaged there.
        let mut torn = last.clone();
        torn[at..].copy_from_slice(&prev[at..]);
        let cut = last[..at].to_vec();
        let mut flipped = last.clone();
        flipped[at] ^= 0x5a;
        for (what, log) in [("torn", torn), ("cut", cut), ("flipped", flipped)] {
            assert_eq!(reopen(&rec.disk, &log), before_last, "{what} at byte {at}");
        }
    }
}

/// A log that grows (`kv::wal::file`: made longer, preallocated and synced, before a record
/// is written past its old end) crashed at every step of a growth: every acknowledged
/// transaction is kept, and nothing else.
#[test]
fn a_crash_at_any_step_of_a_growth_of_the_log_loses_no_acknowledged_transaction() {
    // ~10 KB records from the ring's start (the checkpoint is taken before the first): the
    // 256 KiB log grows to 512 KiB and then to its largest, 1 MiB, never wrapping.
    let txns: Vec<Txn> = (0..70u8)
        .map(|i| vec![(i % 40, Some(vec![i; 10_000])), (200, Some(vec![i; 10]))])
        .collect();
    let rec = record(&txns);
    let models: Vec<Model> = (0..=txns.len())
        .map(|n| {
            let mut m = Model::new();
            txns[..n].iter().for_each(|t| apply(&mut m, t));
            m
        })
        .collect();
    let growths: Vec<usize> = (1..rec.logs.len())
        .filter(|&i| rec.logs[i].len() > rec.logs[i - 1].len())
        .collect();
    let lengths: Vec<usize> = growths.iter().map(|&i| rec.logs[i].len()).collect();
    assert_eq!(lengths, [512 << 10, 1 << 20], "the log grew at {growths:?}");
    for &i in &growths {
        let (before, after) = (&rec.logs[i - 1], &rec.logs[i]);
        let mut grown = before.clone();
        grown.resize(after.len(), 0);
        let record = changed(&grown, after);
        assert!(
            record.end > before.len(),
            "record {i} lies past the old end"
        );
        let mut torn = after.clone();
        torn[(record.start + record.end) / 2..].fill(0);
        let torn_past_old_end = {
            let mut t = after.clone();
            t[before.len()..].fill(0);
            t
        };
        // (crash, log as the disk holds it, transactions kept)
        let cases: [(&str, &[u8], usize); 6] = [
            ("before the growth", before, i - 1),
            ("grown, record not written", &grown, i - 1),
            (
                "grown, record written before the old end only",
                &torn_past_old_end,
                i - 1,
            ),
            ("grown, record torn", &torn, i - 1),
            ("record written", after, i),
            ("the next record too", &rec.logs[i + 1], i + 1),
        ];
        for (crash, log, kept) in cases {
            assert_eq!(
                reopen(&rec.disk, log),
                models[kept],
                "growth at transaction {i}: {crash}"
            );
        }
    }
    assert_eq!(reopen(&rec.disk, &rec.logs[txns.len()]), models[txns.len()]);
}

fn txn() -> impl Strategy<Value = Txn> {
    proptest::collection::vec(
        (
            0u8..24,
            proptest::option::weighted(0.8, proptest::collection::vec(any::<u8>(), 0..200)),
        ),
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    /// Random transactions, the log cut at a random byte of what they wrote: the reopened
    /// store holds the transactions whose records lie wholly before the cut, and no other.
    #[test]
    fn random_transactions_cut_at_a_random_point_match_the_model(
        txns in proptest::collection::vec(txn(), 1..12),
        cut_share in 0.0f64..1.0,
    ) {
        let rec = record(&txns);
        let first = changed(&rec.logs[0], &rec.logs[1]).start;
        let end = changed(&rec.logs[txns.len() - 1], &rec.logs[txns.len()]).end;
        let cut_at = first + ((end - first) as f64 * cut_share) as usize;
        let mut log = rec.logs[txns.len()].clone();
        log[cut_at..].copy_from_slice(&rec.logs[0][cut_at..]);
        let mut model = Model::new();
        for (i, t) in txns.iter().enumerate() {
            if changed(&rec.logs[i], &rec.logs[i + 1]).end <= cut_at {
                apply(&mut model, t);
            }
        }
        prop_assert_eq!(reopen(&rec.disk, &log), model);
    }
}

#[test]
fn a_log_cut_inside_its_checkpoint_slots_is_refused_and_the_data_file_kept() {
    // A checkpoint after each transaction: both slots hold one, the newer in either slot
    // (two or three transactions), and the cut may take the newer. Rolling the data file back
    // to the older would drop commits the data file holds durably.
    for n in [2u8, 3] {
        let live = tempfile::tempdir().unwrap();
        let env = Environment::open(live.path(), options()).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        let mut model = Model::new();
        for k in 0..n {
            let txn = vec![(k, Some(vec![k; 10]))];
            env.transact_kv(ops(&t, &txn)).unwrap();
            env.checkpoint().unwrap();
            apply(&mut model, &txn);
        }
        drop(env);
        let disk = std::fs::read(live.path().join("data.mdb")).unwrap();
        let log = std::fs::read(live.path().join(LOG_FILE)).unwrap();
        // The slots take 3 pages each (two meta pages and a header) before the records.
        for cut in [1, PAGE, 3 * PAGE + 100, 6 * PAGE - 1] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), &disk, &log[..cut]);
            match Environment::open(dir.path(), EnvOptions::default()) {
                Err(e) => assert_eq!(e.category(), datalith::error::CORRUPT, "cut at {cut}: {e}"),
                // No whole slot left: nothing to roll back to, the data file is used as it is.
                Ok(env) if cut < 3 * PAGE => drop(env),
                Ok(_) => panic!("{n} transactions: a log cut at byte {cut} was used"),
            }
            assert!(std::fs::read(dir.path().join("data.mdb")).unwrap() == disk);
            // Without the log, the data file opens with every commit.
            std::fs::remove_file(dir.path().join(LOG_FILE)).unwrap();
            assert_eq!(contents(dir.path()), model, "cut at {cut}");
        }
    }
}

#[test]
fn records_written_without_a_sync_may_be_lost_in_any_order_and_the_log_ends_before_the_first() {
    // `Durability::NoSync` acknowledges a record once it is written, not synced: after a
    // machine crash the page cache may have written any of them back, in any order. Whichever
    // are lost, the database opens, in either mode, at the transaction before the first lost
    // one, and `check` sees no damage. The same loss in a log of synced records is damage.
    let txns: Vec<Txn> = (0..5u8)
        .map(|i| vec![(i, Some(vec![i; 50 + 40 * i as usize]))])
        .collect();
    let mut nosync = options();
    nosync.durability = Durability::NoSync;
    let rec = record_with(&txns, nosync.clone());
    let spans: Vec<_> = (0..5)
        .map(|i| changed(&rec.logs[i], &rec.logs[i + 1]))
        .collect();
    for lost in 1u32..(1 << 5) {
        let mut log = rec.logs[5].clone();
        for (i, span) in spans.iter().enumerate() {
            if lost & (1 << i) != 0 {
                log[span.clone()].copy_from_slice(&rec.logs[i][span.clone()]);
            }
        }
        let kept = lost.trailing_zeros() as usize;
        let mut want = Model::new();
        txns[..kept].iter().for_each(|t| apply(&mut want, t));
        for (mode, o) in [
            ("durable", EnvOptions::default()),
            ("nosync", nosync.clone()),
        ] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), &rec.disk, &log);
            let found = datalith::admin::check_log(dir.path(), PAGE)
                .unwrap()
                .unwrap();
            assert_eq!(
                (found.records_after_checkpoint, found.damage),
                (kept as u64, None),
                "lost {lost:05b}"
            );
            assert_eq!(
                contents_with(dir.path(), o),
                want,
                "lost {lost:05b}, {mode}"
            );
            // The lost run's whole records are gone from the ring: the records written next
            // take their numbers.
            let after = std::fs::read(dir.path().join(LOG_FILE)).unwrap();
            for span in &spans[kept..] {
                assert!(
                    after[span.clone()].iter().all(|&b| b == 0),
                    "lost {lost:05b}, {mode}: a record of the lost run is left at {span:?}"
                );
            }
        }
    }
    let synced = record(&txns);
    let mut log = synced.logs[5].clone();
    let second = changed(&synced.logs[1], &synced.logs[2]);
    log[second.clone()].copy_from_slice(&synced.logs[1][second]);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &synced.disk, &log);
    let err = Environment::open(dir.path(), EnvOptions::default()).err();
    assert!(
        matches!(err, Some(datalith::kv::KvError::Corrupt { .. })),
        "a lost synced record was not refused: {err:?}"
    );
}

#[test]
fn a_damaged_record_followed_by_whole_ones_is_refused_naming_it_unless_the_loss_is_accepted() {
    // The records after a damaged one were acknowledged (each was written only after the one
    // before it was synced): stopping there would drop them silently. Damage at every byte of
    // the middle record of three is refused; accepting the loss keeps the first transaction.
    let txns: Vec<Txn> = vec![
        vec![(1, Some(b"one".to_vec()))],
        vec![(2, Some(vec![2; 300])), (1, None)],
        vec![(3, Some(b"three".to_vec()))],
    ];
    let rec = record(&txns);
    let mut first = Model::new();
    apply(&mut first, &txns[0]);
    let log = &rec.logs[3];
    // `check`'s look at the log, which writes nothing: the whole log holds three records
    // after its checkpoint.
    let whole = tempfile::tempdir().unwrap();
    write(whole.path(), &rec.disk, log);
    let found = datalith::admin::check_log(whole.path(), PAGE)
        .unwrap()
        .unwrap();
    assert_eq!((found.records_after_checkpoint, found.damage), (3, None));
    let middle = changed(&rec.logs[1], &rec.logs[2]);
    for at in middle {
        let mut damaged = log.clone();
        damaged[at] ^= 0x5a;
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &rec.disk, &damaged);
        let found = datalith::admin::check_log(dir.path(), PAGE)
            .unwrap()
            .unwrap();
        assert_eq!(found.records_after_checkpoint, 1, "byte {at}");
        assert!(
            found
                .damage
                .as_deref()
                .is_some_and(|d| d.contains("damaged")),
            "byte {at}: {found:?}"
        );
        let err = Environment::open(dir.path(), EnvOptions::default())
            .err()
            .unwrap_or_else(|| panic!("damage at byte {at} was not refused"));
        let text = err.to_string();
        assert!(
            matches!(err, datalith::kv::KvError::Corrupt { .. }) && text.contains("damaged"),
            "byte {at}: {text}"
        );
        assert!(
            std::fs::read(dir.path().join("data.mdb")).unwrap() == rec.disk,
            "byte {at}: refusing the log changed the data file"
        );
        // The same directory, the loss accepted, opens.
        let mut accept = EnvOptions::default();
        accept.log_accept_damage = true;
        assert_eq!(
            contents_with(dir.path(), accept),
            first,
            "byte {at}, accepted"
        );
    }
}

#[test]
fn a_lost_newer_checkpoint_slot_is_refused_without_touching_the_data_file() {
    // The ring (1 MiB) fills many times, so the committer checkpoints and recycles the space
    // before each checkpoint. Then the slots are made to hold what they held at the first
    // checkpoint, as if every newer slot had been lost: the one left names records the ring
    // has overwritten, and the pages of its tree may be reused. Rolling the data file back to
    // it must be refused, even when damage is accepted, and the data file left as it was.
    // Also when the records were written without a sync: a whole one numbered far past the
    // stop is no record lost in a crash.
    for durability in [Durability::Durable, Durability::NoSync] {
        a_lost_newer_checkpoint_slot_is_refused_when(durability);
    }
}

fn a_lost_newer_checkpoint_slot_is_refused_when(durability: Durability) {
    const SLOTS: usize = 2 * 3 * PAGE; // two checkpoint slots of three pages
    let live = tempfile::tempdir().unwrap();
    let mut o = options();
    o.durability = durability;
    let env = Environment::open(live.path(), o).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(ops(&t, &vec![(1, Some(vec![1; 100]))]))
        .unwrap();
    env.checkpoint().unwrap();
    let first_slots = std::fs::read(live.path().join(LOG_FILE)).unwrap()[..SLOTS].to_vec();
    for i in 0..3000u32 {
        let txn = vec![((i % 24) as u8, Some(vec![(i % 251) as u8; 900]))];
        env.transact_kv(ops(&t, &txn)).unwrap();
    }
    env.apply_logged().unwrap();
    let disk = std::fs::read(live.path().join("data.mdb")).unwrap();
    let mut log = std::fs::read(live.path().join(LOG_FILE)).unwrap();
    log[..SLOTS].copy_from_slice(&first_slots);
    drop(env);
    for accept in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &disk, &log);
        let mut o = EnvOptions::default();
        o.log_accept_damage = accept;
        let Err(err) = Environment::open(dir.path(), o) else {
            panic!("{durability:?}, accept {accept}: a stale checkpoint slot was used");
        };
        assert!(
            matches!(err, datalith::kv::KvError::Corrupt { .. })
                && err.to_string().contains("checkpoint slot is lost"),
            "accept {accept}: {err}"
        );
        assert!(
            std::fs::read(dir.path().join("data.mdb")).unwrap() == disk,
            "accept {accept}: the data file was changed"
        );
    }
}

/// A live environment whose 1 MiB ring filled many times (the pages of early checkpoints
/// reused since), as `kill -9` leaves it: its data file, its log and what it holds.
fn after_many_checkpoints() -> (Vec<u8>, Vec<u8>, Model) {
    let live = tempfile::tempdir().unwrap();
    let env = Environment::open(live.path(), options()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    for i in 0..3000u32 {
        let txn = vec![((i % 24) as u8, Some(vec![(i % 251) as u8; 900]))];
        env.transact_kv(ops(&t, &txn)).unwrap();
        apply(&mut model, &txn);
    }
    let disk = std::fs::read(live.path().join("data.mdb")).unwrap();
    let log = std::fs::read(live.path().join(LOG_FILE)).unwrap();
    std::mem::forget(env);
    (disk, log, model)
}

#[test]
fn a_checkpoint_slot_damaged_on_disk_leaves_its_twin_and_loses_nothing() {
    // Each checkpoint is written to both slots, so damage to either (the disk's, not a
    // crash's) leaves the newest checkpoint whole. With one copy, the slot left named an older
    // checkpoint whose pages were reused since.
    const SLOT: usize = 3 * PAGE;
    let (disk, log, model) = after_many_checkpoints();
    for slot in 0..2 {
        let mut damaged = log.clone();
        for b in &mut damaged[slot * SLOT + 100..slot * SLOT + 200] {
            *b ^= 0xa5;
        }
        assert_eq!(reopen(&disk, &damaged), model, "slot {slot} damaged");
    }
}

#[test]
fn a_log_with_records_and_no_whole_slot_is_refused_without_touching_the_data_file() {
    // Both slots damaged: which state of the data file is durable, and which records follow
    // it, cannot be known; opening as a new log would drop the records silently.
    const SLOT: usize = 3 * PAGE;
    let (disk, log, _) = after_many_checkpoints();
    let mut damaged = log.clone();
    for slot in 0..2 {
        damaged[slot * SLOT + 100] ^= 0xa5;
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &disk, &damaged);
    let found = datalith::admin::check_log(dir.path(), PAGE)
        .unwrap()
        .unwrap();
    assert!(
        found
            .damage
            .as_deref()
            .is_some_and(|d| d.contains("neither checkpoint slot")),
        "{found:?}"
    );
    let Err(err) = Environment::open(dir.path(), EnvOptions::default()) else {
        panic!("a log without a whole slot was used");
    };
    assert!(
        matches!(err, datalith::kv::KvError::Corrupt { .. })
            && err.to_string().contains("neither checkpoint slot"),
        "{err}"
    );
    assert!(std::fs::read(dir.path().join("data.mdb")).unwrap() == disk);

    // A new log whose first slot write was torn holds no record yet: it is used as new.
    let fresh = tempfile::tempdir().unwrap();
    drop(Environment::open(fresh.path(), options()).unwrap());
    let mut torn = std::fs::read(fresh.path().join(LOG_FILE)).unwrap();
    torn[..2 * SLOT].fill(0);
    torn[..100].fill(0x77);
    std::fs::write(fresh.path().join(LOG_FILE), &torn).unwrap();
    drop(Environment::open(fresh.path(), EnvOptions::default()).unwrap());
}

#[test]
fn a_crash_between_the_two_slot_writes_of_a_checkpoint_loses_nothing() {
    // A checkpoint writes its slot twice, syncing after each. A crash after the first write
    // leaves the new checkpoint in one slot and the previous in the other; a crash during it
    // leaves a torn slot and the previous checkpoint, whose pages are still guarded (nothing
    // was committed since). Either way every acknowledged write is back.
    const SLOT: usize = 3 * PAGE;
    let live = tempfile::tempdir().unwrap();
    let env = Environment::open(live.path(), options()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let mut model = Model::new();
    let write_some = |model: &mut Model, from: u8| {
        for k in from..from + 20 {
            let txn = vec![(k % 30, Some(vec![k; 700]))];
            env.transact_kv(ops(&t, &txn)).unwrap();
            apply(model, &txn);
        }
    };
    write_some(&mut model, 0);
    env.checkpoint().unwrap();
    let previous = std::fs::read(live.path().join(LOG_FILE)).unwrap()[..2 * SLOT].to_vec();
    write_some(&mut model, 20);
    env.checkpoint().unwrap();
    let disk = std::fs::read(live.path().join("data.mdb")).unwrap();
    let log = std::fs::read(live.path().join(LOG_FILE)).unwrap();
    std::mem::forget(env);
    let generation = u64::from_le_bytes(log[8..16].try_into().unwrap());
    let first = (generation % 2) as usize;
    let second = 1 - first;
    let slot = |i: usize| i * SLOT..(i + 1) * SLOT;

    let mut after_first = log.clone();
    after_first[slot(second)].copy_from_slice(&previous[slot(second)]);
    assert_eq!(
        reopen(&disk, &after_first),
        model,
        "crash after the first write"
    );

    let mut torn_first = after_first.clone();
    torn_first[slot(first)].copy_from_slice(&previous[slot(first)]);
    for b in &mut torn_first[first * SLOT + 2000..first * SLOT + 2100] {
        *b ^= 0x3c;
    }
    assert_eq!(
        reopen(&disk, &torn_first),
        model,
        "crash during the first write"
    );
}

/// A log whose creation fails (a full disk: here a length the file system refuses) leaves no
/// log behind, so the next open, with room, creates one; a log cut short at its final name
/// would be refused as damaged from then on, whatever the room.
#[test]
fn a_failed_creation_of_the_log_leaves_a_database_that_opens_later() {
    let dir = tempfile::tempdir().unwrap();
    let mut huge = options();
    huge.log_file_bytes = 1 << 62;
    huge.log_initial_bytes = 1 << 62;
    let err = match Environment::open(dir.path(), huge) {
        Err(e) => e,
        Ok(_) => panic!("a log of 4 EiB was created"),
    };
    assert_eq!(err.category().code, ":datalith.error/io", "{err}");
    assert!(err.to_string().contains("creating the log"), "{err}");
    assert!(!dir.path().join(LOG_FILE).exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(LOG_FILE))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let env = Environment::open(dir.path(), options()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let txn = vec![(1u8, Some(vec![1u8; 10]))];
    env.transact_kv(ops(&t, &txn)).unwrap();
    drop(env);
    let mut model = Model::new();
    apply(&mut model, &txn);
    assert_eq!(contents(dir.path()), model);
}

/// A process that died while creating the log left its partial file under the temporary
/// name: the next open creates the log and removes that file.
#[test]
fn the_partial_log_of_a_creation_that_died_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let env = Environment::open(dir.path(), options()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let txn = vec![(1u8, Some(vec![1u8; 10]))];
    env.transact_kv(ops(&t, &txn)).unwrap();
    drop(env);
    // Closed cleanly, the data file holds every commit; then the log is gone, as if the
    // process that was creating it died before linking it.
    std::fs::remove_file(dir.path().join(LOG_FILE)).unwrap();
    let dead = dead_pid();
    let partial = dir.path().join(format!("{LOG_FILE}.creating.{dead}.0"));
    std::fs::write(&partial, [0u8; 100]).unwrap();

    let mut model = Model::new();
    apply(&mut model, &txn);
    assert_eq!(contents(dir.path()), model);
    assert!(!partial.exists());
    assert!(dir.path().join(LOG_FILE).exists());
}
