//! An in-memory layer of writes over a snapshot: what a speculative database (`Db::with`,
//! a report's `db_before`/`db_after`) holds instead of writing LMDB.
//!
//! A [`View`](super::View) with an overlay merges it into every read, so the whole stack
//! above (store, query, pull, raw index access) runs unchanged on "snapshot + overlay".
//!
//! Per table the overlay records the *final* effect of its writes, not their history:
//! - plain table: key -> `Some(value)` (put) or `None` (deleted);
//! - list table (`list`): `(key, value)` -> present or absent, plus the keys whose
//!   snapshot values are all hidden (the key was deleted).
//!
//! An entry of the snapshot is hidden exactly when the overlay mentions it (a plain key, a
//! cleared list key, or a list `(key, value)` pair); everything the overlay marks present is
//! added. So the merged state is `(snapshot - mentioned) + present`, and both sides are
//! sorted the same way (keys, then a key's values, byte order), which a merge walk
//! exploits.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::pending::{Hi, Lo};
use super::stage::{OpKind, Stage};
use super::table::{Table, TableKind};

mod list;
pub(crate) mod touched;

pub(crate) use list::ListOverlay;
pub(crate) use touched::Touched;

/// Writes whose overlay a view builds only for the reads that meet them (see `touched`).
pub(crate) trait OverlaySource: Sync {
    /// Whether a key of `table` in the read `[lo, hi]` is one the writes mention (`true`
    /// when unsure: at worst a needless merge).
    fn meets(&self, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> bool;

    /// What the writes leave in `key` of plain table `table`: `Some(Some(value))` set,
    /// `Some(None)` deleted, `None` not written. Answers a lookup without the overlay.
    fn plain_get(&self, table: u32, key: &[u8]) -> Option<Option<&[u8]>>;

    /// The writes' overlay, built on the first call; `None` when there are none.
    fn overlay(&self) -> Option<&Overlay>;
}

/// Writes kept in memory over a snapshot. Cheap to build, cloned when a speculative database
/// is extended (`with` on a `with` database).
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    // Few tables are ever written (the Datalog store uses four): a vector beats a map.
    tables: Vec<(u32, TableOverlay)>,
}

/// The overlay of one table.
#[derive(Debug, Clone)]
pub(crate) enum TableOverlay {
    /// key -> `Some(value)` set, `None` deleted.
    Plain(BTreeMap<Vec<u8>, Option<Vec<u8>>>),
    /// `(key, value)` pairs and deleted keys.
    List(ListOverlay),
}

impl TableOverlay {
    /// Whether the snapshot's entry `(key, value)` is hidden by the overlay.
    pub(crate) fn shadows(&self, key: &[u8], value: &[u8]) -> bool {
        match self {
            TableOverlay::Plain(m) => m.contains_key(key),
            TableOverlay::List(m) => m.shadows(key, value),
        }
    }
}

impl Overlay {
    /// An empty overlay (reads see the snapshot as it is).
    pub fn new() -> Self {
        Overlay::default()
    }

