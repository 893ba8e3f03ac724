//! The search engine's errors: a caller's bad query, a damaged index, or the KV engine's own.

use crate::error::{self, Category, Field};
use crate::kv::KvError;

/// What went wrong in indexing or searching.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The query text does not parse, or asks for more than the limits allow.
    #[error("search query {query:?}: {reason}")]
    BadQuery {
        /// The query as given (cut at 80 characters when too long).
        query: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Bytes of the index that do not decode: the file is damaged.
    #[error("full-text index {index}: {detail}")]
    Corrupt {
        /// Which index (an attribute's ident or a KV index's name).
        index: String,
        /// What was found wrong.
        detail: String,
    },
    /// A KV search index name that cannot be one (empty, or too long).
    #[error("search index name {name:?}: {reason}")]
    BadName {
        /// The name given.
        name: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The KV engine failed.
    #[error(transparent)]
    Kv(#[from] KvError),
}

impl SearchError {
    /// The error's stable category.
    pub fn category(&self) -> Category {
        match self {
            SearchError::BadQuery { .. } => error::INVALID_SEARCH_QUERY,
            SearchError::BadName { .. } => error::INVALID_ARGUMENT,
            SearchError::Corrupt { .. } => error::CORRUPT,
            SearchError::Kv(e) => e.category(),
        }
    }

    /// The error's structured fields.
    pub fn fields(&self) -> Vec<Field> {
        match self {
            SearchError::BadQuery { query, reason } => vec![
                error::text_field("query", query),
                error::text_field("reason", reason),
            ],
            SearchError::Corrupt { index, detail } => vec![
                error::text_field("index", index),
                error::text_field("detail", detail),
            ],
            SearchError::BadName { name, reason } => vec![
                error::text_field("name", name),
                error::text_field("reason", reason),
            ],
            SearchError::Kv(e) => e.fields(),
        }
    }
}
