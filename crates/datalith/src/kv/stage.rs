//! Staged writes: what a request wants written, collected before anything touches LMDB, so a
//! request that fails validation leaves no trace (the committer just truncates the stage).

use super::lmdb::{LmdbError, PutFlags, RwTxn, WriteCursor};
use crate::limits::SORT_HELPER_NICE;

use super::table::{RawDb, Table, TableKind};

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
            tally,
            key_end,
            value_end: self.bytes.len(),
        });
    }

    /// Sets `key` to `value` in a plain table.
    pub fn put(&mut self, table: &Table, key: &[u8], value: &[u8]) {
        self.push(OpKind::Put, table, key, value);
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

    /// Writes every staged op from `from` on into the transaction.
    ///
    /// A transaction's ops (all placed by search) are written grouped by table and in key
    /// order (a stable sort: ops on one key keep their order, and ops on different keys do not
    /// interact), inserts through one cursor per table: LMDB then finds the next key on the
    /// leaf page the cursor already holds instead of descending from the root for every
    /// insert (entity ids and many AVE keys of one transaction are neighbours).
    pub(crate) fn apply(&mut self, from: Mark, txn: &mut RwTxn) -> Result<(), LmdbError> {
        let first = from.ops;
        if self.ops.len() - first < SORTED_APPLY_MIN_OPS
            || self.ops[first..]
                .iter()
                .any(|op| op.placement != Placement::Search)
        {
            let mut tallies = std::mem::take(&mut self.tallies);
            let result = self.apply_in_order(from, txn, &mut tallies);
            self.tallies = tallies;
            return result;
        }
        // Sort keys: table, then the key's first 16 bytes as a number (entity ids, attribute
        // ids and most values differ there), then the key's length and the op's number (which
        // keeps ops on one key in their order). Keys of at most 16 bytes with one head differ
        // only by trailing zeros, so for them the shorter first is the key order; the rare
        // groups of one head that hold a longer key are put in full key order afterwards. One
        // derived comparison per step, no key bytes read: on an `add-all` of 200K ops
        // the sort with full-key tie-breaks was ~15% of the transaction.
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend((first..self.ops.len()).map(|i| {
            let key = self.op_bytes(i).0;
            let mut head = [0u8; 16];
            let n = key.len().min(16);
            head[..n].copy_from_slice(&key[..n]);
            let len_and_op = ((key.len() as u64) << 32) | i as u64;
            (
                u64::from(self.ops[i].table),
                u128::from_be_bytes(head),
                len_and_op,
            )
        }));
        let mut sorted = std::mem::take(&mut self.sorted);
        let mut rest = std::mem::take(&mut self.sorted_rest);
        let mut tallies = std::mem::take(&mut self.tallies);
        let result = if order.len() >= SPLIT_APPLY_MIN_OPS {
            self.apply_split(&mut order, from, &mut sorted, &mut rest, txn, &mut tallies)
        } else {
            self.sort_ops(&mut order);
            self.copy_out(&order, &mut sorted, self.bytes.len() - from.bytes);
            sorted.apply_sorted(txn, &mut tallies)
        };
        self.order = order;
        self.sorted = sorted;
        self.sorted_rest = rest;
        self.tallies = tallies;
        result
    }

    /// [`Stage::apply`] of a large transaction: while LMDB takes the first table's ops (a
    /// transaction's EAV ops), a helper thread sorts and copies out the other tables' (AVE,
    /// whose values come in no order: the costly sort), so the sort hides behind the writes.
    /// The helper runs at a lower CPU priority (`SORT_HELPER_NICE`), so that it does not take
    /// the core a committer woken by its log sync needs.
    /// Tables are independent, and the result is the one order `sort_ops` gives the whole.
    fn apply_split(
        &self,
        order: &mut [SortKey],
        from: Mark,
        sorted: &mut SortedOps,
        rest: &mut SortedOps,
        txn: &mut RwTxn,
        tallies: &mut Vec<(u32, i64)>,
    ) -> Result<(), LmdbError> {
        let split = partition_least_table(order);
        let (head, tail) = order.split_at_mut(split);
        // Each part's bytes are bounded by the whole's (a reservation: untouched, it costs
        // address space, not memory).
        let bytes = self.bytes.len() - from.bytes;
        let (first, helped) = std::thread::scope(|scope| {
            let helper = std::thread::Builder::new()
                .name("datalith-sort".into())
                .spawn_scoped(scope, || {
                    lower_priority(SORT_HELPER_NICE);
                    self.sort_ops(tail);
                    self.copy_out(tail, rest, bytes);
                });
            self.sort_ops(head);
            self.copy_out(head, sorted, bytes);
            let first = sorted.apply_sorted(txn, tallies);
            let helped = match helper {
                Ok(h) => match h.join() {
                    Ok(()) => true,
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(_) => false,
            };
            (first, helped)
        });
        if !helped {
            // No thread to be had: the same work here.
            self.sort_ops(tail);
            self.copy_out(tail, rest, bytes);
        }
        first?;
        rest.apply_sorted(txn, tallies)
    }

    /// Puts `order` in write order (see [`Stage::apply`]).
    fn sort_ops(&self, order: &mut [SortKey]) {
        // Stable (driftsort): it finds runs already in order (a transaction's EAV ops on new
        // entities) and merges them instead of sorting them again, and keeps ops of one key in
        // staged order by itself, so the op number is left out of the comparison: keys then
        // compare equal often (many entities share a value), which its partitioning exploits.
        order.sort_by_key(|k| (k.0, k.1, k.2 >> 32));
        let mut start = 0;
        while start < order.len() {
            let (table, head) = (order[start].0, order[start].1);
            let mut end = start + 1;
            let mut long = (order[start].2 >> 32) > 16;
            while end < order.len() && order[end].0 == table && order[end].1 == head {
                long |= (order[end].2 >> 32) > 16;
                end += 1;
            }
            if long && end - start > 1 {
                order[start..end].sort_unstable_by(|a, b| {
                    self.op_bytes(op_of(a))
                        .0
                        .cmp(self.op_bytes(op_of(b)).0)
                        .then(op_of(a).cmp(&op_of(b)))
                });
            }
            start = end;
        }
    }

    /// The ops of `order` and their bytes copied out in that order, in one pass whose reads do
    /// not wait on each other (the CPU overlaps their cache misses): LMDB then reads them in
    /// sequence instead of at random across the arena, on a 200K-op transaction ~7% of it.
    /// `bytes` bounds the bytes of those ops (reserved up front: growing would copy).
    fn copy_out(&self, order: &[SortKey], into: &mut SortedOps, bytes: usize) {
        into.clear();
        into.reserve(order.len(), bytes);
        for k in order {
            let (key, value) = self.op_bytes(op_of(k));
            let op = self.ops[op_of(k)];
            into.bytes.extend_from_slice(key);
            let key_end = into.bytes.len();
            into.bytes.extend_from_slice(value);
            into.ops.push(StagedOp {
                key_end,
                value_end: into.bytes.len(),
                ..op
            });
        }
    }

    /// The key and value of op `i`.
    fn op_bytes(&self, i: usize) -> (&[u8], &[u8]) {
        op_bytes(&self.bytes, &self.ops, i)
    }

    /// Writes the ops from `from` on in staged order.
    fn apply_in_order(
        &self,
        from: Mark,
        txn: &mut RwTxn,
        tallies: &mut Vec<(u32, i64)>,
    ) -> Result<(), LmdbError> {
        let mut start = if from.ops == 0 {
            0
        } else {
            self.ops[from.ops - 1].value_end
        };
        let ops = &self.ops[from.ops..];
        let mut i = 0;
        while i < ops.len() {
            let op = &ops[i];
            if op.placement != Placement::Search {
                // A sorted run of bulk adds to one table: one cursor for the run, so each put
                // starts from the leaf page of the previous one instead of from the root.
                let run = ops[i..]
                    .iter()
                    .take_while(|o| o.placement != Placement::Search && o.table == op.table)
                    .count();
                let mut cursor = WriteCursor::open(txn, op.db)?;
                for o in &ops[i..i + run] {
                    let key = &self.bytes[start..o.key_end];
                    let value = &self.bytes[o.key_end..o.value_end];
                    start = o.value_end;
                    let flags = match o.placement {
                        Placement::Append => PutFlags::APPEND,
                        Placement::AppendDup => PutFlags::APPEND_DUP,
                        Placement::Sorted | Placement::Search => PutFlags::NONE,
                    };
                    // Plain insert flags (never MDB_CURRENT): the cursor's position only speeds
                    // up the search.
                    cursor.put(key, value, flags)?;
                }
                i += run;
                continue;
            }
            let key = &self.bytes[start..op.key_end];
            let value = &self.bytes[op.key_end..op.value_end];
            start = op.value_end;
            match op.kind {
                OpKind::Put | OpKind::ListAdd if op.tally == NO_TALLY => {
                    txn.put(op.db, key, value, PutFlags::NONE)?
                }
                OpKind::Put | OpKind::ListAdd => {
                    if txn.put_counting(op.db, key, value)? {
                        add_tally(tallies, op.tally, 1);
                    }
                }
                OpKind::Delete => {
                    txn.del(op.db, key, None)?;
                }
                OpKind::ListRemove => remove(txn, op, key, value, tallies)?,
            }
            i += 1;
        }
        Ok(())
    }
}

/// A transaction's ops in write order with their bytes (a stage of its own: its ops'
/// `key_end`/`value_end` point into its `bytes`).
#[derive(Default, Clone)]
struct SortedOps {
    bytes: Vec<u8>,
    ops: Vec<StagedOp>,
}

impl SortedOps {
    fn clear(&mut self) {
        self.bytes.clear();
        self.ops.clear();
    }

    fn reserve(&mut self, ops: usize, bytes: usize) {
        self.ops.reserve(ops);
        self.bytes.reserve(bytes);
    }

    /// The key and value of op `i`.
    fn op_bytes(&self, i: usize) -> (&[u8], &[u8]) {
        op_bytes(&self.bytes, &self.ops, i)
    }

    /// Writes every op, in the stage's order, which is ascending key order within each table.
    fn apply_sorted(
        &self,
        txn: &mut RwTxn,
        tallies: &mut Vec<(u32, i64)>,
    ) -> Result<(), LmdbError> {
        let mut i = 0;
        while i < self.ops.len() {
            let op = &self.ops[i];
            if !matches!(op.kind, OpKind::Put | OpKind::ListAdd) {
                let (key, value) = self.op_bytes(i);
                match op.kind {
                    OpKind::Delete => {
                        txn.del(op.db, key, None)?;
                    }
                    _ => remove(txn, op, key, value, tallies)?,
                }
                i += 1;
                continue;
            }
            // A run of inserts into one table: one cursor. Keys past the table's last key (new
            // entities, new ascending values: the usual shape of fresh data) are appended
            // (`MDB_APPEND`: no search, and a split leaves the old page full, where a sorted
            // run of ordinary inserts would leave every page half empty).
            let table = op.table;
            let mut cursor = WriteCursor::open(txn, op.db)?;
            let last = cursor.last_key()?;
            let mut past_end = false;
            // The previous appended (key, value).
            let mut appended: Option<(&[u8], &[u8])> = None;
            while i < self.ops.len() {
                let op = &self.ops[i];
                if op.table != table || !matches!(op.kind, OpKind::Put | OpKind::ListAdd) {
                    break;
                }
                let (key, value) = self.op_bytes(i);
                i += 1;
                // Sorted ascending: once past the end, every later key of the run is too.
                past_end = past_end || last.as_deref().is_none_or(|l| key > l);
                if past_end {
                    let list = op.table_kind != TableKind::Plain;
                    let flags = match appended {
                        Some((k, v)) if k == key => {
                            if list && value > v {
                                PutFlags::APPEND_DUP
                            } else {
                                // An equal or lower value of this key (or a plain key set
                                // again): an ordinary insert next to where the cursor is.
                                PutFlags::NONE
                            }
                        }
                        _ => {
                            if op.tally != NO_TALLY {
                                add_tally(tallies, op.tally, 1);
                            }
                            PutFlags::APPEND
                        }
                    };
                    cursor.put(key, value, flags)?;
                    if flags != PutFlags::NONE {
                        appended = Some((key, value));
                    }
                    continue;
                }
                // Plain insert flags (never MDB_CURRENT): the cursor's position only speeds up
                // the search.
                if op.tally == NO_TALLY {
                    cursor.put(key, value, PutFlags::NONE)?;
                } else if cursor.put_counting(key, value)? {
                    add_tally(tallies, op.tally, 1);
                }
            }
        }
        Ok(())
    }
}

/// Lowers the calling thread's CPU priority to the nice value `nice` (Linux: per thread). A
/// failure leaves it as it was: a matter of speed only.
fn lower_priority(nice: i32) {
    // SAFETY: `gettid` and `setpriority` on the caller's own thread id read and write no
    // memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}

/// The key and value of op `i` of `ops`, whose bytes follow each other in `bytes` (an op's
/// key starts where the previous op's value ends).
fn op_bytes<'b>(bytes: &'b [u8], ops: &[StagedOp], i: usize) -> (&'b [u8], &'b [u8]) {
    let start = if i == 0 { 0 } else { ops[i - 1].value_end };
    let op = &ops[i];
    (&bytes[start..op.key_end], &bytes[op.key_end..op.value_end])
}

/// Where [`Stage::apply`] puts an op: (table, the key's first 16 bytes, key length << 32 | op
/// number).
type SortKey = (u64, u128, u64);

/// The op number of a sort key.
#[inline]
fn op_of(k: &SortKey) -> usize {
    k.2 as u32 as usize
}

/// Puts the ops of `order`'s least table first and the others after them, each part in the
/// order it had (a stable partition: `sort_ops` relies on the order of ops on one key);
/// returns where the others start. One pass where a stable sort by table had to merge every
/// run of one table: the applier's stage holds a run per table per group merged (W sync at
/// batch 1000: that sort took ~8% of the applier's time, more than sorting EAV).
fn partition_least_table(order: &mut [SortKey]) -> usize {
    let Some(least) = order.iter().map(|k| k.0).min() else {
        return 0;
    };
    let firsts = order.iter().filter(|k| k.0 == least).count();
    let mut others = Vec::with_capacity(order.len() - firsts);
    let mut w = 0;
    for i in 0..order.len() {
        let k = order[i];
        match k.0 == least {
            true => {
                order[w] = k;
                w += 1;
            }
            false => others.push(k),
        }
    }
    debug_assert_eq!(w, firsts);
    order[w..].copy_from_slice(&others);
    w
}

/// Removes one value of a list key; a tallied removal that empties the key counts -1.
fn remove(
    txn: &mut RwTxn,
    op: &StagedOp,
    key: &[u8],
    value: &[u8],
    tallies: &mut Vec<(u32, i64)>,
) -> Result<(), LmdbError> {
    let removed = txn.del(op.db, key, Some(value))?;
    if removed && op.tally != NO_TALLY && txn.get(op.db, key)?.is_none() {
        add_tally(tallies, op.tally, -1);
    }
    Ok(())
}

/// Adds `delta` to `tally` (a batch touches few attributes: a short list beats a map).
fn add_tally(tallies: &mut Vec<(u32, i64)>, tally: u32, delta: i64) {
    match tallies.iter_mut().find(|(t, _)| *t == tally) {
        Some((_, n)) => *n += delta,
        None => tallies.push((tally, delta)),
    }
}

/// From this many ops on, `Stage::apply` sorts the later tables' ops on a helper thread while
/// LMDB takes the first table's (a thread costs tens of microseconds; this many ops, ms).
const SPLIT_APPLY_MIN_OPS: usize = 32 * 1024;

/// Below this many ops a transaction's writes go in staged order (sorting would not pay).
const SORTED_APPLY_MIN_OPS: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn ops_of(stage: &Stage) -> Vec<(OpKind, u32, TableKind, Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        stage.for_each_op(|kind, id, table_kind, key, value| {
            out.push((kind, id, table_kind, key.to_vec(), value.to_vec()))
        });
        out
    }

    fn staged() -> Stage {
        let plain = Table::for_test("p", 1, TableKind::Plain);
        let list = Table::for_test("l", 2, TableKind::List);
        let mut stage = Stage::default();
        stage.reserve(1000, 1 << 16);
        stage.put(&plain, b"counter", b"7");
        stage.list_add(&list, b"k1", b"a");
        stage.list_remove(&list, b"k0", b"b");
        stage.put(&plain, b"stats", b"");
        stage.list_add(&list, b"k2", b"c");
        stage
    }

    #[test]
    fn a_compact_copy_holds_the_same_ops_in_no_more_memory_than_they_take() {
        let stage = staged();
        let copy = stage.compact();
        assert_eq!(ops_of(&copy), ops_of(&stage));
        assert_eq!(copy.len(), 5);
        assert_eq!(copy.bytes.capacity(), copy.bytes.len());
        assert_eq!(copy.ops.capacity(), copy.ops.len());
        assert!(stage.bytes.capacity() > copy.bytes.capacity());
    }

    #[test]
    fn deferrable_keys_in_names_the_list_ops_of_the_range_in_order() {
        let stage = staged();
        let cases: [(std::ops::Range<usize>, &[&[u8]]); 4] = [
            (0..5, &[b"k1", b"k0", b"k2"]),
            (2..5, &[b"k0", b"k2"]),
            (3..4, &[]),
            (4..99, &[b"k2"]),
        ];
        for (range, want) in cases {
            let got: Vec<(u32, &[u8])> = stage.deferrable_keys_in(range.clone()).collect();
            let want: Vec<(u32, &[u8])> = want.iter().map(|k| (2, *k)).collect();
            assert_eq!(got, want, "range {range:?}");
        }
    }

    /// Ops of a plain table (1), a list table (2) and a plain table no writer reads (3): which
    /// ops `for_each_kept_op_in` passes on and whether it held any back, and which
    /// `for_each_deferrable_op_in` and `deferrable_keys_in` name, for each range and `defer`.
    #[test]
    fn the_committer_holds_back_list_ops_and_those_of_tables_no_writer_reads() {
        let plain = Table::for_test("p", 1, TableKind::Plain);
        let list = Table::for_test("l", 2, TableKind::List);
        let log = Table::for_test("g", 3, TableKind::Plain).unread_by_writers();
        let mut stage = Stage::default();
        stage.put(&plain, b"p0", b"1");
        stage.list_add(&list, b"l0", b"a");
        stage.put(&log, b"g0", b"entry");
        stage.put(&plain, b"p1", b"2");
        stage.delete(&log, b"g1");
        type Case<'a> = (
            std::ops::Range<usize>,
            bool,
            &'a [&'a [u8]],
            bool,
            &'a [&'a [u8]],
        );
        let cases: [Case; 5] = [
            (
                0..5,
                false,
                &[b"p0", b"l0", b"g0", b"p1", b"g1"],
                false,
                &[b"l0", b"g0", b"g1"],
            ),
            (0..5, true, &[b"p0", b"p1"], true, &[b"l0", b"g0", b"g1"]),
            (3..4, true, &[b"p1"], false, &[]),
            (2..3, true, &[], true, &[b"g0"]),
            (4..99, false, &[b"g1"], false, &[b"g1"]),
        ];
        for (range, defer, kept, held, deferrable) in cases {
            let mut got = Vec::new();
            let was_held =
                stage.for_each_kept_op_in(range.clone(), defer, |_, _, _, k, _| got.push(k));
            assert_eq!(got, kept, "kept, {range:?} defer {defer}");
            assert_eq!(was_held, held, "held, {range:?} defer {defer}");
            let mut named = Vec::new();
            stage.for_each_deferrable_op_in(range.clone(), |_, _, _, k, _| named.push(k));
            assert_eq!(named, deferrable, "deferrable ops, {range:?}");
            let keys: Vec<&[u8]> = stage
                .deferrable_keys_in(range.clone())
                .map(|(_, k)| k)
                .collect();
            assert_eq!(keys, deferrable, "deferrable keys, {range:?}");
        }
    }

    #[test]
    fn the_least_table_goes_first_and_each_part_keeps_its_order() {
        // (tables in order, the split and the op numbers after it)
        let cases: [(&[u64], usize, &[u64]); 5] = [
            (&[], 0, &[]),
            (&[3], 1, &[0]),
            (&[5, 2, 5, 2, 7, 2], 3, &[1, 3, 5, 0, 2, 4]),
            (&[2, 2, 9, 9], 2, &[0, 1, 2, 3]),
            (&[9, 8, 7, 9, 8, 7], 2, &[2, 5, 0, 1, 3, 4]),
        ];
        for (tables, split, want) in cases {
            let mut order: Vec<SortKey> = tables
                .iter()
                .enumerate()
                .map(|(i, t)| (*t, 0, i as u64))
                .collect();
            assert_eq!(partition_least_table(&mut order), split, "{tables:?}");
            let got: Vec<u64> = order.iter().map(|k| k.2).collect();
            assert_eq!(got, want, "{tables:?}");
        }
    }

    /// The sort helper's lower priority is its own: the thread that spawned it (the applier)
    /// keeps its priority, since Linux sets a nice value per thread when given a thread id.
    #[test]
    fn lowering_a_thread_s_priority_leaves_its_spawner_s_alone() {
        fn nice_of_this_thread() -> i32 {
            // SAFETY: as in `lower_priority`.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            }
        }
        let before = nice_of_this_thread();
        let target = (before + 3).min(19);
        let helper = std::thread::spawn(move || {
            lower_priority(target);
            nice_of_this_thread()
        })
        .join()
        .unwrap();
        assert_eq!(helper, target);
        assert_eq!(nice_of_this_thread(), before);
    }
}