    /// Whether no write was recorded.
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|(_, t)| match t {
            TableOverlay::Plain(m) => m.is_empty(),
            TableOverlay::List(m) => m.is_empty(),
        })
    }

    /// The overlay of the table with id `id`, if it has one.
    #[inline]
    pub(crate) fn table(&self, id: u32) -> Option<&TableOverlay> {
        self.tables.iter().find(|(t, _)| *t == id).map(|(_, o)| o)
    }

    fn table_mut(&mut self, id: u32, kind: TableKind) -> &mut TableOverlay {
        let i = match self.tables.iter().position(|(t, _)| *t == id) {
            Some(i) => i,
            None => {
                let fresh = match kind {
                    TableKind::Plain => TableOverlay::Plain(BTreeMap::new()),
                    TableKind::List => TableOverlay::List(ListOverlay::default()),
                };
                self.tables.push((id, fresh));
                self.tables.len() - 1
            }
        };
        &mut self.tables[i].1
    }

    /// Sets `key` to `value` in a plain table (adds the value, in a list table).
    pub fn put(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.op(table.id, table.kind, OpKind::Put, key, value);
    }

    /// Removes `key` (with all its values, in a list table).
    pub fn delete(&mut self, table: &Table, key: &[u8]) {
        self.op(table.id, table.kind, OpKind::Delete, key, &[]);
    }

    /// Adds `value` to the set of `key` in a list table.
    pub fn list_add(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.op(table.id, table.kind, OpKind::ListAdd, key, value);
    }

    /// Removes `value` from the set of `key` in a list table.
    pub fn list_remove(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.op(table.id, table.kind, OpKind::ListRemove, key, value);
    }

    /// Records every op staged in `stage`, in order: the overlay then reads as LMDB would
    /// after `Stage::apply`.
    pub fn apply_stage(&mut self, stage: &Stage) {
        stage.for_each_op(|kind, id, table_kind, key, value| {
            self.op(id, table_kind, kind, key, value)
        });
    }

    pub(crate) fn op(&mut self, id: u32, kind: TableKind, op: OpKind, key: &[u8], value: &[u8]) {
        if key.is_empty() {
            // LMDB refuses empty keys; validation upstream never lets one through.
            return;
        }
        match self.table_mut(id, kind) {
            TableOverlay::Plain(m) => match op {
                OpKind::Put | OpKind::ListAdd => {
                    m.insert(key.to_vec(), Some(value.to_vec()));
                }
                OpKind::Delete => {
                    m.insert(key.to_vec(), None);
                }
                // Not a plain-table op; ignored as LMDB would ignore a missing duplicate.
                OpKind::ListRemove => {}
            },
            TableOverlay::List(m) => match op {
                OpKind::Put | OpKind::ListAdd => m.set(key, value, true),
                OpKind::ListRemove => m.set(key, value, false),
                OpKind::Delete => m.delete(key),
            },
        }
    }
}

/// The entries the overlay adds within the bounds, in the given order.
pub(crate) fn present_in_range<'t>(
    o: &'t TableOverlay,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    forward: bool,
) -> Box<dyn Iterator<Item = (&'t [u8], &'t [u8])> + 't> {
    match o {
        TableOverlay::Plain(m) => {
            let it = m
                .range::<[u8], _>((lower, upper))
                .filter_map(|(k, v)| v.as_deref().map(|v| (k.as_slice(), v)));
            if forward {
                Box::new(it)
            } else {
                Box::new(it.rev())
            }
        }
        TableOverlay::List(m) => {
            let it = m
                .pairs_in(lower, upper)
                .filter(|(_, _, present)| *present)
                .map(|(k, v, _)| (k, v));
            if forward {
                Box::new(it)
            } else {
                Box::new(it.rev())
            }
        }
    }
}

/// The smallest key greater than every key starting with `prefix` (`None`: no such key, the
/// prefix is empty or all 0xFF).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Merges a snapshot's entries (minus those the overlay shadows) with the overlay's present
/// entries; both sides come in the same order.
pub(crate) struct Merge<'t, B, E>
where
    B: Iterator<Item = Result<(&'t [u8], &'t [u8]), E>>,
{
    pub(crate) base: std::iter::Peekable<B>,
    pub(crate) over: std::iter::Peekable<Box<dyn Iterator<Item = (&'t [u8], &'t [u8])> + 't>>,
    pub(crate) shadow: &'t TableOverlay,
    pub(crate) forward: bool,
}

