//! Datomic-dialect Datalog queries.
//!
//! - [`parse`]: query text (or EDN data) to a schema-free AST whose forms carry their spans;
//!   cached by text.
//! - [`lower`]: the parsed query to the engine's [`ir`] (variables numbered, attributes
//!   resolved against each source's schema, scalar inputs plugged in as constants).
//! - [`exec`]: cost-based, clause-order-independent evaluation over the indexes.
//! - [`distinct`]: which steps must deduplicate to keep the rows a set.
//! - [`rules`]: semi-naive, bottom-up evaluation of rules, seeded by the call's bound
//!   arguments.
//! - [`find`]: aggregates and the result's shape.
//! - [`validate`]: the queries Datomic rejects before running them.
//! - [`run`]: the entry point, with the parse cache; `inputs` (input values as relations)
//!   and `entities` (entity ids named by constants and inputs, per database) serve it.
//! - [`budget`]: what a run may spend (timeout, cancellation, memory), ticked by every loop.
//! - [`builtins`]: the built-in functions, one family a file (`mod.rs` `lookup` is the table).
//! - [`relation`], [`show`], [`error`]: the pieces they share.
//!
//! Invariants:
//! - The order of clauses never changes the plan: `exec` picks the cheapest clause that can
//!   run next from index estimates and the current bindings, ties broken by the clause's
//!   canonical order.
//! - Rewrites (membership filters, semijoins, an AVE scan instead of many EAV lookups) never
//!   change an answer (`tests/query_oracle.rs` compares with a naive evaluation).
//! - Between two steps the relation is a set; a step deduplicates only if it can make equal
//!   rows (`distinct`; shown as ` +dedup` in `explain`). `:find` returns a set (with `:with`
//!   and no aggregate, Datomic's bag); aggregates run over the set of `:find` + `:with` tuples.
//! - Sources are numbered: `$` is 0, named ones from 1. Each database source is planned on
//!   its own schema and statistics; a relation source's clause matches a prefix of each tuple.
//! - Inputs keep their value (a lookup ref stays one in the result); where a clause uses one
//!   as an entity it reads the entity id it names in that clause's database. As in Datomic,
//!   an ident or lookup ref that names no entity there is an error, not an empty match.
//! - A built-in returns no value to fail a predicate or bind nothing; a refusal is
//!   [`QueryError::Builtin`] with the call printed as EDN.

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
pub mod parse;
pub mod relation;
pub mod rules;
pub mod run;
pub mod show;
pub mod validate;

pub use error::{BuiltinProblem, QueryError};
pub use exec::Step;
pub use run::{PreparedQuery, QueryCache, QueryOptions, Registry};
