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
pub mod stack;
pub mod store;
pub mod tx;

// Curated homes for tools and programs below Datalog (the CLI, the benchmarks): operator
// checks and copies, and caller-chosen entity ids with raw index reads.
pub mod admin;
pub mod raw;

pub use api::{explain, q, q_each, q_rows, q_with, Database, DbOptions, Input, TimePoint};
pub use codec::{Keyword, Value};
pub use db::Db;
pub use edn::Edn;
pub use error::{Anomaly, Category, Error};
pub use kv::{Durability, EnvOptions};
pub use pull::Eid;
pub use query::QueryError;
pub use store::{Datom, ValueIndex};
pub use tx::{IntoTxData, TxClock, TxData, TxError, TxReport};

/// The README's example, compiled and run as a doctest so that it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

// The user guide's pages (`docs/guide/`): every Rust example in them runs as a doctest, one
// module a page, so that a page cannot drift from the code it describes.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/README.md")]
mod guide_index {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/schema.md")]
mod guide_schema {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/transactions.md")]
mod guide_transactions {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/queries.md")]
mod guide_queries {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/functions.md")]
mod guide_functions {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/pull.md")]
mod guide_pull {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/time.md")]
mod guide_time {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/search.md")]
mod guide_search {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/kv.md")]
mod guide_kv {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/durability.md")]
mod guide_durability {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/operations.md")]
mod guide_operations {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/files.md")]
mod guide_files {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/processes.md")]
mod guide_processes {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/server.md")]
mod guide_server {}
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/python.md")]
mod guide_python {}
