//! The `complex` workload: TPC-H's 22 queries on its generated data, in Datalog on Datalith
//! and in SQL on PostgreSQL (the answer reference) and SQLite, with the external peers
//! (Datalevin, DuckDB) through `bench/peers/run.sh`.
//!
//! - [`args`]: flags and what they resolve to.
//! - [`tables`]: the eight tables, their columns and kinds, as every loader sees them.
//! - [`generate`]: `.tbl` files from the `tpchgen` crate, once per scale factor.
//! - [`queries`]: the query files of `bench/complex/` (SQL, Datalog ports).
//! - [`steps`]: a Datalog port of several queries, and how they are composed.
//! - [`answer`]: answers normalized, and compared with the reference's.
//! - [`peer`]: what an in-process peer is.
//! - [`datalith_peer`], [`sqlite_peer`], [`postgres`]: the in-process peers (PostgreSQL
//!   through its client, on a cluster this run starts and stops).
//! - [`sql_schema`]: the SQL peers' tables and indexes.
//! - [`external`]: the seam for peers in their own process (`bench/peers/run.sh`).
//! - [`timing`]: one pass of one (peer, query): warm-up, timed runs, median.
//! - [`cell`]: what a pass and a cell hold.
//! - [`report`]: geometric means, verdicts, `summary.md`, `summary.jsonl`.
//! - [`plot`]: the chart.
//! - [`orchestrate`]: the run.

#[cfg(test)]
mod agreement;
mod answer;
mod args;
mod cell;
mod datalith_peer;
mod external;
mod generate;
mod orchestrate;
mod peer;
mod plot;
mod postgres;
mod queries;
mod report;
mod sql_schema;
mod sqlite_peer;
mod steps;
mod tables;
mod timing;

pub use args::ComplexArgs;
pub use orchestrate::run;
