//! Staged writes: what a request wants written, collected before anything touches LMDB, so a
//! request that fails validation leaves no trace (the committer just truncates the stage).

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

#[derive(Clone, Copy)]
struct StagedOp {
    kind: OpKind,
    db: RawDb,
    /// The table's identity and kind, for an [`super::overlay::Overlay`] fed from a stage.
    table: u32,
    table_kind: TableKind,
    key_end: usize,
    value_end: usize,
}

/// An append-only buffer of writes. Keys and values live in one byte arena so staging a
/// thousand small writes costs a few allocations, not thousands.
#[derive(Default, Clone)]
pub struct Stage {
    bytes: Vec<u8>,
    ops: Vec<StagedOp>,
}

/// A position in a [`Stage`] to roll back to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    bytes: usize,
    ops: usize,
}

impl Stage {
    fn push(&mut self, kind: OpKind, table: &Table, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ops.push(StagedOp {
            kind,
            db: table.db,
            table: table.id,
            table_kind: table.kind,
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

    /// A copy of the first `ops` ops.
    pub(crate) fn prefix_copy(&self, ops: usize) -> Stage {
        let ops = ops.min(self.ops.len());
        let bytes = match ops {
            0 => 0,
            i => self.ops[i - 1].value_end,
        };
        Stage {
            bytes: self.bytes[..bytes].to_vec(),
            ops: self.ops[..ops].to_vec(),
        }
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            bytes: self.bytes.len(),
            ops: self.ops.len(),
        }
    }

    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.bytes.truncate(mark.bytes);
        self.ops.truncate(mark.ops);
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ops.clear();
    }

    /// Calls `f(op, table id, table kind, key, value)` for every staged op, in order.
    pub(crate) fn for_each_op(&self, f: impl FnMut(OpKind, u32, TableKind, &[u8], &[u8])) {
        self.for_each_op_in(0..self.ops.len(), f)
    }

    /// [`Stage::for_each_op`] for the ops numbered `range` only.
    pub(crate) fn for_each_op_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(OpKind, u32, TableKind, &[u8], &[u8]),
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
            f(op.kind, op.table, op.table_kind, key, value);
        }
    }

    /// Writes every staged op from `from` on into the transaction.
    pub(crate) fn apply(&self, from: Mark, txn: &mut heed::RwTxn<'_>) -> heed::Result<()> {
        let mut start = if from.ops == 0 {
            0
        } else {
            self.ops[from.ops - 1].value_end
        };
        for op in &self.ops[from.ops..] {
            let key = &self.bytes[start..op.key_end];
            let value = &self.bytes[op.key_end..op.value_end];
            start = op.value_end;
            match op.kind {
                OpKind::Put | OpKind::ListAdd => op.db.put(txn, key, value)?,
                OpKind::Delete => {
                    op.db.delete(txn, key)?;
                }
                OpKind::ListRemove => {
                    op.db.delete_one_duplicate(txn, key, value)?;
                }
            }
        }
        Ok(())
    }
}
