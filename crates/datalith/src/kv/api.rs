//! The key-value API: batches of puts and deletes on named tables, group-committed.

use super::committer::{BatchState, Outcome, Rejected, WriteRequest};
use super::env::Environment;
use super::error::KvError;
use super::handle::{CommitHandle, Completion};
use super::stage::Stage;
use super::table::{Table, TableKind};
use super::view::View;
use crate::limits::{MAX_KEY_BYTES, MAX_VALUE_BYTES};

/// One write of a KV transaction.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum KvOp {
    /// Set `key` to `value` in a plain table.
    Put {
        /// The table written; must be a plain table.
        table: Table,
        /// The key: 1 to `MAX_KEY_BYTES` bytes.
        key: Vec<u8>,
        /// The new value, replacing any old one; at most `MAX_VALUE_BYTES` bytes.
        value: Vec<u8>,
    },
    /// Remove `key` (with all its values, for a list table).
    Delete {
        /// The table written, plain or list.
        table: Table,
        /// The key removed; removing an absent key is not an error.
        key: Vec<u8>,
    },
    /// Add `value` to the sorted set of `key` in a list table.
    ListAdd {
        /// The table written; must be a list table.
        table: Table,
        /// The key: 1 to `MAX_KEY_BYTES` bytes.
        key: Vec<u8>,
        /// The member added; at most `MAX_KEY_BYTES` bytes (exactly the table's width if it
        /// has a fixed one). Adding a present member is not an error.
        value: Vec<u8>,
    },
    /// Remove `value` from the set of `key` in a list table.
    ListRemove {
        /// The table written; must be a list table.
        table: Table,
        /// The key: 1 to `MAX_KEY_BYTES` bytes.
        key: Vec<u8>,
        /// The member removed; removing an absent member is not an error.
        value: Vec<u8>,
    },
    /// Set `key` to `value` in a plain table only if `key` is absent; otherwise the whole
    /// transaction fails with [`KvError::KeyExists`] (and only this transaction: others
    /// committed in the same batch are unaffected).
    Insert {
        /// The table written; must be a plain table.
        table: Table,
        /// The key: 1 to `MAX_KEY_BYTES` bytes.
        key: Vec<u8>,
        /// The value stored; at most `MAX_VALUE_BYTES` bytes.
        value: Vec<u8>,
    },
}

