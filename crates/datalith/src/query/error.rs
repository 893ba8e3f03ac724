//! Query errors.

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
    /// A lookup ref, as an entity argument (of pull), on an attribute that is not
    /// `:db/unique` (Datomic's `:db.error/lookup-ref-attr-not-unique`).
    #[error("lookup ref attribute {attr} is not :db/unique, in {lookup}")]
    LookupRefAttrNotUnique { attr: String, lookup: String },
    /// An entity argument that names no entity and cannot (a lookup ref on an unknown
    /// attribute, a malformed one; Datomic's `:db.error/not-an-entity`).
    #[error("cannot resolve entity {eid}: {reason}")]
    NotAnEntity { eid: String, reason: String },
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
