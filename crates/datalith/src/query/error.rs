//! Query errors. Categories and fields: `crate::error`.

use crate::edn::Edn;
use crate::error::{self, edn_text_field, Category, Field};

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The text is not valid EDN or not a valid query.
    #[error("{0}")]
    Parse(String),
    /// A variable used where it must already be bound is not.
    #[error("unbound variable {var} in {clause}")]
    Unbound { var: String, clause: String },
    /// A find variable that no clause binds.
    #[error("find variable {var} is not bound by any clause")]
    UnboundFind { var: String },
    /// An unknown predicate or function.
    #[error("unknown function {name}")]
    UnknownFunction { name: String },
    /// A function called with arguments it cannot take.
    #[error("{name}: {message}")]
    BadArguments { name: String, message: String },
    /// An unknown rule.
    #[error("unknown rule {name}")]
    UnknownRule { name: String },
    /// An unknown aggregate.
    #[error("unknown aggregate {name}")]
    UnknownAggregate { name: String },
    /// Inputs that do not match `:in`.
    #[error("inputs: {0}")]
    Inputs(String),
    /// The query ran past its `:timeout`.
    #[error("query timed out after {ms} ms")]
    Timeout { ms: u64 },
    /// The query was cancelled.
    #[error("query cancelled")]
    Cancelled,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl From<crate::kv::KvError> for QueryError {
    fn from(e: crate::kv::KvError) -> Self {
        QueryError::Store(e.into())
    }
}

impl From<crate::tx::TxError> for QueryError {
    fn from(e: crate::tx::TxError) -> Self {
        match e {
            crate::tx::TxError::Store(s) => QueryError::Store(s),
            other => QueryError::Inputs(other.to_string()),
        }
    }
}

impl QueryError {
    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            QueryError::Parse(_) => error::INVALID_QUERY,
            QueryError::Unbound { .. } => error::INSUFFICIENT_BINDING,
            QueryError::UnboundFind { .. } => error::UNBOUND_QUERY_VARIABLES,
            QueryError::UnknownFunction { .. } => error::UNKNOWN_FUNCTION,
            QueryError::BadArguments { .. } => error::INVALID_ARGUMENTS,
            QueryError::UnknownRule { .. } => error::UNKNOWN_RULE,
            QueryError::UnknownAggregate { .. } => error::INVALID_AGGREGATE,
            QueryError::Inputs(_) => error::INVALID_INPUT,
            QueryError::Timeout { .. } => error::TIMEOUT,
            QueryError::Cancelled => error::CANCELLED,
            QueryError::Store(e) => e.category(),
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            QueryError::Unbound { var, clause } => vec![
                edn_text_field("variables", &format!("[{var}]")),
                edn_text_field("clause", clause),
            ],
            QueryError::UnboundFind { var } => {
                vec![edn_text_field("variables", &format!("#{{{var}}}"))]
            }
            QueryError::UnknownFunction { name }
            | QueryError::BadArguments { name, .. }
            | QueryError::UnknownRule { name }
            | QueryError::UnknownAggregate { name } => vec![edn_text_field("name", name)],
            QueryError::Timeout { ms } => vec![("timeout", Edn::Long(*ms as i64))],
            QueryError::Store(e) => e.fields(),
            _ => Vec::new(),
        }
    }
}
