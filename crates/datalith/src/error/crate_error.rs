//! [`Error`]: any error of the crate, one variant per layer that fails, each with the
//! category and fields of the error it wraps (see the parent module).
//!
//! In the facade layer (it names every layer's error type); the categories themselves sit
//! low, beside the codec, so that every layer can give its errors one.

use super::{error_map, Category, Field, INVALID_ARGUMENT, INVALID_EDN};
use crate::edn::{to_edn_string, to_json, Edn};

/// Any error of the crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A query failed.
    #[error(transparent)]
    Query(#[from] crate::query::QueryError),
    /// A transaction failed.
    #[error(transparent)]
    Tx(#[from] crate::tx::TxError),
    /// Reading or writing datoms failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The KV engine failed.
    #[error(transparent)]
    Kv(#[from] crate::kv::KvError),
    /// Bytes that are not a value's encoding.
    #[error(transparent)]
    Codec(#[from] crate::codec::CodecError),
    /// A dump failed.
    #[error(transparent)]
    Dump(#[from] crate::api::dump::DumpError),
    /// EDN that does not fit the Rust type asked for ([`crate::edn::from_edn`]).
    #[error("{0}")]
    Deserialize(#[from] crate::edn::DeserializeError),
    /// A Rust value with no EDN form ([`crate::edn::to_edn`]).
    #[error("{0}")]
    Serialize(#[from] crate::edn::SerializeError),
    /// Text that is not EDN.
    #[error("{}:{}: {}", .0.line, .0.column, .0.message)]
    Edn(#[from] crate::edn::ReadError),
}

impl Error {
    /// The error's category.
    pub fn category(&self) -> Category {
        match self {
            Error::Query(e) => e.category(),
            Error::Tx(e) => e.category(),
            Error::Store(e) => e.category(),
            Error::Kv(e) => e.category(),
            Error::Codec(e) => e.category(),
            Error::Dump(e) => e.category(),
            Error::Edn(_) => INVALID_EDN,
            Error::Deserialize(_) | Error::Serialize(_) => INVALID_ARGUMENT,
        }
    }

    /// The error's structured fields (besides category and message).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            Error::Query(e) => e.fields(),
            Error::Tx(e) => e.fields(),
            Error::Store(e) => e.fields(),
            Error::Kv(e) => e.fields(),
            Error::Codec(e) => e.fields(),
            Error::Dump(e) => e.fields(),
            Error::Deserialize(_) | Error::Serialize(_) => vec![],
            Error::Edn(e) => vec![
                ("line", Edn::Long(e.line as i64)),
                ("column", Edn::Long(e.column as i64)),
            ],
        }
    }

    /// The error as one EDN map (see [`error_map`]).
    pub fn to_edn(&self) -> Edn {
        error_map(self.category(), &self.to_string(), self.fields())
    }

    /// [`Error::to_edn`] printed as EDN.
    pub fn to_edn_string(&self) -> String {
        to_edn_string(&self.to_edn())
    }

    /// [`Error::to_edn`] printed as JSON (keys as `":db/error"` strings).
    pub fn to_json(&self) -> String {
        to_json(&self.to_edn())
    }
}
