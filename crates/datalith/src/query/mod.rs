//! Datomic-dialect Datalog queries.
//!
//! - [`lower`]: the query form (EDN) to the engine's [`ir`] (variables numbered, attributes
//!   resolved, scalar inputs plugged in as constants).
//! - [`exec`]: cost-based, clause-order-independent evaluation over the indexes.
//! - [`rules`]: semi-naive evaluation of rules.
//! - [`find`]: aggregates and the result's shape.
//! - [`run`]: the entry point, with the parse cache; `inputs` (input values as relations)
//!   and `entities` (entity ids named by constants and inputs, per database) serve it.
//! - [`relation`], [`builtins`], [`error`]: the pieces they share.

pub mod builtins;
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

pub use error::QueryError;
pub use exec::Step;
pub use run::{QueryCache, Registry};
