//! What a peer is (a store that runs tasks) and what one task gave.

use super::tasks::Task;
use super::timing::{Measured, Plan};
use crate::common::BenchError;

/// An in-process peer: runs one task at a time.
pub trait Peer {
    /// Whether this peer runs `task` at all (the `nosync` variants run only write tasks:
    /// their reads would be the durable store's reads again).
    fn runs(&self, task: &Task) -> bool;
    /// Measures `task`.
    fn run(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError>;
}

/// What one (peer, task) cell holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Measured(Measured),
    /// Not run, and why (a missing runtime, a task the peer does not have).
    Skipped(String),
    /// Run and failed.
    Failed(String),
}

/// One cell of the result table.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub peer: String,
    pub task: String,
    pub outcome: Outcome,
}
