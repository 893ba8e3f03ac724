//! Datalith: a fast, durable, embedded Datalog database and key-value store on LMDB.
//!
//! Layers, bottom up: [`kv`] (LMDB environment, tables, group commit), then the codec, the
//! Datalog store, transactions, queries and pull. See `ARCHITECTURE.md`.

pub mod api;
pub mod codec;
pub mod db;
pub mod edn;
pub mod error;
pub mod kv;
pub mod limits;
pub mod pull;
pub mod query;
pub mod store;
pub mod tx;

pub use api::{explain, q, Database, Db, DbOptions, Input};
pub use error::{Anomaly, Category, Error};
