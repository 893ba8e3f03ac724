//! The `complex` workload: TPC-H's 22 queries on its generated data, in Datalog on Datalith
//! and in SQL on PostgreSQL (the answer reference) and SQLite, with the external peers
//! (Datalevin, DuckDB) through `bench/peers/run.sh`.
//!
//! - [`tables`]: the eight tables, their columns and kinds, as every loader sees them.
//! - [`generate`]: `.tbl` files from the `tpchgen` crate, once per scale factor.
//! - [`queries`]: the query files of `bench/complex/` (SQL, Datalog ports).
//! - [`steps`]: a Datalog port of several queries, and how they are composed.
//! - [`answer`]: answers normalized, and compared with the reference's.
//! - [`peer`]: what an in-process peer is.
//! - [`datalith_peer`], [`sqlite_peer`], [`postgres`]: the in-process peers (PostgreSQL
//!   through its client, on a cluster this run starts and stops).
//! - [`sql_schema`]: the SQL peers' tables and indexes.

#[cfg(test)]
mod agreement;
pub mod answer;
pub mod datalith_peer;
pub mod generate;
pub mod peer;
pub mod queries;
pub mod sql_schema;
pub mod sqlite_peer;
pub mod steps;
pub mod tables;
