//! Commits that are durable in the log before LMDB holds them (`kv::unapplied`): every read
//! after an acknowledgement sees the write, whatever the applier has done yet; a snapshot keeps
//! its state while the applier writes LMDB underneath; reopening finds the same contents.
//! Each case runs with LMDB written after every group, after the default delay, and (in
//! effect) never before the end, with readers merging the waiting groups; and with readers
//! writing waiting groups into LMDB themselves first (the default).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::time::Duration;

#[path = "common/hold.rs"]
mod hold;
use datalith::kv::{Direction, EnvOptions, Environment, KvOp, Table, TableKind};
use hold::hold_committer;
use proptest::prelude::*;

/// The plain table as a map, the list table as key -> set of values.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    plain: BTreeMap<Vec<u8>, Vec<u8>>,
    list: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>,
}

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    ListAdd(u8, u8),
    ListRemove(u8, u8),
    ListDelete(u8),
}

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value(v: u8) -> Vec<u8> {
    vec![v; 1 + v as usize % 40]
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Put(k, v) => {
                self.plain.insert(key(k), value(v));
            }
            Op::Delete(k) => {
                self.plain.remove(&key(k));
            }
            Op::ListAdd(k, v) => {
                self.list.entry(key(k)).or_default().insert(value(v));
            }
            Op::ListRemove(k, v) => {
                if let Some(s) = self.list.get_mut(&key(k)) {
                    s.remove(&value(v));
                    if s.is_empty() {
                        self.list.remove(&key(k));
                    }
                }
            }
            Op::ListDelete(k) => {
                self.list.remove(&key(k));
            }
        }
    }
}

impl Op {
    /// The same op on key `k`.
    fn with_key(self, k: u8) -> Op {
        match self {
            Op::Put(_, v) => Op::Put(k, v),
            Op::Delete(_) => Op::Delete(k),
            Op::ListAdd(_, v) => Op::ListAdd(k, v),
            Op::ListRemove(_, v) => Op::ListRemove(k, v),
            Op::ListDelete(_) => Op::ListDelete(k),
        }
    }
}

fn kv_op(plain: &Table, list: &Table, op: &Op) -> KvOp {
    match *op {
        Op::Put(k, v) => KvOp::put(plain, key(k), value(v)),
        Op::Delete(k) => KvOp::delete(plain, key(k)),
        Op::ListAdd(k, v) => KvOp::list_add(list, key(k), value(v)),
        Op::ListRemove(k, v) => KvOp::list_remove(list, key(k), value(v)),
        Op::ListDelete(k) => KvOp::delete(list, key(k)),
    }
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..24;
    let v = 0u8..6;
    prop_oneof![
        (k.clone(), v.clone()).prop_map(|(k, v)| Op::Put(k, v)),
        k.clone().prop_map(Op::Delete),
        (k.clone(), v.clone()).prop_map(|(k, v)| Op::ListAdd(k, v)),
        (k.clone(), v).prop_map(|(k, v)| Op::ListRemove(k, v)),
        k.prop_map(Op::ListDelete),
    ]
}

/// Everything a snapshot shows, read every way that merges an overlay differently: forward
/// and backward ranges, point reads, list values and counts.
fn contents(env: &Environment, plain: &Table, list: &Table) -> Model {
    let txn = env.read().unwrap();
    read_view(&txn, plain, list)
}

fn read_view(txn: &datalith::kv::ReadTxn, plain: &Table, list: &Table) -> Model {
    let view = txn.view();
    let all = |t: &Table, dir| -> Vec<(Vec<u8>, Vec<u8>)> {
        view.range(t, Bound::Unbounded, Bound::Unbounded, dir)
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect()
    };
    let forward = all(plain, Direction::Forward);
    let mut backward = all(plain, Direction::Backward);
    backward.reverse();
    assert_eq!(forward, backward, "plain table: both directions agree");
    let mut m = Model::default();
    for (k, v) in forward {
        assert_eq!(view.get(plain, &k).unwrap(), Some(&v[..]), "point read");
        m.plain.insert(k, v);
    }
    let pairs = all(list, Direction::Forward);
    let mut backward = all(list, Direction::Backward);
    backward.reverse();
    assert_eq!(pairs, backward, "list table: both directions agree");
    for (k, v) in pairs {
        m.list.entry(k).or_default().insert(v);
    }
    for (k, values) in &m.list {
        assert_eq!(view.list_count(list, k).unwrap(), values.len() as u64);
        let listed: BTreeSet<Vec<u8>> = view
            .list(list, k)
            .unwrap()
            .map(|v| v.unwrap().to_vec())
            .collect();
        assert_eq!(&listed, values, "one key's values");
    }
    m
}

