//! The public face of the Datalog database: [`Database`] (open, transact) and [`Db`]
//! (database values to read: snapshots, and speculative values from [`Db::with`] and from
//! reports' `db_before()`/`db_after()`, see [`speculative`]).

pub mod check;
mod check_log;
pub mod database;
pub mod db;
pub mod dump;
pub mod entity;
pub mod index;
pub mod input;
pub mod speculative;

pub use crate::db::Db;
pub use database::{Database, DbOptions};
pub use entity::{Entity, EntityValue};
pub use index::{Components, Index};
pub use input::{explain, q, Input};
