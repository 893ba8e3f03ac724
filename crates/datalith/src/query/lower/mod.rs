//! From EDN to the engine's query: the query form is split into its clauses (`:find`,
//! `:where`, ...), variables are numbered, attributes resolved against the schema, scalar
//! inputs plugged in as constants (so `qpred2` runs the plan of `qpred1`), and rules read.
//!
//! - `sections`: the form split into its sections (schema-free; cached by text).
//! - `clauses`: one clause lowered (variables, attributes, constants, bindings).
//! - `rules`: the rules a query reaches, lowered for the source they read.
//! - `query`: the whole query lowered into [`crate::query::ir::Query`].

mod clauses;
mod query;
mod rules;
mod sections;

pub use clauses::{InputKind, LowerCtx, SourceKind};
pub use query::lower;
pub use rules::{lower_rules, lower_rules_for};
pub use sections::{in_forms, receiver_is_first_input, sections, Sections};

use clauses::*;
use rules::*;
use sections::*;
