//! Datomic-dialect Datalog queries.
//!
//! Pipeline: [`parse()`] (text to a schema-free [`QueryAst`], cached by text) → `lower`
//! (AST + schema to the engine's query) → `exec` (cost-based evaluation) → `find` (the
//! result's shape); [`Plan`] is what `explain` shows of a run.
//!
//! - [`mod@parse`]: query text (or EDN data) to a schema-free AST whose forms carry their spans;
//!   cached by text.
//! - `lower`: the parsed query to the engine's `ir` (variables numbered, attributes
//!   resolved against each source's schema, scalar inputs plugged in as constants).
//! - `exec`: cost-based, clause-order-independent evaluation over the indexes.
//! - `distinct`: which steps must deduplicate to keep the rows a set.
//! - `rules`: semi-naive, bottom-up evaluation of rules, seeded by the call's bound
//!   arguments.
//! - `find`: the result's shape; `fold`: aggregates folded a row at a time (a group keeps a
//!   running value, not its members, for `count`, `sum`, `avg`, `min`, `max`).
//! - `validate`: the queries Datomic rejects before running them.
//! - `run`: the entry point, with the parse cache; `inputs` (input values as relations)
//!   and `entities` (entity ids named by constants and inputs, per database) serve it.
//! - `budget`: what a run may spend (timeout, cancellation, memory), ticked by every loop.
//! - `builtins`: the built-in functions, one family a file (`mod.rs` `lookup` is the table).
//! - [`plan`]: a run's plan in query terms, for `explain`.
//! - `relation`, `show`, [`error`]: the pieces they share; `prefetch`: cache hints for
//!   loops over millions of rows.
//!
//! Invariants:
//! - The order of clauses never changes the plan: `exec` picks the cheapest clause that can
//!   run next from index estimates and the current bindings, ties broken by the clause's
//!   canonical order.
//! - Rewrites (membership filters, semijoins, an AVE scan instead of many EAV lookups, an
//!   `or` of tests spread over its conjunction) never change an answer
//!   (`tests/query_oracle.rs` compares with a naive evaluation, `tests/or_spread.rs` the
//!   spread `or` with the same tests in Rust).
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

// The pipeline's public face is `parse` (the AST), `plan` (what `explain` returns), the
// options and the errors; the engine's own structures stay inside the crate.
pub(crate) mod budget;
pub(crate) mod builtins;
pub(crate) mod distinct;
mod entities;
pub mod error;
// `exec` is being reworked apart from this module; exports it keeps for that work but the
// crate does not use yet (`UserFn`, `ident_attr`) are not warnings here.
#[allow(dead_code, unused_imports)]
pub(crate) mod exec;
pub(crate) mod find;
mod fold;
mod inputs;
pub(crate) mod ir;
pub(crate) mod lower;
pub mod parse;
pub mod plan;
pub(crate) mod prefetch;
pub(crate) mod relation;
mod result_rows;
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod show;
pub(crate) mod validate;

pub use budget::Interrupt;
pub use error::{BuiltinProblem, QueryError};
pub use parse::{parse, parse_edn, QueryAst};
pub use plan::{Plan, PlanClause, PlanIndex, PlanStep};
pub use result_rows::{ItemSink, ResultRows};
pub(crate) use run::QueryCache;
pub use run::{Answer, Outcome, PreparedQuery, QueryOptions, Registry, Want};