impl<'t, B, E> Iterator for Merge<'t, B, E>
where
    B: Iterator<Item = Result<(&'t [u8], &'t [u8]), E>>,
{
    type Item = Result<(&'t [u8], &'t [u8]), E>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let take_base = match (self.base.peek(), self.over.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) => true,
                (Some(Ok(_)), None) => true,
                (None, Some(_)) => false,
                (Some(Ok(b)), Some(o)) => {
                    let ord = (b.0, b.1).cmp(&(o.0, o.1));
                    if self.forward {
                        ord.is_lt()
                    } else {
                        ord.is_gt()
                    }
                }
            };
            if !take_base {
                return self.over.next().map(Ok);
            }
            // A snapshot entry the overlay decides about is dropped when its turn comes, not
            // before: a run of them (the overlay repeating writes the snapshot already holds)
            // then costs nothing until the reader gets there, so `last` stays one step.
            match self.base.peek() {
                Some(Ok((k, v))) if self.shadow.shadows(k, v) => {
                    self.base.next();
                }
                _ => return self.base.next(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Random snapshot contents, random overlay writes on top; every read of the overlaid view
    //! is compared with a `BTreeMap` model of the merged state.

    use super::*;
    use crate::kv::unapplied::{Group, Lazy};
    use crate::kv::wal::Logged;
    use crate::kv::{Direction, Durability, EnvOptions, Environment, KvOp, View};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::Arc;

    #[derive(Debug, Clone)]
    enum Op {
        Put(Vec<u8>, Vec<u8>),
        Delete(Vec<u8>),
        ListAdd(Vec<u8>, Vec<u8>),
        ListRemove(Vec<u8>, Vec<u8>),
        ListDelete(Vec<u8>),
    }

    /// Short byte strings over a tiny alphabet, so keys and values collide often.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xFF]), 1..4)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (bytes(), bytes()).prop_map(|(k, v)| Op::Put(k, v)),
            bytes().prop_map(Op::Delete),
            (bytes(), bytes()).prop_map(|(k, v)| Op::ListAdd(k, v)),
            (bytes(), bytes()).prop_map(|(k, v)| Op::ListRemove(k, v)),
            bytes().prop_map(Op::ListDelete),
        ]
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        prop_oneof![
            Just(Bound::Unbounded),
            bytes().prop_map(Bound::Included),
            bytes().prop_map(Bound::Excluded),
        ]
    }

    #[derive(Default, Clone)]
    struct Model {
        plain: BTreeMap<Vec<u8>, Vec<u8>>,
        list: BTreeSet<(Vec<u8>, Vec<u8>)>,
    }

    impl Model {
        fn apply(&mut self, op: &Op) {
            match op {
                Op::Put(k, v) => {
                    self.plain.insert(k.clone(), v.clone());
                }
                Op::Delete(k) => {
                    self.plain.remove(k);
                }
                Op::ListAdd(k, v) => {
                    self.list.insert((k.clone(), v.clone()));
                }
                Op::ListRemove(k, v) => {
                    self.list.remove(&(k.clone(), v.clone()));
                }
                Op::ListDelete(k) => self.list.retain(|(x, _)| x != k),
            }
        }
    }

    fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match b {
            Bound::Included(x) => Bound::Included(x.as_slice()),
            Bound::Excluded(x) => Bound::Excluded(x.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        }
    }

    fn within(k: &[u8], lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
        let above = match lo {
            Bound::Included(l) => k >= l,
            Bound::Excluded(l) => k > l,
            Bound::Unbounded => true,
        };
        let below = match hi {
            Bound::Included(h) => k <= h,
            Bound::Excluded(h) => k < h,
            Bound::Unbounded => true,
        };
        above && below
    }

    type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

    fn collect(it: crate::kv::Entries<'_>) -> Pairs {
        it.map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn model_pairs(
        m: &Model,
        list: bool,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        forward: bool,
    ) -> Pairs {
        let mut out: Pairs = if list {
            m.list
                .iter()
                .filter(|(k, _)| within(k, lo, hi))
                .cloned()
                .collect()
        } else {
            m.plain
                .iter()
                .filter(|(k, _)| within(k, lo, hi))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        if !forward {
            out.reverse();
        }
        out
    }

    fn inverted(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
        match (lo, hi) {
            (Bound::Included(a), Bound::Included(b)) => a > b,
            (Bound::Included(a), Bound::Excluded(b))
            | (Bound::Excluded(a), Bound::Included(b))
            | (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
            _ => false,
        }
    }

    fn check(
        view: View<'_>,
        plain: &Table,
        list: &Table,
        m: &Model,
        probes: &[Vec<u8>],
        bounds: &[(Bound<Vec<u8>>, Bound<Vec<u8>>)],
    ) {
        // One list reader across every probe (sorted, then in the given order), from every
        // start value: the values of the key from that value on.
        let all_list = model_pairs(m, true, Bound::Unbounded, Bound::Unbounded, true);
        let mut sorted = probes.to_vec();
        sorted.sort();
        let mut reader = view.list_reader(list).unwrap();
        for p in sorted.iter().chain(probes) {
            for from in std::iter::once(&Vec::new()).chain(probes) {
                let want: Vec<Vec<u8>> = all_list
                    .iter()
                    .filter(|(k, v)| k == p && v >= from)
                    .map(|(_, v)| v.clone())
                    .collect();
                let mut got = Vec::new();
                reader
                    .each_from(p, from, |v| {
                        got.push(v.to_vec());
                        Ok(true)
                    })
                    .unwrap();
                assert_eq!(got, want, "list_reader {p:?} from {from:?}");
            }
        }
        assert!(view.list_reader(plain).is_err());
        for (t, is_list) in [(plain, false), (list, true)] {
            for (lo, hi) in bounds {
                let (lo, hi) = (as_ref(lo), as_ref(hi));
                for (dir, fwd) in [(Direction::Forward, true), (Direction::Backward, false)] {
                    let want = if inverted(lo, hi) {
                        vec![]
                    } else {
                        model_pairs(m, is_list, lo, hi, fwd)
                    };
                    assert_eq!(
                        collect(view.range(t, lo, hi, dir).unwrap()),
                        want,
                        "range {lo:?} {hi:?} {dir:?} {t:?} overlay {}",
                        view.overlay().is_some()
                    );
                }
                let mut each = Vec::new();
                view.range_each(t, lo, hi, |k, v| {
                    each.push((k.to_vec(), v.to_vec()));
                    Ok(true)
                })
                .unwrap();
                let want = if inverted(lo, hi) {
                    vec![]
                } else {
                    model_pairs(m, is_list, lo, hi, true)
                };
                assert_eq!(each, want, "range_each {lo:?} {hi:?} {t:?}");
                if !inverted(lo, hi) {
                    let n = model_pairs(m, is_list, lo, hi, true).len() as u64;
                    assert_eq!(view.count_range(t, lo, hi).unwrap(), n);
                }
            }
            let all = model_pairs(m, is_list, Bound::Unbounded, Bound::Unbounded, true);
            assert_eq!(view.len(t).unwrap(), all.len() as u64, "len of {t:?}");
            let first = view
                .first(t)
                .unwrap()
                .map(|(k, v)| (k.to_vec(), v.to_vec()));
            let last = view.last(t).unwrap().map(|(k, v)| (k.to_vec(), v.to_vec()));
            assert_eq!(first.as_ref(), all.first());
            assert_eq!(last.as_ref(), all.last());
            for p in probes {
                for (dir, fwd) in [(Direction::Forward, true), (Direction::Backward, false)] {
                    let mut want: Pairs = all
                        .iter()
                        .filter(|(k, _)| k.starts_with(p))
                        .cloned()
                        .collect();
                    if !fwd {
                        want.reverse();
                    }
                    assert_eq!(
                        collect(view.prefix(t, p, dir).unwrap()),
                        want,
                        "prefix {p:?} {dir:?} {t:?}"
                    );
                }
                let values: Vec<Vec<u8>> = all
                    .iter()
                    .filter(|(k, _)| k == p)
                    .map(|(_, v)| v.clone())
                    .collect();
                assert_eq!(
                    view.get(t, p).unwrap().map(<[u8]>::to_vec),
                    values.first().cloned(),
                    "get {p:?}"
                );
                if is_list {
                    let got: Vec<Vec<u8>> = view
                        .list(t, p)
                        .unwrap()
                        .map(|v| v.map(<[u8]>::to_vec))
                        .collect::<Result<_, _>>()
                        .unwrap();
                    assert_eq!(got, values, "list {p:?}");
                    let mut each = Vec::new();
                    view.list_each(t, p, |v| {
                        each.push(v.to_vec());
                        Ok(true)
                    })
                    .unwrap();
                    assert_eq!(each, values, "list_each {p:?}");
                    assert_eq!(view.list_count(t, p).unwrap(), values.len() as u64);
                    for v in probes {
                        assert_eq!(
                            view.list_contains(t, p, v).unwrap(),
                            values.contains(v),
                            "list_contains {p:?} {v:?}"
                        );
                    }
                }
            }
        }
    }

    fn to_overlay(o: &mut Overlay, plain: &Table, list: &Table, op: &Op) {
        match op {
            Op::Put(k, v) => o.put(plain, k, v),
            Op::Delete(k) => o.delete(plain, k),
            Op::ListAdd(k, v) => o.list_add(list, k, v),
            Op::ListRemove(k, v) => o.list_remove(list, k, v),
            Op::ListDelete(k) => o.delete(list, k),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn overlaid_reads_equal_the_model(
            base in prop::collection::vec(op(), 0..40),
            over in prop::collection::vec(op(), 0..40),
            cut in 0usize..40,
            probes in prop::collection::vec(bytes(), 1..6),
            bounds in prop::collection::vec((bound(), bound()), 1..6),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let env = Environment::open(dir.path(), EnvOptions::with_durability(Durability::NoSync)).unwrap();
            let plain = env.table("p", TableKind::Plain).unwrap();
            let list = env.table("l", TableKind::List).unwrap();
            let mut model = Model::default();
            let mut ops = Vec::new();
            for op in &base {
                model.apply(op);
                ops.push(match op {
                    Op::Put(k, v) => KvOp::put(&plain, k.clone(), v.clone()),
                    Op::Delete(k) => KvOp::delete(&plain, k.clone()),
                    Op::ListAdd(k, v) => KvOp::list_add(&list, k.clone(), v.clone()),
                    Op::ListRemove(k, v) => KvOp::list_remove(&list, k.clone(), v.clone()),
                    Op::ListDelete(k) => KvOp::delete(&list, k.clone()),
                });
            }
            env.transact_kv(ops).unwrap();
            // Into LMDB: the snapshot then has no overlay of its own, which the overlays
            // below would replace.
            env.apply_logged().unwrap();
            let snap = env.read().unwrap();
            // No overlay: the snapshot as it is.
            check(snap.view(), &plain, &list, &model, &probes, &bounds);
            // An empty overlay changes nothing.
            let empty = Overlay::new();
            check(snap.view().with_overlay(&empty), &plain, &list, &model, &probes, &bounds);
            let mut overlay = Overlay::new();
            for op in &over {
                model.apply(op);
                to_overlay(&mut overlay, &plain, &list, op);
            }
            check(snap.view().with_overlay(&overlay), &plain, &list, &model, &probes, &bounds);
            // The same writes as two committed groups LMDB does not hold yet, merged only
            // into the reads that meet them.
            let lazy = Lazy::new(std::time::Duration::from_secs(3600), false);
            let cut = cut.min(over.len());
            for (seq, ops) in [(1, &over[..cut]), (2, &over[cut..])] {
                let mut stage = Stage::default();
                ops.iter().for_each(|op| to_stage(&mut stage, &plain, &list, op));
                lazy.publish(Group::new(seq, Arc::new(stage), Logged::for_test(seq, seq * 100, 100)));
            }
            let version = lazy.current();
            check(snap.view().with_overlay_on_demand(&*version), &plain, &list, &model, &probes, &bounds);
        }
    }

    fn to_stage(s: &mut Stage, plain: &Table, list: &Table, op: &Op) {
        match op {
            Op::Put(k, v) => s.put(plain, k, v),
            Op::Delete(k) => s.delete(plain, k),
            Op::ListAdd(k, v) => s.list_add(list, k, v),
            Op::ListRemove(k, v) => s.list_remove(list, k, v),
            Op::ListDelete(k) => s.delete(list, k),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Fixed-width list tables read in pages (several pages per key when a key has many
        /// values) give the values of the model, with and without an overlay.
        #[test]
        fn fixed_width_blocks_equal_the_model(
            adds in prop::collection::vec((bytes(), 0u64..3000), 0..2500),
            many in prop::collection::vec(0u64..100_000, 0..1500),
            over in prop::collection::vec((bytes(), 0u64..3000, any::<bool>()), 0..20),
            bounds in prop::collection::vec((bound(), bound()), 1..6),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let env = Environment::open(dir.path(), EnvOptions::with_durability(Durability::NoSync)).unwrap();
            let t = env.fixed_list_table("f", 8).unwrap();
            let mut model: BTreeSet<(Vec<u8>, Vec<u8>)> = BTreeSet::new();
            let mut ops = Vec::new();
            // One key with many values: several value pages.
            let adds = adds.into_iter().chain(many.into_iter().map(|n| (vec![1u8], n)));
            for (k, n) in adds {
                let v = n.to_be_bytes().to_vec();
                model.insert((k.clone(), v.clone()));
                ops.push(KvOp::list_add(&t, k, v));
            }
            env.transact_kv(ops).unwrap();
            // Into LMDB: the snapshot then has no overlay of its own, which the overlays
            // below would replace.
            env.apply_logged().unwrap();
            let snap = env.read().unwrap();
            let mut overlay = Overlay::new();
            let mut overlaid = model.clone();
            for (k, n, add) in &over {
                let v = n.to_be_bytes().to_vec();
                if *add {
                    overlay.list_add(&t, k, &v);
                    overlaid.insert((k.clone(), v));
                } else {
                    overlay.list_remove(&t, k, &v);
                    overlaid.remove(&(k.clone(), v));
                }
            }
            for (view, m) in [(snap.view(), &model), (snap.view().with_overlay(&overlay), &overlaid)] {
                let keys: BTreeSet<Vec<u8>> = m.iter().map(|(k, _)| k.clone()).collect();
                for k in keys.iter().chain([vec![9u8]].iter()) {
                    let want: Vec<Vec<u8>> =
                        m.iter().filter(|(x, _)| x == k).map(|(_, v)| v.clone()).collect();
                    let mut got = Vec::new();
                    view.list_blocks(&t, k, |b, w| {
                        assert_eq!(w, 8);
                        got.extend(b.chunks_exact(w).map(<[u8]>::to_vec));
                        Ok(true)
                    }).unwrap();
                    prop_assert_eq!(got, want, "list_blocks {:?}", k);
                }
                for (lo, hi) in &bounds {
                    let (lo, hi) = (as_ref(lo), as_ref(hi));
                    let want: Pairs = if inverted(lo, hi) {
                        vec![]
                    } else {
                        m.iter().filter(|(k, _)| within(k, lo, hi)).cloned().collect()
                    };
                    let mut got = Vec::new();
                    view.range_blocks(&t, lo, hi, |k, b, w| {
                        got.extend(b.chunks_exact(w).map(|v| (k.to_vec(), v.to_vec())));
                        Ok(true)
                    }).unwrap();
                    prop_assert_eq!(got, want, "range_blocks {:?} {:?}", lo, hi);
                }
            }
        }
    }

    #[test]
    fn overlay_fed_from_a_stage_reads_like_the_committed_stage() {
        let dir = tempfile::tempdir().unwrap();
        let env =
            Environment::open(dir.path(), EnvOptions::with_durability(Durability::NoSync)).unwrap();
        let plain = env.table("p", TableKind::Plain).unwrap();
        let list = env.table("l", TableKind::List).unwrap();
        env.transact_kv(vec![
            KvOp::put(&plain, b"a".to_vec(), b"1".to_vec()),
            KvOp::list_add(&list, b"k".to_vec(), b"x".to_vec()),
        ])
        .unwrap();
        env.apply_logged().unwrap();
        let mut stage = Stage::default();
        stage.put(&plain, b"b", b"2");
        stage.delete(&plain, b"a");
        stage.list_add(&list, b"k", b"y");
        stage.list_remove(&list, b"k", b"x");
        let mut overlay = Overlay::new();
        overlay.apply_stage(&stage);
        let snap = env.read().unwrap();
        let v = snap.view().with_overlay(&overlay);
        let cases: [(&Table, &[u8], Option<&[u8]>); 3] = [
            (&plain, b"a", None),
            (&plain, b"b", Some(b"2")),
            (&list, b"k", Some(b"y")),
        ];
        for (t, k, want) in cases {
            assert_eq!(v.get(t, k).unwrap(), want);
        }
        assert_eq!(v.len(&list).unwrap(), 1);
    }

    #[test]
    fn a_run_of_entries_both_sides_hold_is_not_walked_to_read_the_last() {
        // The overlay repeats the snapshot's last 10,000 entries (as after the applier wrote
        // them): reading backwards, the first entry must come after a step or two of the
        // snapshot, not after skipping all of them.
        let keys: Vec<Vec<u8>> = (0u32..10_000).map(|i| i.to_be_bytes().to_vec()).collect();
        let mut o = Overlay::new();
        for k in &keys {
            o.op(1, TableKind::Plain, OpKind::Put, k, b"v");
        }
        let table = o.table(1).unwrap();
        let stepped = std::cell::Cell::new(0usize);
        let base = keys.iter().rev().map(|k| {
            stepped.set(stepped.get() + 1);
            Ok::<_, ()>((k.as_slice(), b"v".as_slice()))
        });
        let mut merged = Merge {
            base: base.peekable(),
            over: present_in_range(table, Bound::Unbounded, Bound::Unbounded, false).peekable(),
            shadow: table,
            forward: false,
        };
        assert_eq!(
            merged.next(),
            Some(Ok((keys[9_999].as_slice(), b"v".as_slice())))
        );
        assert!(
            stepped.get() <= 2,
            "{} snapshot entries read",
            stepped.get()
        );
        // Read to the end, it is still every entry once.
        assert_eq!(merged.count(), 9_999);
    }
}
