//! Workload W of `BENCHMARKS.md`: pure writes into an empty store (keys 2..2N ascending,
//! random UUID values, batches of 1/10/100/1000 records per call), then mixed read/write on
//! the batch-1 store, for Datalith and its peers in one run.
//!
//! - [`args`]: flags and the sizes they resolve to.
//! - [`condition`]: the [`condition::Condition`] trait and the list of conditions.
//! - [`stores`]: the in-process stores (Datalith KV, SQLite, raw LMDB, RocksDB).
//! - [`peers`]: the JVM peer (Datalevin) through `bench/peers/`.
//! - [`workload`]: keys, seeded UUID values, the mixed phase's key choice.
//! - [`init`]: the bulk-load phase (`init_db` against Datalevin's `init-db` and SQLite).
//! - [`runner`]: the child process: timing, CSV rows, count checks.
//! - [`orchestrate`]: the parent: passes (order rotated), one child per condition and batch,
//!   progress.
//! - [`merge`]: the passes of one (condition, batch) as one result with its spread.
//! - [`summary`] / [`plots`]: `summary.md`, `summary.jsonl`, PNGs.

mod args;
mod condition;
mod init;
mod merge;
mod orchestrate;
mod peers;
mod plots;
mod result;
mod runner;
pub(crate) mod stores;
mod summary;
mod workload;

pub use args::{ChildArgs, WriteArgs};
pub use orchestrate::{run, run_child};

/// Async conditions keep at most this many calls in flight (the seed's semaphore).
pub const MAX_IN_FLIGHT: usize = 1000;
