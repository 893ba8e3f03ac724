//! `datalith-bench all`: every workload with every peer in one results folder, the machine
//! described at the start, and a generated `RESULTS.md` with a verdict per row.
//!
//! - [`args`]: flags, and the per-workload command lines a full or quick run makes.
//! - [`machine`]: CPU, cores, RAM, kernel, disk flush time (measured), commit and date.
//! - [`verdicts`]: `RESULTS.md` from each workload's `summary.jsonl`.
//! - [`run`]: the run itself: each workload as a child process of this binary.
//!
//! Invariant: every workload writes into its own sub-folder of the one results folder, and
//! `RESULTS.md` is generated only from what those folders hold (never from figures of
//! another run).

mod args;
pub(crate) mod machine;
mod run;
pub(crate) mod verdicts;

pub use args::AllArgs;
pub use run::run;
