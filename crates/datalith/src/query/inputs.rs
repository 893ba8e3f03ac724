//! Input values as relations: binding forms (`?x`, `[?x ...]`, `[?a ?b]`, `[[?a ?b]]`) and
//! relation sources (`$x` bound to a collection of tuples).

use std::collections::HashMap;

use super::error::QueryError;
use super::ir::{Binding, Clause, Term};
use super::relation::Relation;
use crate::codec::Value;
use crate::edn::{value_from_edn, Edn};

/// A relation source's tuples.
pub(super) fn tuples(name: &str, value: &Edn) -> Result<Relation, QueryError> {
    let bad = |got: &Edn| QueryError::InputKind {
        input: name.to_string(),
        expected: "a database or a collection of tuples".to_string(),
        got: crate::edn::to_edn_string(got),
    };
    let rows = match value {
        Edn::Vector(rows) | Edn::List(rows) | Edn::Set(rows) => rows,
        other => return Err(bad(other)),
    };
    let mut out = Relation::empty(Vec::new());
    for r in rows {
        let items = match r {
            Edn::Vector(items) | Edn::List(items) => items,
            other => return Err(bad(other)),
        };
        out.rows.push(
            items
                .iter()
                .map(|i| value_from_edn(i).ok_or_else(|| bad(i)))
                .collect::<Result<_, _>>()?,
        );
    }
    Ok(out)
}

/// Fails when a clause on a relation source has more terms than one of its tuples has values
/// (a shorter clause matches each tuple's prefix). `dollar` is the source `$` stands for.
pub(super) fn check_arity(
    clauses: &[Clause],
    dollar: usize,
    relations: &HashMap<usize, Relation>,
    names: &[String],
    var_names: &[String],
) -> Result<(), QueryError> {
    for c in clauses {
        match c {
            Clause::Source { src, terms } => {
                let src = if *src == 0 { dollar } else { *src };
                let Some(rel) = relations.get(&src) else {
                    continue;
                };
                if let Some(short) = rel.rows.iter().find(|r| r.len() < terms.len()) {
                    let edn = |v: &Value| crate::edn::edn_from_value(v);
                    let show_terms: Vec<Edn> = terms
                        .iter()
                        .map(|t| match t {
                            Term::Const(v) => edn(v),
                            Term::Var(v) => Edn::Symbol(crate::codec::Keyword::new(
                                None,
                                &var_names
                                    .get(*v)
                                    .cloned()
                                    .unwrap_or_else(|| format!("?{v}")),
                            )),
                            Term::Blank => Edn::Symbol(crate::codec::Keyword::new(None, "_")),
                        })
                        .collect();
                    return Err(QueryError::SourceArity {
                        source_name: names.get(src).cloned().unwrap_or_else(|| "$".into()),
                        clause: crate::edn::to_edn_string(&Edn::Vector(show_terms)),
                        terms: terms.len(),
                        tuple: crate::edn::to_edn_string(&Edn::Vector(
                            short.iter().map(edn).collect(),
                        )),
                        width: short.len(),
                    });
                }
            }
            Clause::Or { branches, .. } => {
                for b in branches {
                    check_arity(b, dollar, relations, names, var_names)?;
                }
            }
            Clause::Not { clauses, .. } => {
                check_arity(clauses, dollar, relations, names, var_names)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// The values `input` (its `:in` form, printed) binds: one row of one value, one tuple, a
/// collection of values or of tuples. A tuple may be longer than the form (the rest is
/// ignored), not shorter.
pub(super) fn bind_input(
    input: &str,
    b: &Binding,
    value: &Edn,
    budget: &super::budget::Budget<'_>,
) -> Result<Relation, QueryError> {
    let kind = |expected: String, got: &Edn| QueryError::InputKind {
        input: input.to_string(),
        expected,
        got: crate::edn::to_edn_string(got),
    };
    let terms: Vec<Term> = match b {
        Binding::Scalar(t) | Binding::Collection(t) => vec![t.clone()],
        Binding::Tuple(ts) | Binding::Relation(ts) => ts.clone(),
    };
    // The input is read where it lies: a relation of a million tuples is copied once, into
    // its rows of values.
    fn seq(e: &Edn) -> Option<&[Edn]> {
        match e {
            Edn::Vector(v) | Edn::List(v) | Edn::Set(v) => Some(v),
            _ => None,
        }
    }
    let collection = |e| seq(e).ok_or_else(|| kind("a collection".to_string(), e));
    let scalar = |e: &Edn| value_from_edn(e).ok_or_else(|| kind("values".to_string(), e));
    let row = |e: &Edn| -> Result<Vec<Value>, QueryError> {
        match seq(e) {
            Some(t) if t.len() >= terms.len() => t[..terms.len()].iter().map(scalar).collect(),
            _ => Err(kind(format!("tuples of {} values", terms.len()), e)),
        }
    };
    let rows: Vec<Vec<Value>> = match b {
        Binding::Scalar(_) => vec![vec![scalar(value)?]],
        Binding::Tuple(_) => vec![row(value)?],
        Binding::Collection(_) => collection(value)?
            .iter()
            .map(|x| Ok(vec![scalar(x)?]))
            .collect::<Result<_, QueryError>>()?,
        Binding::Relation(_) => collection(value)?
            .iter()
            .map(row)
            .collect::<Result<_, _>>()?,
    };
    let raw = Relation {
        vars: (0..terms.len()).map(|i| usize::MAX - i).collect(),
        rows,
    };
    super::exec::match_terms_owned(raw, &terms, budget)
}
