//! Parsing: query text (or EDN data) to a schema-free [`QueryAst`] whose forms carry their
//! spans. Nothing here reads a database, so a parsed query is cached by its text and reused
//! by every database (`QueryCache`); planning (`query::lower`) reads the AST, never the text.
//!
//! - `span`: byte spans, and the `line, column` they print as.
//! - `ast`: the AST.
//! - `clause`: what one `:where` clause says (source, terms, call, join variables).
//! - `build`: the query form to the AST (sections, `:find` shape, clauses).

mod ast;
mod build;
mod clause;
mod span;

use std::sync::Arc;

pub use crate::query::ir::{FindShape, KeysKind};
pub use ast::{ClauseKind, FindSpec, InputForm, InputKind, QueryAst, WhereClause};
pub(crate) use clause::{
    BindingForm, CallBinding, ClauseForm, FindForm, JoinSpec, JoinVar, OutVar, TermForm,
    OPEN_LOG_BOUND,
};
pub use span::{Form, Position, Span};

use crate::edn::{read_one_spanned, Edn, ReadError};
use crate::query::error::QueryError;

/// Parses query text. A syntax error names where it is (`line 1, column 23: ...`).
///
/// ```
/// use datalith::query::parse::{parse, ClauseKind};
///
/// let ast = parse("[:find ?n :where [?e :name ?n] [(> ?n \"B\")]]").unwrap();
/// let kinds: Vec<ClauseKind> = ast.clauses.iter().map(|c| c.kind).collect();
/// assert_eq!(kinds, [ClauseKind::DataPattern, ClauseKind::Predicate]);
/// let at = ast.position(ast.clauses[1].form.span).unwrap();
/// assert_eq!(at.to_string(), "line 1, column 32");
///
/// let err = parse("[:find ?e :where [?e :name]").unwrap_err();
/// assert_eq!(err.to_string(), "line 1, column 1: unclosed collection: expected ]");
/// ```
pub fn parse(text: &str) -> Result<QueryAst, QueryError> {
    let (form, spans) = read_one_spanned(text).map_err(syntax_error)?;
    build::build(&form, span::Spans::of(&spans), Some(Arc::from(text)))
}

/// A reader's error as a query's: the message at its line and column.
pub(crate) fn syntax_error(e: ReadError) -> QueryError {
    QueryError::Syntax {
        position: Position {
            line: e.line,
            column: e.column,
        },
        message: e.message,
    }
}

/// A clause given as data (a rule body's), read as a `:where` clause is.
pub(crate) fn clause_of(e: &Edn) -> WhereClause {
    let form = Form {
        edn: e.clone(),
        span: None,
    };
    build::where_clause(form, &span::Spans::none(), false, 1)
}

/// Parses a query given as EDN data (its forms have no spans).
pub fn parse_edn(form: &Edn) -> Result<QueryAst, QueryError> {
    build::build(form, span::Spans::none(), None)
}

#[cfg(test)]
mod tests;
