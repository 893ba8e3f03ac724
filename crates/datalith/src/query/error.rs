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
    #[error("unknown function {name}: neither a built-in nor a registered function")]
    UnknownFunction { name: String },
    /// A function called with arguments it cannot take.
    #[error("{name}: {message}")]
    BadArguments { name: String, message: String },
    /// A built-in refused its arguments: `call` is the call as EDN with the argument values,
    /// e.g. `(+ "a" 1)`.
    #[error("{call}: {problem}")]
    Builtin {
        name: String,
        call: String,
        problem: BuiltinProblem,
    },
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

/// What a built-in found wrong with its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuiltinProblem {
    /// The wrong number of arguments.
    #[error("takes {expected} {}, got {got}", arguments_word(expected))]
    Arity { expected: &'static str, got: usize },
    /// An argument of a type the function cannot take (`position` from 1; `got` is EDN).
    #[error("argument {position} must be {expected}, got {got}")]
    Type {
        position: usize,
        expected: &'static str,
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