/// What the environment in `dir` holds once reopened.
fn reopened_contents(dir: &std::path::Path, catching: Catching) -> Model {
    let env = Environment::open(dir, options(catching)).unwrap();
    let plain = env.table("plain", TableKind::Plain).unwrap();
    let list = env.table("list", TableKind::List).unwrap();
    contents(&env, &plain, &list)
}

/// How LMDB catches up: the applier's delay, and whether readers write a few waiting groups
/// themselves (without, every read while groups wait merges their overlay).
#[derive(Debug, Clone, Copy)]
struct Catching {
    delay: Duration,
    readers_apply: bool,
}

fn options(c: Catching) -> EnvOptions {
    let mut o = EnvOptions::default();
    o.log_apply_delay = c.delay;
    o.log_readers_apply = c.readers_apply;
    o
}

/// After every group, by default, and not before the environment closes; readers writing
/// waiting groups themselves (the default) or always merging them.
const CATCHING: [Catching; 4] = [
    Catching {
        delay: Duration::ZERO,
        readers_apply: false,
    },
    Catching {
        delay: Duration::from_millis(20),
        readers_apply: false,
    },
    Catching {
        delay: Duration::from_secs(3600),
        readers_apply: false,
    },
    Catching {
        delay: Duration::from_secs(3600),
        readers_apply: true,
    },
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn every_acknowledged_write_is_read_at_once_and_after_reopening(
        txns in prop::collection::vec(prop::collection::vec(op(), 1..8), 1..30),
        catching in 0usize..4,
    ) {
        let catching = CATCHING[catching];
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(dir.path(), options(catching)).unwrap();
        let plain = env.table("plain", TableKind::Plain).unwrap();
        let list = env.table("list", TableKind::List).unwrap();
        let mut model = Model::default();
        for ops in &txns {
            env.transact_kv(ops.iter().map(|o| kv_op(&plain, &list, o)).collect()).unwrap();
            for o in ops {
                model.apply(o);
            }
            prop_assert_eq!(&contents(&env, &plain, &list), &model);
        }
        env.apply_logged().unwrap();
        prop_assert_eq!(&contents(&env, &plain, &list), &model);
        drop(env);
        prop_assert_eq!(&reopened_contents(dir.path(), catching), &model);
    }
}

#[test]
fn a_snapshot_keeps_its_state_while_lmdb_is_written_under_it() {
    for catching in CATCHING {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(dir.path(), options(catching)).unwrap();
        let plain = env.table("plain", TableKind::Plain).unwrap();
        let list = env.table("list", TableKind::List).unwrap();
        let mut model = Model::default();
        let mut held = Vec::new();
        for i in 0..40u8 {
            let ops = [
                Op::Put(i % 7, i),
                Op::ListAdd(i % 5, i % 6),
                Op::Delete((i + 3) % 7),
            ];
            env.transact_kv(ops.iter().map(|o| kv_op(&plain, &list, o)).collect())
                .unwrap();
            for o in &ops {
                model.apply(o);
            }
            if i % 8 == 0 {
                held.push((env.read().unwrap(), model.clone()));
            }
        }
        env.apply_logged().unwrap();
        for (txn, then) in &held {
            assert_eq!(&read_view(txn, &plain, &list), then, "{catching:?}");
        }
        assert_eq!(contents(&env, &plain, &list), model, "{catching:?}");
    }
}

#[test]
fn a_checkpoint_and_a_compacted_copy_hold_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let never = Catching {
        delay: Duration::from_secs(3600),
        readers_apply: false,
    };
    let env = Environment::open(dir.path(), options(never)).unwrap();
    let plain = env.table("plain", TableKind::Plain).unwrap();
    let list = env.table("list", TableKind::List).unwrap();
    let mut model = Model::default();
    for i in 0..20u8 {
        let ops = [Op::Put(i, i), Op::ListAdd(i % 3, i % 6)];
        env.transact_kv(ops.iter().map(|o| kv_op(&plain, &list, o)).collect())
            .unwrap();
        for o in &ops {
            model.apply(o);
        }
    }
    let copy = tempfile::tempdir().unwrap();
    let target = copy.path().join("copy");
    env.copy_compacted(&target).unwrap();
    env.checkpoint().unwrap();
    drop(env);
    // The copy has no log: what it holds is in its data file.
    let copied = Environment::open(&target, options(never)).unwrap();
    let plain = copied.table("plain", TableKind::Plain).unwrap();
    let list = copied.table("list", TableKind::List).unwrap();
    assert_eq!(contents(&copied, &plain, &list), model);
}

