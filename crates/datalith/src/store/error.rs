//! Errors of the Datalog store.

use crate::error::{self, entity_field, text_field, Category, Field};
use crate::kv::KvError;

/// An error reading or writing datoms.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The KV engine failed (I/O, poisoned, closed, ...).
    #[error(transparent)]
    Kv(#[from] KvError),
    /// Index bytes that cannot have been written by this store.
    #[error("corrupt index entry: {detail}")]
    Corrupt {
        /// What is wrong, in words.
        detail: String,
    },
    /// A transaction log entry whose bytes this store cannot have written (truncated,
    /// garbage, or a key that is not a transaction id).
    #[error("corrupt transaction log entry of tx {tx}: {detail}")]
    CorruptTxLogEntry {
        /// The transaction whose entry is damaged (the entry's key; 0 when the key itself is
        /// not 8 bytes).
        tx: u64,
        /// What is wrong, in words.
        detail: String,
    },
    /// A schema definition that cannot be loaded.
    #[error(transparent)]
    Schema(#[from] super::schema::SchemaError),
}

impl From<crate::codec::CodecError> for StoreError {
    fn from(e: crate::codec::CodecError) -> Self {
        StoreError::Corrupt {
            detail: format!("undecodable index value: {e}"),
        }
    }
}

impl StoreError {
    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            StoreError::Kv(e) => e.category(),
            StoreError::Corrupt { .. } | StoreError::CorruptTxLogEntry { .. } => error::CORRUPT,
            StoreError::Schema(e) => e.category(),
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            StoreError::Kv(e) => e.fields(),
            StoreError::Corrupt { detail } => vec![text_field("detail", detail)],
            StoreError::CorruptTxLogEntry { tx, detail } => {
                vec![entity_field("tx", *tx), text_field("detail", detail)]
            }
            StoreError::Schema(e) => e.fields(),
        }
    }
}
