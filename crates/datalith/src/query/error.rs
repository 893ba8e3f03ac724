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
    /// `:find` or `:with` variables that no clause binds (Datomic's
    /// `:db.error/unbound-query-variables`).
    #[error(":db.error/unbound-query-variables Query is referencing unbound variables: #{{{}}}", vars.join(" "))]
    UnboundVariables { vars: Vec<String> },
    /// A data pattern names an attribute the schema does not have (Datomic's
    /// `:db.error/not-an-entity`); `clause` is the pattern (or lookup ref) as EDN.
    #[error(":db.error/not-an-entity Unable to resolve entity: {attr} in {clause}")]
    UnknownAttribute { attr: String, clause: String },
    /// An entity constant (an ident, a lookup ref) names no entity (Datomic: "Cannot resolve
    /// key"); `key` is the constant as EDN.
    #[error("Cannot resolve key: {key}")]
    UnresolvedKey { key: String },
    /// A `not`, predicate, function or `or-join` clause needs variables bound that nothing
    /// outside it binds (Datomic's `:db.error/insufficient-binding`); `vars` and `clause` as EDN.
    #[error(":db.error/insufficient-binding [{}] not bound in clause: {clause}", vars.join(" "))]
    InsufficientBinding { vars: Vec<String>, clause: String },
    /// A lookup ref on an attribute that is not unique (Datomic's
    /// `:db.error/lookup-ref-attr-not-unique`); `lookup_ref` as EDN.
    #[error(
        ":db.error/lookup-ref-attr-not-unique Attribute values not unique: {attr} in {lookup_ref}"
    )]
    LookupRefNotUnique { attr: String, lookup_ref: String },
    /// The branches of an `or` use different variables (each branch's set as EDN); `or-join`
    /// names the shared ones.
    #[error("All clauses in 'or' must use same set of free vars, had [{}] in {clause} (or-join names the shared variables)", branches.join(" "))]
    OrBranchVars {
        branches: Vec<String>,
        clause: String,
    },
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
