//! Workload B (seed 004): steady-rate blob writes, durable every 500 ms, Datalith KV against
//! SQLite and RocksDB, each store at each rate in its own child process.
//!
//! - [`args`]: the subcommand's flags and the hidden child's.
//! - [`orchestrate`]: the parent: data directories, `sync`, device counters, children.
//! - [`child`]: one store at one rate, measuring itself.
//! - [`pace`]: the paced writer and the read-back check.
//! - [`stores`]: Datalith KV (and its alternatives), SQLite, RocksDB.
//! - [`probe`]: CPU time, `/proc/self/io`, block device counters.
//! - [`tracer`]: system-call counts through `perf stat` tracepoints.
//! - [`row`] / [`summary`] / [`plots`]: the figures, `summary.md` / `summary.jsonl`, PNGs.

pub mod args;
pub mod child;
pub mod orchestrate;
pub mod pace;
pub mod plots;
pub mod probe;
pub mod row;
pub mod stores;
pub mod summary;
pub mod tracer;

use std::process::ExitCode;

pub use crate::common::BenchError;
pub use args::{BlobArgs, BlobChildArgs};

/// `datalith-bench blob`: every store at every rate, then the summary.
pub fn run(args: BlobArgs) -> Result<ExitCode, BenchError> {
    orchestrate::run(args).map(|()| ExitCode::SUCCESS)
}

/// The hidden child subcommand: one store at one rate.
pub fn run_child(args: BlobChildArgs) -> Result<ExitCode, BenchError> {
    child::run(args).map(|()| ExitCode::SUCCESS)
}
