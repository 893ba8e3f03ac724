//! The command's errors, split by who must act, because the exit code says so: 1 for the
//! user's input (bad query, bad tx data, bad arguments), 2 for the environment (cannot open,
//! corrupt file, I/O).

use std::fmt;

use datalith::edn::ReadError;
use datalith::kv::KvError;
use datalith::query::QueryError;
use datalith::tx::TxError;

/// Who is at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input: exit code 1.
    User,
    /// The environment or the file: exit code 2.
    Env,
}

/// An error with its kind and a message ready to print.
#[derive(Debug)]
pub struct CliError {
    /// Whose fault.
    pub kind: Kind,
    /// What to print after `error: `.
    pub message: String,
}

/// Results of the command.
pub type Result<T> = std::result::Result<T, CliError>;

impl CliError {
    /// A user error.
    pub fn user(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::User,
            message: message.into(),
        }
    }

    /// An environment error.
    pub fn env(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Env,
            message: message.into(),
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
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
        CliError::user(format!("{source}:{}:{}: {}", e.line, e.column, e.message))
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<TxError> for CliError {
    fn from(e: TxError) -> Self {
        let kind = if e.is_user_error() {
            Kind::User
        } else {
            Kind::Env
        };
        CliError {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<QueryError> for CliError {
    fn from(e: QueryError) -> Self {
        let kind = match e {
            QueryError::Store(_) => Kind::Env,
            _ => Kind::User,
        };
        CliError {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<KvError> for CliError {
    fn from(e: KvError) -> Self {
        let kind = if e.is_user_error() {
            Kind::User
        } else {
            Kind::Env
        };
        CliError {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<datalith::store::StoreError> for CliError {
    fn from(e: datalith::store::StoreError) -> Self {
        CliError::env(e.to_string())
    }
}

impl From<datalith::api::dump::DumpError> for CliError {
    fn from(e: datalith::api::dump::DumpError) -> Self {
        CliError::env(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::env(e.to_string())
    }
}
