//! The public face of the Datalog database: [`Database`] (open, transact) and [`Db`]
//! (database values to read: snapshots, and speculative values from [`Db::with`] and from
//! reports' `db_before()`/`db_after()`, see [`speculative`]); and a program's key-value tables
//! beside the store ([`kv_tables`]).

pub(crate) mod check;
mod check_fulltext;
mod check_history;
mod check_listed;
mod check_log;
pub mod database;
pub mod db;
pub(crate) mod dump;
pub mod entity;
mod history_backfill;
pub(crate) mod index;
pub mod input;
pub mod kv_tables;
pub mod speculative;
pub mod time;

pub use crate::db::Db;
pub use database::{Database, DbOptions};
pub use entity::{Entity, EntityValue};
pub use input::{explain, q, q_each, q_rows, q_with, Input};
pub use kv_tables::{kv_catalog_name, KV_TABLE_PREFIX};
pub use time::TimePoint;
