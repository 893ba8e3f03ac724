//! From the parsed query ([`crate::query::parse::QueryAst`]) to the engine's query:
//! variables are numbered, attributes resolved against the schema, scalar inputs plugged in as constants (so `qpred2` runs the plan of `qpred1`), and rules read.
//!
//! - `forms`: reading the parsed query's forms (variables, sources, symbols).
//! - `clauses`: one clause lowered (variables, attributes, constants, bindings).
//! - `rules`: the rules a query reaches, lowered for the source they read.
//! - `query`: the whole query lowered into [`crate::query::ir::Query`].

mod clauses;
mod forms;
mod query;
mod rules;

pub use clauses::{InputKind, LowerCtx, SourceKind};
pub use forms::receiver_is_first_input;
pub use query::lower;
pub use rules::lower_rules_for;

use clauses::*;
use forms::*;
use rules::*;
