//! The server's errors: each has a stable [`Category`] (the library's, or one of
//! [`codes`] for what only a server can refuse), a message, and fields, and becomes one body
//! `{:db/error ..., :cognitect.anomalies/category ..., :message "...", ...}` with the HTTP
//! status [`status::of`] gives it.

pub mod codes;
pub mod status;

use std::fmt;

use datalith::edn::{Edn, ReadError};
use datalith::error::{self as lib, Category, Field};

/// An error on its way to the client (or, at start, to the terminal).
#[derive(Debug, Clone)]
pub struct ServerError {
    /// The stable category: `:db/error` code and anomaly.
    pub category: Category,
    /// What went wrong, for people.
    pub message: String,
    /// Structured fields (Datomic's `ex-data` keys where the library has them).
    pub fields: Vec<Field>,
}

/// Results of the server.
pub type Result<T> = std::result::Result<T, ServerError>;

impl ServerError {
    /// An error of `category`.
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        ServerError {
            category,
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// A request that is malformed beyond its EDN or JSON (a missing field, a wrong type).
    pub fn invalid(message: impl Into<String>) -> Self {
        ServerError::new(lib::INVALID_ARGUMENT, message)
    }

    /// The same error with one more field.
    pub fn with(mut self, key: &'static str, value: Edn) -> Self {
        self.fields.push((key, value));
        self
    }

    /// EDN text that does not read, `source` naming what it was (`body`, `:query`).
    pub fn read(source: &str, e: &ReadError) -> Self {
        ServerError::new(
            lib::INVALID_EDN,
            format!("{source}:{}:{}: {}", e.line, e.column, e.message),
        )
        .with("source", Edn::String(source.to_string()))
        .with("line", Edn::Long(e.line as i64))
        .with("column", Edn::Long(e.column as i64))
    }

    /// The body the client gets.
    pub fn to_edn(&self) -> Edn {
        lib::error_map(self.category, &self.message, self.fields.clone())
    }
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ServerError {}

impl From<datalith::Error> for ServerError {
    fn from(e: datalith::Error) -> Self {
        ServerError {
            category: e.category(),
            message: e.to_string(),
            fields: e.fields(),
        }
    }
}

macro_rules! from_library_error {
    ($($t:ty),*) => {$(
        impl From<$t> for ServerError {
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
    datalith::store::StoreError
);

impl From<std::io::Error> for ServerError {
    fn from(e: std::io::Error) -> Self {
        ServerError::new(lib::io_category(&e), e.to_string())
    }
}
