//! Staged writes: what a request wants written, collected before anything touches LMDB, so a
//! request that fails validation leaves no trace (the committer just truncates the stage).
//!
//! This file: the stage itself (ops in one byte arena), staging, marks and reading ops back;
//! `apply`: writing a stage into an LMDB transaction (sorted by table and key, a large one
//! sorted on a helper thread); `tests`.

mod apply;
#[cfg(test)]
mod tests;

use super::table::{RawDb, Table, TableKind};
use super::wal::{Derivation, LoggedOpKind};
use apply::{op_bytes, SortKey, SortedOps};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Plain table: set the value of a key.
    Put,
    /// Plain table: remove a key. List table: remove a key with all its values.
    Delete,
    /// List table: add one value to a key's set.
    ListAdd,
    /// List table: remove one value from a key's set.
    ListRemove,
}

/// How a [`OpKind::ListAdd`] reaches its place in LMDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// A search from the root.
    Search,
    /// A key past every key the table holds when the op is applied, with its first value
    /// (LMDB `MDB_APPEND`: no search, and full pages on split).
    Append,
    /// A value past every value of an existing key (`MDB_APPENDDUP`).
    AppendDup,
    /// An ordinary insert, one of a sorted run (searched from the previous insert's page).
    Sorted,
}

#[derive(Clone, Copy)]
struct StagedOp {
    kind: OpKind,
    placement: Placement,
    db: RawDb,
    /// The table's identity and kind, for an [`super::overlay::Overlay`] fed from a stage.
    table: u32,
    table_kind: TableKind,
    /// A list table's op, or one of a table no writer reads: what the committer may hold
    /// back from its overlay ([`Stage::for_each_kept_op_in`]).
    deferrable: bool,
    /// Staged by [`Stage::put_deriving`]: its source put, or a write derived from it.
    by_derivation: bool,
    /// For list adds and removes: the tally (see [`Stage::tallies`]) that counts the keys this
    /// op creates or empties; [`NO_TALLY`] for none.
    tally: u32,
    key_end: usize,
    value_end: usize,
}

/// The tally of an op that counts nothing.
const NO_TALLY: u32 = u32::MAX;

/// An append-only buffer of writes. Keys and values live in one byte arena so staging a
/// thousand small writes costs a few allocations, not thousands.
#[derive(Default, Clone)]
pub struct Stage {
    bytes: Vec<u8>,
    ops: Vec<StagedOp>,
    /// Scratch: the order `apply` writes a transaction's ops in.
    order: Vec<SortKey>,
    /// Scratch: a transaction's ops copied out in that order (`apply`).
    sorted: Box<SortedOps>,
    /// Scratch: the same for the tables after the first, when `apply` splits the work.
    sorted_rest: Box<SortedOps>,
    /// Per tally, keys created minus keys emptied by the tallied ops applied so far.
    tallies: Vec<(u32, i64)>,
    /// The derivation [`Stage::put_deriving`] staged with, and the tables it wrote: `None`
    /// until it is called (and after `clear`).
    derived_with: Option<DerivedWith>,
}

/// What [`Stage::put_deriving`] staged with: a derivation's name, its source table and its
/// tables' ids, in [`Derivation::tables`] order; `mixed` when two calls differed (then no
/// group of this stage counts as derived by construction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DerivedWith {
    pub(crate) name: String,
    pub(crate) source: u32,
    pub(crate) tables: Vec<u32>,
    pub(crate) mixed: bool,
}

/// A position in a [`Stage`] to roll back to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    bytes: usize,
    ops: usize,
}

impl Mark {
    /// Before every op.
    pub(crate) const START: Mark = Mark { bytes: 0, ops: 0 };

    /// Ops staged before this mark.
    pub(crate) fn ops(&self) -> usize {
        self.ops
    }
}

impl Stage {
    fn push(&mut self, kind: OpKind, table: &Table, key: &[u8], value: &[u8]) {
        self.push_placed(kind, Placement::Search, table, key, value);
    }

    fn push_placed(
        &mut self,
        kind: OpKind,
        placement: Placement,
        table: &Table,
        key: &[u8],
        value: &[u8],
    ) {
        self.push_tallied(kind, placement, NO_TALLY, table, key, value);
    }

