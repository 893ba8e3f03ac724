//! Datalith: a fast, durable, embedded Datalog database (Datomic's dialect) and key-value
//! store on LMDB.
//!
//! Start at the re-exports below: open a [`Database`], [`Database::transact`] tx data (EDN
//! text, [`Edn`] or [`TxData`]), take a [`Db`] value with [`Database::db`] and read it with
//! [`Db::q`], [`Db::pull`] and [`Db::with`]; [`q`] queries several inputs at once. Every error
//! converts into [`Error`], whose [`Category`] a program can match. The key-value store is a
//! product of its own: [`kv`].
//!
//! Modules, by layer, bottom up (`tests/layers.rs` checks that none names a layer above it):
//! [`limits`]; [`codec`], [`edn`] and [`error`]'s categories; [`kv`]; [`search`] (full-text
//! indexes on the KV engine); [`store`]; [`db`]
//! (the database value); [`tx`]; [`pull`] and [`query`]; [`api`] (the handles and options).
//! See `ARCHITECTURE.md` for the map and the life of a query and of a transaction.

#![warn(missing_docs)]

pub mod api;
pub mod codec;
pub mod db;
pub mod edn;
pub mod error;
pub mod kv;
pub mod limits;
pub mod pull;
pub mod query;
pub mod search;
pub mod store;
pub mod tx;

// Curated homes for tools and programs below Datalog (the CLI, the benchmarks): operator
// checks and copies, and caller-chosen entity ids with raw index reads.
pub mod admin;
pub mod raw;

pub use api::{explain, q, q_with, Database, DbOptions, Input, TimePoint};
pub use codec::{Keyword, Value};
pub use db::Db;
pub use edn::Edn;
pub use error::{Anomaly, Category, Error};
pub use kv::{Durability, EnvOptions};
pub use pull::Eid;
pub use query::QueryError;
pub use store::Datom;
pub use tx::{IntoTxData, TxData, TxError, TxReport};

/// The README's example, compiled and run as a doctest so that it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}
