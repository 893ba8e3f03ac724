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
    /// The query text is not valid EDN, or not a query, at `position`.
    #[error("{position}: {message}")]
    Syntax {
        /// Where in the text.
        position: crate::query::parse::Position,
        /// What is wrong there.
        message: String,
    },
    /// A variable used where it must already be bound is not.
    #[error("unbound variable {var} in {clause}")]
    Unbound {
        /// The variable, as written in the query.
        var: String,
        /// The clause that needs it, as EDN.
        clause: String,
    },
    /// `:find` or `:with` variables that no clause binds (Datomic's
    /// `:db.error/unbound-query-variables`).
    #[error(":db.error/unbound-query-variables Query is referencing unbound variables: #{{{}}}", vars.join(" "))]
    UnboundVariables {
        /// The unbound variables, as written in the query.
        vars: Vec<String>,
    },
    /// A data pattern names an attribute the schema does not have (Datomic's
    /// `:db.error/not-an-entity`); `clause` is the pattern (or lookup ref) as EDN.
    #[error(":db.error/not-an-entity Unable to resolve entity: {attr} in {clause}")]
    UnknownAttribute {
        /// The attribute, as EDN.
        attr: String,
        /// The pattern or lookup ref naming it, as EDN.
        clause: String,
    },
    /// An entity constant (an ident, a lookup ref) names no entity (Datomic: "Cannot resolve
    /// key"); `key` is the constant as EDN.
    #[error("Cannot resolve key: {key}")]
    UnresolvedKey {
        /// The constant, as EDN.
        key: String,
    },
    /// A `not`, predicate, function or `or-join` clause needs variables bound that nothing
    /// outside it binds (Datomic's `:db.error/insufficient-binding`); `vars` and `clause` as EDN.
    #[error(":db.error/insufficient-binding [{}] not bound in clause: {clause}", vars.join(" "))]
    InsufficientBinding {
        /// The variables not bound, as EDN.
        vars: Vec<String>,
        /// The clause that needs them, as EDN.
        clause: String,
    },
    /// A lookup ref on an attribute that is not unique, as a query input, in a clause or as
    /// the entity of a pull (Datomic's `:db.error/lookup-ref-attr-not-unique`); `lookup_ref`
    /// as EDN.
    #[error(
        ":db.error/lookup-ref-attr-not-unique Attribute values not unique: {attr} in {lookup_ref}"
    )]
    LookupRefNotUnique {
        /// The attribute, which is not `:db/unique`, as EDN.
        attr: String,
        /// The lookup ref, as EDN.
        lookup_ref: String,
    },
    /// The branches of an `or` use different variables (each branch's set as EDN); `or-join`
    /// names the shared ones.
    #[error("All clauses in 'or' must use same set of free vars, had [{}] in {clause} (or-join names the shared variables)", branches.join(" "))]
    OrBranchVars {
        /// Each branch's set of variables, as EDN.
        branches: Vec<String>,
        /// The `or` clause, as EDN.
        clause: String,
    },
    /// An `or` that joins on no variable: `(or-join [] ...)`, or an `or` whose branches use
    /// none (Datomic's `:db.error/or-binding-empty`); `clause` as EDN, as the `or-join` it is.
    #[error(":db.error/or-binding-empty 'or' cannot have empty binding set: {clause}")]
    OrBindingEmpty {
        /// The clause, as EDN.
        clause: String,
    },
    /// An unknown predicate or function.
    #[error("unknown function {name}: neither a built-in nor a registered function")]
    UnknownFunction {
        /// The function's name, as written.
        name: String,
    },
    /// A function called with arguments it cannot take.
    #[error("{name}: {message}")]
    BadArguments {
        /// The function's name, as written.
        name: String,
        /// What is wrong with the arguments.
        message: String,
    },
    /// A built-in refused its arguments: `call` is the call as EDN with the argument values,
    /// e.g. `(+ "a" 1)`.
    #[error("{call}: {problem}")]
    Builtin {
        /// The built-in's name.
        name: String,
        /// The call with its argument values, as EDN.
        call: String,
        /// What the built-in found wrong.
        problem: BuiltinProblem,
    },
    /// `(and ...)` where it is no branch of an `or` (in `:where`, in a `not`): Datomic reads it
    /// as a call of a rule `and`, refused with `:db.error/insufficient-binding`.
    #[error("(and ...) is a clause only as a branch of an or: {clause}")]
    AndOutsideOr {
        /// The clause, as EDN.
        clause: String,
    },
    /// An unknown rule.
    #[error("unknown rule {name}")]
    UnknownRule {
        /// The rule's name, as written.
        name: String,
    },
    /// An unknown aggregate.
    #[error("unknown aggregate {name}")]
    UnknownAggregate {
        /// The aggregate's name, as written.
        name: String,
    },
    /// Inputs that do not match `:in`.
    #[error("inputs: {0}")]
    Inputs(String),
    /// A clause reads a data source that `:in` does not name (`$` included, when `:in` is
    /// given without it).
    #[error("data source {name} is not among the :in inputs: {clause}")]
    UnknownSource {
        /// The data source, as written (`$`, `$x`).
        name: String,
        /// The clause that reads it, as EDN.
        clause: String,
    },
    /// Not as many inputs as `:in` names.
    #[error("the query's :in {inputs} takes {expected} inputs, got {got}")]
    InputCount {
        /// The `:in` list, as EDN.
        inputs: String,
        /// How many inputs `:in` names.
        expected: usize,
        /// How many inputs were given.
        got: usize,
    },
    /// An input of the wrong kind: a database where `:in` takes a value, or a value that
    /// cannot be what `:in` takes (`got` is EDN, or `a database`).
    #[error("input {input} takes {expected}, got {got}")]
    InputKind {
        /// The `:in` binding, as EDN.
        input: String,
        /// What that binding takes.
        expected: String,
        /// What was given: EDN, or `a database`.
        got: String,
    },
    /// A clause on a relation source with more terms than a tuple of that source has.
    #[error("{clause} has {terms} terms but the tuple {tuple} of {source_name} has {width}")]
    SourceArity {
        /// The data source, as written.
        source_name: String,
        /// The clause, as EDN.
        clause: String,
        /// How many terms the clause has.
        terms: usize,
        /// The first tuple too short for the clause, as EDN.
        tuple: String,
        /// How many values that tuple has.
        width: usize,
    },
    /// A value where an entity is expected (entity position, the value of a ref attribute)
    /// that names none: an ident or lookup ref no entity has, a lookup ref on an attribute
    /// that is not unique, or a value that is no entity reference at all.
    #[error("{value} names no entity (an entity id, an ident, or a lookup ref on a unique attribute is expected)")]
    UnresolvedEntity {
        /// The value, as EDN.
        value: String,
    },
    /// A string where an attribute's value must be a keyword (a keyword attribute's value,
    /// an entity named by its ident): Datomic reads the string as a keyword, so it needs a
    /// leading colon (`":dev"`).
    #[error(
        "cannot read {value} as a keyword: it has no leading : (write the keyword, or \":name\")"
    )]
    NotAKeyword {
        /// The value, as EDN.
        value: String,
    },
    /// The query reads no database and runs on none (at least one input must be one).
    #[error("a query needs a database among its inputs")]
    NoDatabase,
    /// The query ran past its `:timeout`.
    #[error("query timed out after {ms} ms")]
    Timeout {
        /// The `:timeout` that passed, in milliseconds.
        ms: u64,
    },
    /// The query was cancelled.
    #[error("query cancelled")]
    Cancelled,
    /// The query needed more of a `resource` (`"memory"`: the estimated bytes of the rows and
    /// hash tables it held) than its `limit`; it was stopped when it held `used`.
    #[error("query stopped: it needed more {resource} than its limit of {limit} bytes (it held about {used})")]
    ResourceExhausted {
        /// What ran out (`"memory"`).
        resource: &'static str,
        /// The limit, in bytes.
        limit: u64,
        /// What the query held when it was stopped, in bytes.
        used: u64,
    },
    /// An entity argument that names no entity and cannot (a lookup ref on an unknown
    /// attribute, a malformed one; Datomic's `:db.error/not-an-entity`).
    #[error("cannot resolve entity {eid}: {reason}")]
    NotAnEntity {
        /// The entity argument, as EDN.
        eid: String,
        /// Why it names no entity.
        reason: String,
    },
    /// A list in entity position that is not `[attribute value]` (Datomic's
    /// `:db.error/invalid-lookup-ref`).
    #[error("invalid lookup ref {lookup}: a lookup ref is [attribute value]")]
    InvalidLookupRef {
        /// The lookup ref, as EDN.
        lookup: String,
    },
    /// Something in attribute position that names no attribute: a lookup ref's first
    /// element that is not a keyword, an entity that is not an attribute (Datomic's
    /// `:db.error/not-an-attribute`).
    #[error("{value} is not an attribute")]
    NotAnAttribute {
        /// What stood there, as EDN.
        value: String,
    },
    /// A pull pattern refused.
    #[error(transparent)]
    Pull(#[from] crate::pull::PullError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A full-text search failed: its query text does not parse, or the index is damaged.
    #[error("{0}")]
    Search(crate::search::SearchError),
}

