//! Workload Q of `BENCHMARKS.md` (seeds 003 and 001): 20,000 people, the transaction tasks
//! (init, add-1, add-5, add-all, retract-5), the seed's queries (q1 .. q5, qpred1, qpred2) and
//! the lookup of seed 001 (Datalog and raw index access), for Datalith and its peers in one run.
//!
//! - [`args`]: flags and the sizes they resolve to.
//! - [`data`]: the people, generated from a fixed seed and written to one JSON-lines file that
//!   every peer loads.
//! - [`tasks`]: the task list and the exact query texts.
//! - [`timing`]: warm-up (the same for every peer), then repeat for a fixed time; the median.
//! - [`peer`]: what a peer is and what one task gave.
//! - [`datalith`] / [`sqlite`]: the in-process peers.
//! - [`external`]: the JVM and Node peers through `bench/peers/<peer>/query.sh`.
//! - [`remote`]: `--remote`: Datalith through the real `datalith serve`, and Datalevin's
//!   server (`datalevin-remote`, through `bench/peers/`).
//! - [`python`]: `--python`: the tasks from Python (the Datalith wheel, Datalevin's Python
//!   package, `sqlite3`) through `bench/peers/python/query.py`.
//! - [`merge`]: the passes of one (peer, task) cell as one figure with its spread.
//! - [`report`]: count checks, `summary.md`, `summary.jsonl`, the verdicts.
//! - [`plot`]: the latency bars.
//! - [`orchestrate`]: the run itself.

mod args;
mod data;
mod datalith;
mod external;
mod merge;
mod orchestrate;
mod peer;
mod plot;
mod python;
mod remote;
mod report;
mod sqlite;
mod tasks;
pub(crate) mod timing;

pub use args::QueryArgs;
pub use orchestrate::run;
