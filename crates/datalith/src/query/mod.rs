//! Datomic-dialect Datalog queries.
//!
//! - [`lower`]: the query form (EDN) to the engine's [`ir`] (variables numbered, attributes
//!   resolved, scalar inputs plugged in as constants).
//! - [`exec`]: cost-based, clause-order-independent evaluation over the indexes.
//! - [`distinct`]: which steps must deduplicate to keep the rows a set.
//! - [`rules`]: semi-naive evaluation of rules.
//! - [`find`]: aggregates and the result's shape.
//! - [`validate`]: the queries Datomic rejects before running them.
//! - [`run`]: the entry point, with the parse cache; `inputs` (input values as relations)
//!   and `entities` (entity ids named by constants and inputs, per database) serve it.
//! - [`budget`]: what a run may spend (timeout, cancellation, memory), ticked by every loop.
//! - [`relation`], [`builtins`], [`error`]: the pieces they share.

pub mod budget;
pub mod builtins;
pub mod distinct;
mod entities;
pub mod error;
pub mod exec;
pub mod find;
mod inputs;
pub mod ir;
pub mod lower;
pub mod relation;
pub mod rules;
pub mod run;
pub mod show;
pub mod validate;

pub use error::{BuiltinProblem, QueryError};
pub use exec::Step;
pub use run::{PreparedQuery, QueryCache, QueryOptions, Registry};