impl From<crate::search::SearchError> for QueryError {
    fn from(e: crate::search::SearchError) -> Self {
        match e {
            crate::search::SearchError::Kv(k) => k.into(),
            other => QueryError::Search(other),
        }
    }
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
            QueryError::Parse(_) | QueryError::Syntax { .. } => error::INVALID_QUERY,
            QueryError::Unbound { .. } => error::INSUFFICIENT_BINDING,
            QueryError::UnboundVariables { .. } => error::UNBOUND_QUERY_VARIABLES,
            QueryError::UnknownAttribute { .. } | QueryError::UnresolvedKey { .. } => {
                error::NOT_AN_ENTITY
            }
            QueryError::InsufficientBinding { .. } | QueryError::AndOutsideOr { .. } => {
                error::INSUFFICIENT_BINDING
            }
            QueryError::LookupRefNotUnique { .. } => error::LOOKUP_REF_ATTR_NOT_UNIQUE,
            QueryError::NotAnEntity { .. } | QueryError::UnresolvedEntity { .. } => {
                error::NOT_AN_ENTITY
            }
            QueryError::NotAKeyword { .. } => error::NOT_A_KEYWORD,
            QueryError::InvalidLookupRef { .. } => error::INVALID_LOOKUP_REF,
            QueryError::NotAnAttribute { .. } => error::NOT_AN_ATTRIBUTE,
            QueryError::OrBranchVars { .. } => error::INVALID_QUERY,
            QueryError::OrBindingEmpty { .. } => error::OR_BINDING_EMPTY,
            QueryError::UnknownFunction { .. } => error::UNKNOWN_FUNCTION,
            QueryError::BadArguments { .. } | QueryError::Builtin { .. } => {
                error::INVALID_ARGUMENTS
            }
            QueryError::UnknownRule { .. } => error::UNKNOWN_RULE,
            QueryError::UnknownAggregate { .. } => error::INVALID_AGGREGATE,
            QueryError::InputCount { expected, got, .. } if got < expected => error::TOO_FEW_INPUTS,
            QueryError::Inputs(_)
            | QueryError::InputCount { .. }
            | QueryError::InputKind { .. }
            | QueryError::NoDatabase => error::INVALID_INPUT,
            QueryError::UnknownSource { .. } => error::INVALID_DATA_SOURCE,
            QueryError::SourceArity { .. } => error::INVALID_QUERY,
            QueryError::Timeout { .. } => error::TIMEOUT,
            QueryError::Cancelled => error::CANCELLED,
            QueryError::ResourceExhausted { .. } => error::RESOURCE_EXHAUSTED,
            QueryError::Pull(e) => e.category(),
            QueryError::Store(e) => e.category(),
            QueryError::Search(e) => e.category(),
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            QueryError::Unbound { var, clause } => vec![
                edn_text_field("variables", &format!("[{var}]")),
                edn_text_field("clause", clause),
            ],
            QueryError::UnboundVariables { vars } => {
                vec![edn_text_field(
                    "variables",
                    &format!("#{{{}}}", vars.join(" ")),
                )]
            }
            QueryError::UnknownAttribute { attr, clause } => vec![
                edn_text_field("attribute", attr),
                edn_text_field("clause", clause),
            ],
            QueryError::UnresolvedKey { key } => vec![edn_text_field("entity", key)],
            QueryError::Syntax { position, .. } => vec![
                ("line", Edn::Long(position.line as i64)),
                ("column", Edn::Long(position.column as i64)),
            ],
            QueryError::InsufficientBinding { vars, clause } => vec![
                edn_text_field("variables", &format!("[{}]", vars.join(" "))),
                edn_text_field("clause", clause),
            ],
            QueryError::LookupRefNotUnique { attr, lookup_ref } => vec![
                edn_text_field("attribute", attr),
                edn_text_field("lookup-ref", lookup_ref),
            ],
            QueryError::OrBranchVars { clause, .. }
            | QueryError::OrBindingEmpty { clause }
            | QueryError::AndOutsideOr { clause } => {
                vec![edn_text_field("clause", clause)]
            }
            QueryError::UnknownFunction { name }
            | QueryError::BadArguments { name, .. }
            | QueryError::UnknownRule { name }
            | QueryError::UnknownAggregate { name } => vec![edn_text_field("name", name)],
            QueryError::NotAKeyword { value } | QueryError::NotAnAttribute { value } => {
                vec![edn_text_field("value", value)]
            }
            QueryError::InvalidLookupRef { lookup } => vec![edn_text_field("lookup-ref", lookup)],
            QueryError::Timeout { ms } => vec![("timeout", Edn::Long(*ms as i64))],
            QueryError::ResourceExhausted {
                resource,
                limit,
                used,
            } => vec![
                (
                    "resource",
                    Edn::Keyword(crate::codec::Keyword::parse(resource)),
                ),
                (
                    "limit",
                    Edn::Long(i64::try_from(*limit).unwrap_or(i64::MAX)),
                ),
                ("used", Edn::Long(i64::try_from(*used).unwrap_or(i64::MAX))),
            ],
            QueryError::UnknownSource { name, clause } => vec![
                edn_text_field("source", name),
                edn_text_field("clause", clause),
            ],
            QueryError::Pull(e) => e.fields(),
            QueryError::Store(e) => e.fields(),
            QueryError::Search(e) => e.fields(),
            _ => Vec::new(),
        }
    }
}

