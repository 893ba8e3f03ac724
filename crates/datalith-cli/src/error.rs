//! The command's errors, split by who must act, because the exit code says so: 1 for the
//! user's input (bad query, bad tx data, bad arguments), 2 for the environment (cannot open,
//! corrupt file, I/O), 3 for a permission refused (file modes or the user running it). Each keeps the library error's category (`datalith::error`) and
//! structured fields, so `--format edn|json` can print it as one map.

use std::fmt;

use datalith::edn::{Edn, ReadError};
use datalith::error::{self as lib, Blame, Category, Field};

/// Who is at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input: exit code 1.
    User,
    /// The environment or the file: exit code 2.
    Env,
}

/// An error with its kind, category and a message ready to print.
#[derive(Debug)]
pub struct CliError {
    /// Whose fault.
    pub kind: Kind,
    /// What to print after `error: `.
    pub message: String,
    /// The stable category (`:db/error` and anomaly).
    pub category: Category,
    /// Structured fields of the error (Datomic's `ex-data` keys where it has them).
    pub fields: Vec<Field>,
}

/// Results of the command.
pub type Result<T> = std::result::Result<T, CliError>;

impl CliError {
    /// A user error (bad arguments or input).
    pub fn user(message: impl Into<String>) -> Self {
        CliError::categorized(lib::INVALID_ARGUMENT, message.into(), Vec::new())
    }

    /// An environment error.
    pub fn env(message: impl Into<String>) -> Self {
        CliError::categorized(lib::IO, message.into(), Vec::new())
    }

    /// An error of a given category; the kind (and so the exit code) follows its blame.
    pub fn categorized(category: Category, message: String, fields: Vec<Field>) -> Self {
        let kind = match category.blame {
            Blame::Caller => Kind::User,
            Blame::Environment | Blame::Corruption => Kind::Env,
        };
        CliError {
            kind,
            message,
            category,
            fields,
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        if self.category == lib::IO_FORBIDDEN {
            return 3;
        }
        match self.kind {
            Kind::User => 1,
            Kind::Env => 2,
        }
    }

    /// The same error with `context: ` in front of the message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// An EDN syntax error in `source` (a file name or `input`), as `source:line:column: msg`.
    pub fn read(source: &str, e: &ReadError) -> Self {
        let fields = vec![
            lib::text_field("source", source),
            ("line", Edn::Long(e.line as i64)),
            ("column", Edn::Long(e.column as i64)),
        ];
        CliError::categorized(
            lib::INVALID_EDN,
            format!("{source}:{}:{}: {}", e.line, e.column, e.message),
            fields,
        )
    }

    /// The error as one EDN map: `{:db/error ..., :cognitect.anomalies/category ...,
    /// :message "...", ...fields}`.
    pub fn to_edn(&self) -> Edn {
        lib::error_map(self.category, &self.message, self.fields.clone())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<datalith::Error> for CliError {
    fn from(e: datalith::Error) -> Self {
        CliError::categorized(e.category(), e.to_string(), e.fields())
    }
}

macro_rules! from_library_error {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                datalith::Error::from(e).into()
            }
        }
    )*};
}

from_library_error!(
    datalith::tx::TxError,
    datalith::query::QueryError,
    datalith::kv::KvError,
    datalith::store::StoreError,
    datalith::admin::DumpError
);

impl From<datalith_server::ServerError> for CliError {
    fn from(e: datalith_server::ServerError) -> Self {
        CliError::categorized(e.category, e.message, e.fields)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::categorized(lib::io_category(&e), e.to_string(), Vec::new())
    }
}
