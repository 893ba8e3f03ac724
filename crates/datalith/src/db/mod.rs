//! The database value layer: what `tx`, `pull` and `query` all read, below all three.
//!
//! - [`Db`] (`value.rs`): one immutable state of the database (an LMDB snapshot, an optional
//!   overlay of speculative writes, the schema and attribute statistics of that state).
//! - [`Functions`] (`functions.rs`): the typed registry of user functions (query functions,
//!   aggregates, transaction functions) every value of one database shares.
//! - [`tx_data`]: transaction data, the vocabulary transaction functions return and
//!   `transact`/`with` take.
//!
//! Nothing here imports `tx`, `pull`, `query` or `api` (`tests/layers.rs` checks it). The
//! entry points that read a `Db` (`q`, `pull`, `with`, `entity`, ...) are `impl Db` blocks
//! in the layers that own them.
//!
//! # Database values and speculation
//!
//! A `Db` is an `Arc<Snapshot>` plus an optional `Arc<Overlay>`, the store, its schema (given,
//! never looked up by version for a speculative value) and the database's [`Functions`];
//! cloning is cheap. `Db::with(tx)` (Datomic's `with`, `api/speculative.rs`) runs the same
//! attempt as a committed transaction (`tx/attempt.rs`: `run_tx`, then `stage_datoms`), then the
//! batch's counter/statistics/schema-version writes, against the value's reader, and puts the
//! staged ops into a copy of its overlay: the report's `db_after()` shares the snapshot and is
//! queryable, pullable and extendable (`db_with`, Datascript's `db-with`). Answers are exact; a
//! speculative schema is never published to the store's schema cache (its version number may
//! later name a different committed schema). A committed report's `db_before()`/`db_after()`
//! come from its batch snapshot plus the schemas and id counters recorded around the request
//! (`tx::report::BatchLink`); their attribute statistics are the batch's (estimates only).

mod functions;
pub mod tx_data;
mod value;

pub use functions::{
    AggregateFunction, Functions, QueryFunction, QueryFunctions, TxFunction, TxFunctions,
};
pub use value::Db;
pub(crate) use value::DbParts;
