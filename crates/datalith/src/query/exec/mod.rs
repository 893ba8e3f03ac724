//! Executing a lowered query: a conjunction of clauses is evaluated by repeatedly choosing the
//! cheapest clause that can run next (estimated from the indexes and the current bindings),
//! so the order of clauses in the query text never changes the plan. Clauses on one bound
//! entity run as one merge scan of its EAV entry; single-variable comparisons narrow AVE range
//! scans; variables nobody needs any more are projected away (with deduplication) after
//! every step.
//!
//! - `context`: what a running query carries ([`Ctx`]) and the plan steps ([`Step`]).
//! - `conj`: the conjunction loop: choose the cheapest ready clause, run it, project.
//! - `distribute`: an `or` of tests spread over its conjunction, one plan per branch, when
//!   the branches' tests make much cheaper starts.
//! - `estimate`: the rows a clause is expected to leave (what the choice compares and
//!   `explain` shows).
//! - `lookahead`: the start of a large conjunction, chosen by following each of its
//!   cheapest starts to the end on estimates.
//! - `prefilter`: a join on a value narrowed first by a later pattern that only tests the
//!   entities it finds (a semijoin passed sideways).
//! - `elements`: a conjunction whose first step is a function binding a collection, answered
//!   a part of its elements at a time.
//! - `parts`: a conjunction whose first step scans an attribute, answered a stretch of its
//!   values at a time (a large result handed on in parts).
//! - `postpone`: patterns that only add a value to each row, run after the rest.
//! - `scan`: patterns on an unbound entity (AVE lookups and range scans, the EAV index).
//! - `spread`: the rest of a conjunction run in parts on several threads, from a large step on.
//! - `star`: patterns on a bound entity (merge scan, scan join, semijoin).
//! - `column`: one attribute's values for a merge scan's numbered entities, 8 bytes a cell
//!   for numbers.
//! - `probe`: EXISTS and NOT EXISTS on one entity's values, a walk of a row's holders that
//!   stops at the first witness.
//! - `ranges`: comparisons turned into AVE bounds.
//! - `chain`: tests and functions that follow one another, run as one pass over the rows.
//! - `clauses`: predicates, functions, `not`, `or`, rules, input relations.
//! - `fulltext`: Datomic's `fulltext` function, a search of an attribute's full-text index.
//! - `terms`: matching rows against terms, entity ids and constants.
//! - `time`: patterns read from the history index (the transaction and `added` positions,
//!   and every pattern on a database value in time).

mod chain;
mod clauses;
mod column;
mod conj;
mod context;
mod distribute;
mod elements;
mod estimate;
mod fulltext;
mod lookahead;
mod parts;
mod postpone;
mod prefilter;
mod probe;
mod ranges;
mod scan;
mod spread;
mod star;
mod terms;
mod time;

pub use context::{Ctx, DbSource, Step, UserFn};
pub(crate) use context::{ROW_SPARE, ROW_SPARE_MAX};
pub use spread::{Spread, SPREAD_FROM_ROWS};
pub use terms::{
    coerce, entity_of, ident_attr, match_source_terms, match_terms, match_terms_owned,
};

use estimate::{is_filter, is_rowwise, rowwise_inputs, Notes};
use ranges::*;
use terms::*;
