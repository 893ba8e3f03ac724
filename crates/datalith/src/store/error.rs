//! Errors of the Datalog store.

use crate::error::{self, text_field, Category, Field};
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
            StoreError::Corrupt { .. } => error::CORRUPT,
            StoreError::Schema(e) => e.category(),
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            StoreError::Kv(e) => e.fields(),
            StoreError::Corrupt { detail } => vec![text_field("detail", detail)],
            StoreError::Schema(e) => e.fields(),
        }
    }
}
