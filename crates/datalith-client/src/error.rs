//! A failed request: the server's error map (`:db/error`, the anomaly, the message) with
//! the HTTP status, or a failure to reach the server at all.

use std::fmt;

use datalith::edn::Edn;

/// What went wrong.
#[derive(Debug, Clone)]
pub struct ClientError {
    /// The HTTP status (0 when no answer came).
    pub status: u16,
    /// The error's code, e.g. `:db.error/unique-conflict` (`None` when no answer came).
    pub code: Option<String>,
    /// Its Cognitect anomaly, e.g. `:cognitect.anomalies/conflict`.
    pub anomaly: Option<String>,
    /// The message.
    pub message: String,
    /// The whole error map, with its fields (boxed: errors travel in every `Result`).
    pub data: Box<Edn>,
}

impl ClientError {
    /// An error read from an answer's body.
    pub(crate) fn from_answer(status: u16, body: Edn) -> ClientError {
        let field = |key: &str| match &body {
            Edn::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| *k == Edn::kw(key))
                .map(|(_, v)| v.clone()),
            _ => None,
        };
        let text = |e: Option<Edn>| {
            e.map(|v| match v {
                Edn::String(s) => s,
                other => other.to_string(),
            })
        };
        ClientError {
            status,
            code: text(field(":db/error")),
            anomaly: text(field(":cognitect.anomalies/category")),
            message: text(field(":message")).unwrap_or_else(|| body.to_string()),
            data: Box::new(body),
        }
    }

    /// The error a query's item sink stopped the reading with, under its own category.
    pub(crate) fn of_query(e: &datalith::query::QueryError) -> ClientError {
        let category = e.category();
        ClientError {
            status: 0,
            code: Some(category.code.to_string()),
            anomaly: Some(category.anomaly.code().to_string()),
            message: e.to_string(),
            data: Box::new(Edn::Nil),
        }
    }

    /// No answer (the server cannot be reached, the connection broke), or one that is not
    /// EDN.
    pub(crate) fn transport(message: impl Into<String>) -> ClientError {
        ClientError {
            status: 0,
            code: None,
            anomaly: Some(":cognitect.anomalies/unavailable".to_string()),
            message: message.into(),
            data: Box::new(Edn::Nil),
        }
    }
}

impl ClientError {
    /// A TLS failure: the server's certificate not trusted, or no TLS on the other side.
    /// Retrying does not help; the client's configuration (its roots, its URL) must change.
    pub(crate) fn tls(message: impl Into<String>) -> ClientError {
        ClientError {
            status: 0,
            code: Some(TLS.to_string()),
            anomaly: Some(":cognitect.anomalies/incorrect".to_string()),
            message: message.into(),
            data: Box::new(Edn::Nil),
        }
    }

    /// A client that cannot be built as asked (a CA file without a certificate).
    pub(crate) fn config(message: impl Into<String>) -> ClientError {
        ClientError {
            status: 0,
            code: Some(":datalith.error/invalid-argument".to_string()),
            anomaly: Some(":cognitect.anomalies/incorrect".to_string()),
            message: message.into(),
            data: Box::new(Edn::Nil),
        }
    }
}

/// The code of a failed TLS handshake (`ClientError::code`).
pub const TLS: &str = ":datalith.error/tls";

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{code}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ClientError {}