/// A request that reads before it writes: the values of one list key and one plain key, then
/// its ops, then what it read under `seen{key}`. When it `defers`, it may read past the
/// committer's deferred writes (`defers_apply`): a read that meets them fails and it runs
/// again; otherwise the committer adds them before it runs.
struct Reader {
    plain: Table,
    list: Table,
    read: u8,
    ops: Vec<Op>,
    defers: bool,
    done: crossbeam_channel::Sender<bool>,
}

fn seen_key(k: u8) -> Vec<u8> {
    format!("seen{k:03}").into_bytes()
}

/// What a `Reader` of `k` records: the list key's values, then the plain key's value.
fn seen_value(list: &[Vec<u8>], plain: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for v in list {
        out.extend_from_slice(v);
        out.push(b'|');
    }
    out.push(b'#');
    out.extend_from_slice(plain.unwrap_or(b"none"));
    out
}

impl datalith::kv::WriteRequest for Reader {
    fn size_hint(&self) -> usize {
        64
    }

    fn prepare(
        &mut self,
        view: datalith::kv::View<'_>,
        stage: &mut datalith::kv::Stage,
        _batch: &mut datalith::kv::BatchState,
    ) -> Result<(), datalith::kv::Rejected> {
        let read = || -> Result<Vec<u8>, datalith::kv::KvError> {
            let list = view
                .list(&self.list, &key(self.read))?
                .map(|v| v.map(<[u8]>::to_vec))
                .collect::<Result<Vec<_>, _>>()?;
            let plain = view.get(&self.plain, &key(self.read))?;
            Ok(seen_value(&list, plain))
        };
        let seen = read().map_err(|_| datalith::kv::Rejected)?;
        for op in &self.ops {
            match *op {
                Op::Put(k, v) => stage.put(&self.plain, &key(k), &value(v)),
                Op::Delete(k) => stage.delete(&self.plain, &key(k)),
                Op::ListAdd(k, v) => stage.list_add(&self.list, &key(k), &value(v)),
                Op::ListRemove(k, v) => stage.list_remove(&self.list, &key(k), &value(v)),
                Op::ListDelete(k) => stage.delete(&self.list, &key(k)),
            }
        }
        stage.put(&self.plain, &seen_key(self.read), &seen);
        Ok(())
    }

    fn finish(self: Box<Self>, outcome: datalith::kv::Outcome) {
        let _ = self
            .done
            .send(matches!(outcome, datalith::kv::Outcome::Committed));
    }

