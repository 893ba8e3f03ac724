//! What an in-process peer is: a store loaded with the TPC-H tables that answers a query
//! within a time limit.

use std::time::Duration;

use super::answer::Answer;
use super::queries::Query;

/// Why a query gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// It ran past the time limit and was stopped.
    Timeout,
    /// It failed (the message says how).
    Failed(String),
}

/// An in-process peer.
pub trait Peer {
    /// Runs `query` once, stopped after `limit`; its whole answer, normalized.
    fn run(&mut self, query: &Query, limit: Duration) -> Result<Answer, RunError>;
    /// The plan of each step of `query`, when the peer can tell it (Datalith's `explain`).
    fn explain(&self, _query: &Query) -> Option<Result<String, String>> {
        None
    }
}
