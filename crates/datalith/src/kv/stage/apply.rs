//! Writing a stage into an LMDB write transaction: grouped by table, in key order, through one
//! cursor per table.

use super::super::lmdb::{LmdbError, PutFlags, RwTxn, WriteCursor};
use super::super::table::TableKind;
use super::{Mark, OpKind, Placement, Stage, StagedOp, NO_TALLY};
use crate::limits::SORT_HELPER_NICE;

impl Stage {
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
    pub(super) fn op_bytes(&self, i: usize) -> (&[u8], &[u8]) {
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
                    let tallied = o.tally != NO_TALLY;
                    match o.placement {
                        // A key past the table's end: always a new one.
                        Placement::Append => {
                            cursor.put(key, value, PutFlags::APPEND)?;
                            if tallied {
                                add_tally(tallies, o.tally, 1);
                            }
                        }
                        // A further value of a key: never creates it.
                        Placement::AppendDup => cursor.put(key, value, PutFlags::APPEND_DUP)?,
                        Placement::Sorted | Placement::Search if tallied => {
                            if cursor.put_counting(key, value)? {
                                add_tally(tallies, o.tally, 1);
                            }
                        }
                        // Plain insert flags (never MDB_CURRENT): the cursor's position only
                        // speeds up the search.
                        Placement::Sorted | Placement::Search => {
                            cursor.put(key, value, PutFlags::NONE)?
                        }
                    }
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
pub(super) struct SortedOps {
    pub(super) bytes: Vec<u8>,
    pub(super) ops: Vec<StagedOp>,
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
    pub(super) fn op_bytes(&self, i: usize) -> (&[u8], &[u8]) {
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
pub(super) fn lower_priority(nice: i32) {
    // SAFETY: `gettid` and `setpriority` on the caller's own thread id read and write no
    // memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}

/// The key and value of op `i` of `ops`, whose bytes follow each other in `bytes` (an op's
/// key starts where the previous op's value ends).
pub(super) fn op_bytes<'b>(bytes: &'b [u8], ops: &[StagedOp], i: usize) -> (&'b [u8], &'b [u8]) {
    let start = if i == 0 { 0 } else { ops[i - 1].value_end };
    let op = &ops[i];
    (&bytes[start..op.key_end], &bytes[op.key_end..op.value_end])
}

/// Where [`Stage::apply`] puts an op: (table, the key's first 16 bytes, key length << 32 | op
/// number).
pub(super) type SortKey = (u64, u128, u64);

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
pub(super) fn partition_least_table(order: &mut [SortKey]) -> usize {
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