/// What a built-in found wrong with its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuiltinProblem {
    /// The wrong number of arguments.
    #[error("takes {expected} {}, got {got}", arguments_word(expected))]
    Arity {
        /// How many arguments the function takes (`"2"`, `"at least 1"`).
        expected: &'static str,
        /// How many it was given.
        got: usize,
    },
    /// An argument of a type the function cannot take (`position` from 1; `got` is EDN).
    #[error("argument {position} must be {expected}, got {got}")]
    Type {
        /// The argument's position, from 1.
        position: usize,
        /// The type the function takes there.
        expected: &'static str,
        /// The argument, as EDN.
        got: String,
    },
    /// Integer arithmetic left its range (Datomic: `ArithmeticException: long overflow`).
    #[error("{0} overflow")]
    Overflow(&'static str),
    /// Division (`/`, `quot`, `rem`, `mod`) by zero, also of doubles, as in Datomic.
    #[error("divide by zero")]
    DivideByZero,
    /// A result that is not a number (NaN).
    #[error("the result is not a number (NaN)")]
    NotANumber,
    /// A value out of the range the function accepts (an index, a count).
    #[error("{0}")]
    OutOfRange(String),
    /// A pattern that cannot be compiled (see `codec::regex`).
    #[error("{0}")]
    Regex(#[from] crate::codec::RegexError),
}

fn arguments_word(expected: &str) -> &'static str {
    if expected == "1" {
        "argument"
    } else {
        "arguments"
    }
}
