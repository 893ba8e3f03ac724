//! What lowering shares: its errors, how it prints a form, plain symbols, and where the
//! receiver of `q` stands among the inputs.

use crate::edn::{to_edn_string, Edn};
use crate::query::error::QueryError;
use crate::query::parse::{InputKind, QueryAst};

pub(super) fn perr(msg: impl Into<String>) -> QueryError {
    QueryError::Parse(msg.into())
}

pub(super) fn show(e: &Edn) -> String {
    to_edn_string(e)
}

pub(super) fn sym(e: &Edn) -> Option<String> {
    e.as_symbol()
}

/// Whether the receiver of [`crate::api::Db::q`] (given `given` more inputs) is the first
/// `:in` input rather than an implicit `$`: the first form is `$`, or a named source with
/// no input of its own.
pub fn receiver_is_first_input(q: &QueryAst, given: usize) -> bool {
    match q.inputs.first().map(|i| &i.kind) {
        Some(InputKind::Source(name)) => name == "$" || q.inputs.len() == given + 1,
        _ => false,
    }
}
