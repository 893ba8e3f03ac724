//! What one (peer, query) gave in one pass, and over the passes.

use super::answer::Answer;
use crate::common::passes::Spread;

/// One pass of one (peer, query).
#[derive(Debug, Clone)]
pub enum PassOutcome {
    /// Ran: the median of the timed runs, how many, the warm-up run's answer.
    Ran {
        ms: f64,
        runs: usize,
        answer: Answer,
    },
    /// Stopped at the time limit.
    TimedOut,
    /// Failed, and how.
    Failed(String),
    /// Not run, and why (a peer not installed, without a harness).
    Skipped(String),
}

/// The answer check of a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// Equal to the reference's answer in every pass.
    Agrees,
    /// Different (the first difference).
    Differs(String),
    /// The reference gave no answer to compare with.
    NoReference,
    /// This peer is the reference.
    Reference,
}

/// A (peer, query) over the passes.
#[derive(Debug, Clone)]
pub enum Outcome {
    Measured {
        spread: Spread,
        runs: usize,
        rows: usize,
        check: Check,
    },
    TimedOut,
    Failed(String),
    Skipped(String),
}

/// One cell of the result table.
#[derive(Debug, Clone)]
pub struct Cell {
    pub peer: String,
    pub query: String,
    pub outcome: Outcome,
}

impl Cell {
    /// The median ms when measured with an answer that agrees (or is the reference's).
    pub fn good_ms(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Measured {
                spread,
                check: Check::Agrees | Check::Reference,
                ..
            } => Some(spread.median),
            _ => None,
        }
    }

    /// The median ms when measured, whatever its answer.
    pub fn ms(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Measured { spread, .. } => Some(spread.median),
            _ => None,
        }
    }
}
