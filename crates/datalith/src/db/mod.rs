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

mod functions;
pub mod tx_data;
mod value;

pub use functions::{
    AggregateFunction, Functions, QueryFunction, QueryFunctions, TxFunction, TxFunctions,
};
pub use value::Db;
pub(crate) use value::DbParts;
