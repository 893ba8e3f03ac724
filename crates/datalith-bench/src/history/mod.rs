//! Workload H (history): the same history in Datalith and in the real Datomic peer, and the
//! reads of time: a query as of 25%, 50% and 75% of the history and on the current db, one
//! entity's every version on the history db, and the transaction log through the API and
//! through the `tx-ids`/`tx-data` query functions.
//!
//! - [`args`]: flags and the sizes they resolve to.
//! - [`rows`]: the rows and the exact query texts.
//! - [`data`]: the history, generated from a seed into one JSON-lines file every peer loads,
//!   and the answer every row must give.
//! - [`api`]: the time-view calls of Datalith in one place (`// TIME-API:`).
//! - [`timing`]: warm-up, then repeat for a fixed time; the median and the fastest call.
//! - [`datalith`]: Datalith in process; [`external`]: Datomic through
//!   `bench/peers/datomic/history.clj`.
//! - [`report`]: passes merged, answers checked, `summary.md`, `summary.jsonl`, `history.csv`.
//! - [`orchestrate`]: the run itself.

mod api;
mod args;
mod data;
mod datalith;
mod external;
mod orchestrate;
mod report;
mod rows;
mod timing;

pub use args::HistoryArgs;
pub use orchestrate::run;