    fn defers_apply(&self) -> bool {
        self.defers
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Requests that read what earlier requests and groups wrote, queued together so that
    /// they share batches, see exactly the state a one-at-a-time model gives, however the
    /// committer defers their list writes (a read that meets one runs again), also in batches
    /// mixed with requests that do not defer.
    #[test]
    fn a_request_reads_every_earlier_write_however_it_was_deferred(
        requests in prop::collection::vec(
            (any::<u8>(), prop::collection::vec((op(), any::<u8>()), 0..6), 0u8..8, 0u8..5),
            1..200,
        ),
        spread in prop::sample::select(vec![24u8, 250]),
        catching in 0usize..4,
    ) {
        // Keys spread over 250 are seldom read again soon: the committer mostly defers, and
        // the applier's refolds defer too; over 24, reads keep meeting deferred writes.
        let requests: Vec<(u8, Vec<Op>, u8, bool)> = requests
            .into_iter()
            .map(|(read, ops, wait, defers)| {
                let ops = ops.into_iter().map(|(o, k)| o.with_key(k % spread)).collect();
                (read % spread, ops, wait, defers > 0)
            })
            .collect();
        let catching = CATCHING[catching];
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(dir.path(), options(catching)).unwrap();
        let plain = env.table("plain", TableKind::Plain).unwrap();
        let list = env.table("list", TableKind::List).unwrap();
        let mut model = Model::default();
        let (done, finished) = crossbeam_channel::unbounded();
        for (read, ops, wait, defers) in &requests {
            let listed: Vec<Vec<u8>> = model
                .list
                .get(&key(*read))
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            let seen = seen_value(&listed, model.plain.get(&key(*read)).map(|v| &v[..]));
            for o in ops {
                model.apply(o);
            }
            model.plain.insert(seen_key(*read), seen);
            env.submit(Box::new(Reader {
                plain: plain.clone(),
                list: list.clone(),
                read: *read,
                ops: ops.clone(),
                defers: *defers,
                done: done.clone(),
            }));
            // Now and then a request waits for its group: the next start a new batch.
            if *wait == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        for _ in &requests {
            prop_assert!(finished.recv().unwrap(), "every request commits");
        }
        prop_assert_eq!(&contents(&env, &plain, &list), &model);
        drop(env);
        prop_assert_eq!(&reopened_contents(dir.path(), catching), &model);
    }
}

#[test]
fn a_batch_that_does_not_defer_adds_earlier_deferred_writes_before_its_own() {
    // A deferred add of `k`, then one batch of a deferring request that removes it and one that
    // does not defer: the committer must hold "removed", as a later reader of `k` shows.
    let dir = tempfile::tempdir().unwrap();
    let env = Environment::open(dir.path(), options(CATCHING[2])).unwrap();
    let plain = env.table("plain", TableKind::Plain).unwrap();
    let list = env.table("list", TableKind::List).unwrap();
    let (done, finished) = crossbeam_channel::unbounded();
    let request = |read: u8, ops: Vec<Op>, defers: bool| {
        Box::new(Reader {
            plain: plain.clone(),
            list: list.clone(),
            read,
            ops,
            defers,
            done: done.clone(),
        })
    };
    env.submit(request(9, vec![Op::ListAdd(1, 3)], true));
    assert!(finished.recv().unwrap());
    hold_committer(&env, 200);
    env.submit(request(9, vec![Op::ListRemove(1, 3)], true));
    env.submit(request(9, vec![], false));
    for _ in 0..2 {
        assert!(finished.recv().unwrap());
    }
    env.submit(request(1, vec![], true));
    assert!(finished.recv().unwrap());
    let txn = env.read().unwrap();
    let seen = txn
        .view()
        .get(&plain, &seen_key(1))
        .unwrap()
        .map(<[u8]>::to_vec);
    assert_eq!(
        seen,
        Some(seen_value(&[], None)),
        "the remove is the last word"
    );
}

/// A snapshot begun while one transaction's writes wait for LMDB: a few are merged into its
/// reads; more (however many) are written into LMDB first, by the reader, so a snapshot
/// kept for many reads does not merge them into every one; a reader that may not write merges
/// them all. Every write is read either way.
#[test]
fn a_snapshot_after_a_large_transaction_reads_lmdb_alone() {
    let table: &[(u32, bool, bool)] = &[
        // (puts in the transaction, readers write waiting groups, the snapshot merges them)
        (100, true, true),
        (5_000, true, false),
        (60_000, true, false),
        (5_000, false, true),
    ];
    for &(n, readers_apply, merges) in table {
        let dir = tempfile::tempdir().unwrap();
        let never = Catching {
            delay: Duration::from_secs(3600),
            readers_apply,
        };
        let env = Environment::open(dir.path(), options(never)).unwrap();
        let plain = env.table("plain", TableKind::Plain).unwrap();
        let ops = (0..n)
            .map(|i| KvOp::put(&plain, i.to_be_bytes().to_vec(), vec![7]))
            .collect();
        env.transact_kv(ops).unwrap();
        let txn = env.read().unwrap();
        let merged = txn.unapplied_ops();
        match merges {
            // The reader hurries the applier (any waiting group does), which may write the
            // group before the snapshot begins: then there is nothing left to merge.
            true if readers_apply => assert!(
                merged == n as usize || merged == 0,
                "{n} puts, {never:?}: {merged} merged"
            ),
            true => assert_eq!(merged, n as usize, "{n} puts, {never:?}"),
            false => assert_eq!(merged, 0, "{n} puts, {never:?}"),
        }
        let seen = txn
            .view()
            .range(
                &plain,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )
            .unwrap()
            .count();
        assert_eq!(seen, n as usize, "{n} puts, {never:?}");
    }
}