    fn push_tallied(
        &mut self,
        kind: OpKind,
        placement: Placement,
        tally: u32,
        table: &Table,
        key: &[u8],
        value: &[u8],
    ) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ops.push(StagedOp {
            kind,
            placement,
            db: table.db,
            table: table.id,
            table_kind: table.kind,
            deferrable: table.kind == TableKind::List || table.unread_by_writers,
            by_derivation: false,
            tally,
            key_end,
            value_end: self.bytes.len(),
        });
    }

    /// Sets `key` to `value` in a plain table.
    pub fn put(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push(OpKind::Put, table, key, value);
    }

    /// Sets `key` to `value` in the plain table `source`, then stages every write `d` derives
    /// from that put, into `tables` (in [`Derivation::tables`] order), right after it. The
    /// log then leaves the derived writes out of a group's record without comparing them with
    /// a second derivation (`kv::wal::derive`): they are the derivation's own output. A
    /// derivation that fails leaves nothing staged and says why.
    pub fn put_deriving(
        &mut self,
        source: &Table,
        key: &[u8],
        value: &[u8],
        d: &dyn Derivation,
        tables: &[&Table],
    ) -> Result<(), String> {
        if tables.len() != d.tables().len() {
            return Err(format!(
                "derivation {} writes {} tables, given {}",
                d.name(),
                d.tables().len(),
                tables.len()
            ));
        }
        let mark = self.mark();
        self.put(source, key, value);
        let derived = d.derive(key, value, &mut |op| {
            let table = tables[op.table];
            let tally = op.tally.unwrap_or(NO_TALLY);
            let kind = match op.kind {
                LoggedOpKind::Put => OpKind::Put,
                LoggedOpKind::Delete => OpKind::Delete,
                LoggedOpKind::ListAdd => OpKind::ListAdd,
                LoggedOpKind::ListRemove => OpKind::ListRemove,
            };
            self.push_tallied(kind, Placement::Search, tally, table, op.key, op.value);
        });
        if let Err(e) = derived {
            self.rollback(mark);
            return Err(e);
        }
        for op in &mut self.ops[mark.ops..] {
            op.by_derivation = true;
        }
        // Compared without allocating: a batch's transactions all stage with one derivation.
        match &mut self.derived_with {
            Some(w) => {
                w.mixed |= w.name != d.name()
                    || w.source != source.id
                    || !w.tables.iter().copied().eq(tables.iter().map(|t| t.id));
            }
            None => {
                self.derived_with = Some(DerivedWith {
                    name: d.name().to_string(),
                    source: source.id,
                    tables: tables.iter().map(|t| t.id).collect(),
                    mixed: false,
                })
            }
        }
        Ok(())
    }

    /// Whether [`Stage::put_deriving`] staged every put of `source` and every write to one of
    /// `tables` in this stage, with a derivation named `name` writing exactly `tables`; and
    /// there is at least one such put.
    pub(crate) fn derived_by_construction(
        &self,
        name: &str,
        source: u32,
        tables: &[Option<u32>],
    ) -> bool {
        let Some(w) = &self.derived_with else {
            return false;
        };
        let same_tables = w.tables.iter().map(|t| Some(*t)).eq(tables.iter().copied());
        if w.mixed || w.name != name || w.source != source || !same_tables {
            return false;
        }
        let mut sources = 0;
        for op in &self.ops {
            let derived = op.table != source && tables.contains(&Some(op.table));
            let sourced = op.table == source && op.kind == OpKind::Put;
            if (derived || sourced) && !op.by_derivation {
                return false;
            }
            sources += sourced as usize;
        }
        sources > 0
    }

    /// Removes `key` (and for a list table every value of it).
    pub fn delete(&mut self, table: &Table, key: &[u8]) {
        self.push(OpKind::Delete, table, key, &[]);
    }

    /// Adds `value` to the set of `key` in a list table (no-op if present).
    pub fn list_add(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push(OpKind::ListAdd, table, key, value);
    }

    /// [`Stage::list_add`] (`add`) or [`Stage::list_remove`] that also counts, under `tally`
    /// (when given; not `u32::MAX`), whether an add creates `key` (it had no value before:
    /// +1) or a removal empties it (-1). Learning that from the write itself spares a lookup
    /// per key before it: the distinct-value statistics of the Datalog store.
    pub fn list_change_tallied(
        &mut self,
        add: bool,
        table: &Table,
        key: &[u8],
        value: &[u8],
        tally: Option<u32>,
    ) {
        let kind = if add {
            OpKind::ListAdd
        } else {
            OpKind::ListRemove
        };
        let tally = tally.unwrap_or(NO_TALLY);
        self.push_tallied(kind, Placement::Search, tally, table, key, value);
    }

    /// Per tally, the keys created minus the keys emptied by the tallied ops applied since the
    /// stage was last cleared (only ops that reached LMDB count: a rejected request's never
    /// do).
    pub fn tallies(&self) -> &[(u32, i64)] {
        &self.tallies
    }

    /// Bulk loads of sorted data: adds `key` with its first `value` to a list table. The
    /// caller guarantees that `key` sorts after every key of the table when this op is applied
    /// (after the ops staged before it). A violated guarantee fails the batch
    /// (`MDB_KEYEXIST`); it never writes out of order.
    pub fn list_append(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push_placed(OpKind::ListAdd, Placement::Append, table, key, value);
    }

    /// Bulk loads of sorted data: adds another `value` to `key` (which must be there, at any
    /// place in the table); the caller guarantees that `value` sorts after every value `key`
    /// holds when this op is applied (`MDB_KEYEXIST` fails the batch otherwise).
    pub fn list_append_dup(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push_placed(OpKind::ListAdd, Placement::AppendDup, table, key, value);
    }

    /// Reserves room for `ops` more writes of `bytes` key and value bytes in all, and a little
    /// more: a batch ends with a few writes of its own (counters, statistics), which must not
    /// find a full stage (its growth would copy every staged byte).
    pub fn reserve(&mut self, ops: usize, bytes: usize) {
        const SLACK_OPS: usize = 256;
        const SLACK_BYTES: usize = 16 << 10;
        self.ops.reserve(ops + SLACK_OPS);
        self.bytes.reserve(bytes + SLACK_BYTES);
    }

    /// Bulk loads of sorted data: adds `value` to the set of `key` in a list table like
    /// [`Stage::list_add`] (no-op if present), as one of a run of adds in ascending order.
    pub fn list_add_sorted(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push_placed(OpKind::ListAdd, Placement::Sorted, table, key, value);
    }

    /// [`Stage::list_append`] (`append`) or [`Stage::list_add_sorted`] that also counts under
    /// `tally` whether it creates `key`, as [`Stage::list_change_tallied`] does: a bulk load's
    /// AVE writes, whose new distinct values are then counted as LMDB takes them, wherever
    /// and whenever that is (the committer, the LMDB writer, a replay).
    pub fn list_place_tallied(
        &mut self,
        append: bool,
        table: &Table,
        key: &[u8],
        value: &[u8],
        tally: u32,
    ) {
        let placement = if append {
            Placement::Append
        } else {
            Placement::Sorted
        };
        self.push_tallied(OpKind::ListAdd, placement, tally, table, key, value);
    }

    /// Removes `value` from the set of `key` in a list table (no-op if absent).
    pub fn list_remove(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push(OpKind::ListRemove, table, key, value);
    }

    /// Bytes staged so far.
    pub fn staged_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Number of writes staged so far.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            bytes: self.bytes.len(),
            ops: self.ops.len(),
        }
    }

    /// Each op's table id and key, from `from` on.
    pub(crate) fn keys_from(&self, from: Mark) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        (from.ops..self.ops.len()).map(|i| (self.ops[i].table, self.op_bytes(i).0))
    }

    /// A copy of the staged ops holding no more memory than they need, and none of the
    /// scratch buffers: what a committed group keeps while it waits for LMDB.
    pub(crate) fn compact(&self) -> Stage {
        Stage {
            bytes: self.bytes.clone(),
            ops: self.ops.clone(),
            tallies: self.tallies.clone(),
            ..Stage::default()
        }
    }

    /// The table id and key of each deferrable op (see [`Stage::for_each_kept_op_in`]) in
    /// `range`, in order.
    pub(crate) fn deferrable_keys_in(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let range = range.start.min(self.ops.len())..range.end.min(self.ops.len());
        range
            .filter(|&i| self.ops[i].deferrable)
            .map(|i| (self.ops[i].table, self.op_bytes(i).0))
    }

    /// Stages a copy of every op of `other` after this stage's own, in order.
    pub(crate) fn append_from(&mut self, other: &Stage) {
        let base = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.ops.extend(other.ops.iter().map(|op| StagedOp {
            key_end: op.key_end + base,
            value_end: op.value_end + base,
            ..*op
        }));
    }

    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.bytes.truncate(mark.bytes);
        self.ops.truncate(mark.ops);
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ops.clear();
        self.tallies.clear();
        self.derived_with = None;
        // A bulk load stages hundreds of MB once; do not keep that much for ordinary batches.
        const KEEP_BYTES: usize = 64 << 20;
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes.shrink_to(KEEP_BYTES);
            self.ops.shrink_to(KEEP_BYTES / 64);
        }
        for sorted in [&mut self.sorted, &mut self.sorted_rest] {
            if sorted.bytes.capacity() > KEEP_BYTES {
                sorted.bytes.shrink_to(KEEP_BYTES);
                sorted.ops.shrink_to(KEEP_BYTES / 64);
            }
        }
    }

    /// Calls `f(op, table id, table kind, key, value)` for every staged op, in order.
    pub(crate) fn for_each_op<'s>(
        &'s self,
        f: impl FnMut(OpKind, u32, TableKind, &'s [u8], &'s [u8]),
    ) {
        self.for_each_op_in(0..self.ops.len(), f)
    }

    /// Calls `f(kind, table id, tally, key, value)` for every staged op in order; the tally is
    /// `None` for an op that counts nothing.
    pub(crate) fn for_each_op_tallied(
        &self,
        mut f: impl FnMut(OpKind, u32, Option<u32>, &[u8], &[u8]),
    ) {
        let mut start = 0;
        for op in &self.ops {
            let key = &self.bytes[start..op.key_end];
            let value = &self.bytes[op.key_end..op.value_end];
            start = op.value_end;
            let tally = (op.tally != NO_TALLY).then_some(op.tally);
            f(op.kind, op.table, tally, key, value);
        }
    }

    /// Op `i` (staged order) as `(kind, table id, tally, key, value)`.
    pub(crate) fn op(&self, i: usize) -> (OpKind, u32, Option<u32>, &[u8], &[u8]) {
        let op = &self.ops[i];
        let (key, value) = op_bytes(&self.bytes, &self.ops, i);
        let tally = (op.tally != NO_TALLY).then_some(op.tally);
        (op.kind, op.table, tally, key, value)
    }

    /// Forgets the tallies counted so far (an attempt at applying the stage was abandoned).
    pub(crate) fn forget_tallies(&mut self) {
        self.tallies.clear();
    }

    /// [`Stage::for_each_op`] for the ops numbered `range` only.
    pub(crate) fn for_each_op_in<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(OpKind, u32, TableKind, &'s [u8], &'s [u8]),
    ) {
        self.for_each_staged_in(range, |op, key, value| {
            f(op.kind, op.table, op.table_kind, key, value)
        });
    }

    /// [`Stage::for_each_op_in`], holding back the deferrable ops when `defer` (those of list
    /// tables and of tables no writer reads, `Table::unread_by_writers`): the committer adds
    /// the others to its overlay and records the held-back ones' keys
    /// ([`Stage::deferrable_keys_in`]). Returns whether it held any back.
    pub(crate) fn for_each_kept_op_in<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        defer: bool,
        mut f: impl FnMut(OpKind, u32, TableKind, &'s [u8], &'s [u8]),
    ) -> bool {
        let mut held = false;
        self.for_each_staged_in(range, |op, key, value| match defer && op.deferrable {
            true => held = true,
            false => f(op.kind, op.table, op.table_kind, key, value),
        });
        held
    }

    /// [`Stage::for_each_op_in`] for the deferrable ops only (those
    /// [`Stage::for_each_kept_op_in`] holds back).
    pub(crate) fn for_each_deferrable_op_in<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(OpKind, u32, TableKind, &'s [u8], &'s [u8]),
    ) {
        self.for_each_staged_in(range, |op, key, value| {
            if op.deferrable {
                f(op.kind, op.table, op.table_kind, key, value)
            }
        });
    }

    fn for_each_staged_in<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(&StagedOp, &'s [u8], &'s [u8]),
    ) {
        let range = range.start.min(self.ops.len())..range.end.min(self.ops.len());
        let mut start = match range.start {
            0 => 0,
            i => self.ops[i - 1].value_end,
        };
        for op in &self.ops[range] {
            let key = &self.bytes[start..op.key_end];
            let value = &self.bytes[op.key_end..op.value_end];
            start = op.value_end;
            f(op, key, value);
        }
    }
}