impl KvOp {
    /// A put.
    pub fn put(table: &Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> KvOp {
        KvOp::Put {
            table: table.clone(),
            key: key.into(),
            value: value.into(),
        }
    }

    /// A delete.
    pub fn delete(table: &Table, key: impl Into<Vec<u8>>) -> KvOp {
        KvOp::Delete {
            table: table.clone(),
            key: key.into(),
        }
    }

    /// An insert (put that fails if the key exists).
    pub fn insert(table: &Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> KvOp {
        KvOp::Insert {
            table: table.clone(),
            key: key.into(),
            value: value.into(),
        }
    }

    /// A list add.
    pub fn list_add(table: &Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> KvOp {
        KvOp::ListAdd {
            table: table.clone(),
            key: key.into(),
            value: value.into(),
        }
    }

    /// A list remove.
    pub fn list_remove(table: &Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> KvOp {
        KvOp::ListRemove {
            table: table.clone(),
            key: key.into(),
            value: value.into(),
        }
    }

    fn parts(&self) -> (&Table, &[u8], &[u8]) {
        match self {
            KvOp::Put { table, key, value }
            | KvOp::ListAdd { table, key, value }
            | KvOp::ListRemove { table, key, value }
            | KvOp::Insert { table, key, value } => (table, key, value),
            KvOp::Delete { table, key } => (table, key, &[]),
        }
    }

    /// Checks everything that can be checked without the database, so the committer never
    /// sees a malformed op.
    pub fn validate(&self) -> Result<(), KvError> {
        let (table, key, value) = self.parts();
        let name = || table.name().to_string();
        if key.is_empty() {
            return Err(KvError::EmptyKey { table: name() });
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(KvError::KeyTooLong {
                table: name(),
                len: key.len(),
                max: MAX_KEY_BYTES,
            });
        }
        let wanted = match self {
            KvOp::Put { .. } | KvOp::Insert { .. } => TableKind::Plain,
            KvOp::ListAdd { .. } | KvOp::ListRemove { .. } => TableKind::List,
            KvOp::Delete { .. } => table.kind(),
        };
        if table.kind() != wanted {
            return Err(KvError::WrongTableKind {
                name: name(),
                actual: table.kind().name(),
                wanted: wanted.name(),
            });
        }
        if wanted == TableKind::List && value.len() > MAX_KEY_BYTES {
            return Err(KvError::ListValueTooLong {
                table: name(),
                len: value.len(),
                max: MAX_KEY_BYTES,
            });
        }
        if let (KvOp::ListAdd { .. }, Some(width)) = (self, table.fixed) {
            if value.len() != usize::from(width) {
                return Err(KvError::ListValueWidth {
                    table: name(),
                    len: value.len(),
                    width,
                });
            }
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(KvError::ValueTooLarge {
                table: name(),
                len: value.len(),
                max: MAX_VALUE_BYTES,
            });
        }
        Ok(())
    }
}

struct KvRequest {
    ops: Vec<KvOp>,
    bytes: usize,
    error: Option<KvError>,
    completion: Option<Completion<(), KvError>>,
}

impl WriteRequest for KvRequest {
    fn size_hint(&self) -> usize {
        self.bytes
    }

    fn prepare(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        _batch: &mut BatchState,
    ) -> Result<(), Rejected> {
        self.error = None;
        for (i, op) in self.ops.iter().enumerate() {
            match op {
                KvOp::Insert { table, key, value } => {
                    if let Err(e) = check_absent(view, &self.ops[..i], table, key) {
                        self.error = Some(e);
                        return Err(Rejected);
                    }
                    stage.put(table, key, value)
                }
                KvOp::Put { table, key, value } => stage.put(table, key, value),
                KvOp::Delete { table, key } => stage.delete(table, key),
                KvOp::ListAdd { table, key, value } => stage.list_add(table, key, value),
                KvOp::ListRemove { table, key, value } => stage.list_remove(table, key, value),
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) {
        let result = match outcome {
            Outcome::Committed => Ok(()),
            Outcome::Rejected => Err(self.error.take().unwrap_or(KvError::CommitFailed {
                cause: "request rejected".into(),
            })),
            Outcome::Failed(e) => Err(e),
        };
        if let Some(c) = self.completion.take() {
            c.complete(result);
        }
    }
}

impl Environment {
    /// Applies `ops` atomically and returns once they are durable.
    pub fn transact_kv(&self, ops: Vec<KvOp>) -> Result<(), KvError> {
        validate_all(&ops)?;
        let (completion, handle) = CommitHandle::pair();
        let bytes = ops
            .iter()
            .map(|o| o.parts().1.len() + o.parts().2.len() + 16)
            .sum();
        self.submit_blocking(Box::new(KvRequest {
            ops,
            bytes,
            error: None,
            completion: Some(completion),
        }));
        handle.wait()
    }

    /// Queues `ops`; the handle completes once they are durable (or failed). Concurrent calls
    /// share commits: the batch grows with load.
    pub fn transact_kv_async(&self, ops: Vec<KvOp>) -> CommitHandle<()> {
        let (completion, handle) = CommitHandle::pair();
        match self.queue_kv(ops, completion) {
            Ok(()) => handle,
            Err(e) => CommitHandle::ready(Err(e)),
        }
    }

    /// Queues `ops` and calls `callback` on the committer thread once they are durable (or
    /// failed). The callback must be quick: it delays every later commit.
    pub fn transact_kv_with_callback(
        &self,
        ops: Vec<KvOp>,
        callback: impl FnOnce(Result<(), KvError>) + Send + 'static,
    ) {
        let completion = Completion::Callback(Box::new(callback));
        if let Err(e) = validate_all(&ops) {
            completion.complete(Err(e));
            return;
        }
        self.submit_kv(ops, completion);
    }

    fn queue_kv(&self, ops: Vec<KvOp>, completion: Completion<(), KvError>) -> Result<(), KvError> {
        validate_all(&ops)?;
        self.submit_kv(ops, completion);
        Ok(())
    }

    fn submit_kv(&self, ops: Vec<KvOp>, completion: Completion<(), KvError>) {
        let bytes = ops
            .iter()
            .map(|o| o.parts().1.len() + o.parts().2.len() + 16)
            .sum();
        self.submit(Box::new(KvRequest {
            ops,
            bytes,
            error: None,
            completion: Some(completion),
        }));
    }
}

fn validate_all(ops: &[KvOp]) -> Result<(), KvError> {
    ops.iter().try_for_each(KvOp::validate)
}

/// An insert's key must be absent from the database (as this batch has left it so far) and
/// must not be written by an earlier op of the same request.
fn check_absent(
    view: View<'_>,
    earlier: &[KvOp],
    table: &Table,
    key: &[u8],
) -> Result<(), KvError> {
    let mut present = view.get(table, key)?.is_some();
    for op in earlier {
        match op {
            KvOp::Put {
                table: t, key: k, ..
            }
            | KvOp::Insert {
                table: t, key: k, ..
            } if t.name() == table.name() && k == key => present = true,
            KvOp::Delete { table: t, key: k } if t.name() == table.name() && k == key => {
                present = false
            }
            _ => {}
        }
    }
    if present {
        return Err(KvError::KeyExists {
            table: table.name().to_string(),
            key: key.to_vec(),
        });
    }
    Ok(())
}
