//! `datalith-bench results`: the published results in `bench/results/`, composed by workload.
//!
//! A table is fair when every number in it comes from one run on one machine state; different
//! tables may come from different runs. So each workload is run alone into its own dated
//! folder (`datalith-bench all --only WORKLOAD --out bench/results/<date>-<workload>`), and
//! `bench/results/RESULTS.md` is generated from the newest folder of each workload, each table
//! headed by its own date and commit.
//!
//! - [`record`]: `run.json`, what a folder's run was (command, commit, date, wall time, exit).
//! - [`catalog`]: the folders, the workloads each holds, and the newest of each workload.
//! - [`whole`]: whether a folder is whole: every peer present, every count ok, charts present.
//! - [`render`]: `RESULTS.md` and the README's performance block from the catalog.
//! - [`run`]: writes both, or (`--check`) compares them with what is committed.
//!
//! Invariant: nothing here measures; every figure printed comes from a `summary.jsonl` of one
//! folder, and a ratio never crosses folders.

mod args;
mod catalog;
pub(crate) mod record;
mod render;
mod run;
mod whole;

pub use args::ResultsArgs;
pub use run::run;
