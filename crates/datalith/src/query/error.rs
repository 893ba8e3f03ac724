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
    /// A clause reads a data source that `:in` does not name (`$` included, when `:in` is
    /// given without it).
    #[error("data source {name} is not among the :in inputs: {clause}")]
    UnknownSource { name: String, clause: String },
    /// Not as many inputs as `:in` names.
    #[error("the query's :in {inputs} takes {expected} inputs, got {got}")]
    InputCount {
        inputs: String,
        expected: usize,
        got: usize,
    },
    /// An input of the wrong kind: a database where `:in` takes a value, or a value that
    /// cannot be what `:in` takes (`got` is EDN, or `a database`).
    #[error("input {input} takes {expected}, got {got}")]
    InputKind {
        input: String,
        expected: String,
        got: String,
    },
    /// A clause on a relation source with more terms than a tuple of that source has.
    #[error("{clause} has {terms} terms but the tuple {tuple} of {source_name} has {width}")]
    SourceArity {
        source_name: String,
        clause: String,
        terms: usize,
        tuple: String,
        width: usize,
    },
    /// A value where an entity is expected (entity position, the value of a ref attribute)
    /// that names none: an ident or lookup ref no entity has, a lookup ref on an attribute
    /// that is not unique, or a value that is no entity reference at all.
    #[error("{value} names no entity (an entity id, an ident, or a lookup ref on a unique attribute is expected)")]
    UnresolvedEntity { value: String },
    /// The query reads no database and runs on none (at least one input must be one).
    #[error("a query needs a database among its inputs")]
    NoDatabase,
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
