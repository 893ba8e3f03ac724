//! Terms and bindings: matching rows against a clause's terms (constants compared, repeated
//! variables unified), the entity a value names, constants coerced to an attribute's stored
//! form, and the variables a pattern adds.

use crate::codec::{Keyword, Value};
use crate::query::budget::{row_bytes, Budget};
use crate::query::builtins::compare;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Pattern, Term, Var};
use crate::query::relation::Relation;
use crate::store::schema::Schema;
use crate::store::{AttrId, EntityId};

pub(super) fn attr_term(a: &AttrTerm) -> Term {
    match a {
        AttrTerm::Attr(id) => Term::Const(Value::Ref(*id as u64)),
        AttrTerm::Var(v) => Term::Var(*v),
        AttrTerm::Blank => Term::Blank,
        AttrTerm::Unknown(k) => Term::Const(Value::Keyword(k.clone())),
    }
}

pub(super) fn extend_vars(vars: &[Var], p: &Pattern) -> Vec<Var> {
    let mut out = vars.to_vec();
    for t in [&p.e, &p.v] {
        if let Term::Var(v) = t {
            if !out.contains(v) {
                out.push(*v);
            }
        }
    }
    out
}

/// The entity a value names.
pub fn entity_of(v: &Value) -> Option<EntityId> {
    match v {
        Value::Ref(e) => Some(*e),
        Value::Long(n) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// A value for attribute `a` in the form the index stores (longs name entities for refs).
/// Only what every plan does alike: the readings of a constant as the attribute's type
/// (`query::entities`) happen once, before planning, since a value bound while the query
/// runs may meet the attribute through a lookup (here) or through a join (which compares
/// values as they are).
pub fn coerce(schema: &Schema, a: AttrId, v: &Value) -> Value {
    match (schema.get(a).map(|x| x.is_ref()), v) {
        (Some(true), Value::Long(n)) if *n >= 0 => Value::Ref(*n as u64),
        _ => v.clone(),
    }
}

/// Rows of `input` (columns: `terms` positions) that match the constants, as a relation over
/// the variables.
/// [`match_terms`] on a relation given away: when the terms are distinct variables (the
/// common binding), each row moves into the result as it is, and the result may hold a row
/// twice (the caller deduplicates, after whatever filtering it can do first).
pub fn match_terms_owned(
    mut input: Relation,
    terms: &[Term],
    budget: &Budget<'_>,
) -> Result<Relation, QueryError> {
    let vars: Vec<Var> = terms.iter().filter_map(|t| t.var()).collect();
    let distinct =
        vars.len() == terms.len() && vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
    if !distinct {
        return match_terms(&input, terms, budget);
    }
    let bytes = row_bytes(vars.len());
    input.rows.retain_mut(|row| {
        // A row shorter than the terms matches nothing (as in `match_terms`).
        row.truncate(terms.len());
        row.len() == terms.len()
    });
    for _ in &input.rows {
        budget.charge(bytes)?;
    }
    input.vars = vars;
    Ok(input)
}

pub fn match_terms(
    input: &Relation,
    terms: &[Term],
    budget: &Budget<'_>,
) -> Result<Relation, QueryError> {
    match_terms_by(input, terms, budget, |c, v| {
        compare(c, v) == std::cmp::Ordering::Equal
    })
}

/// [`match_terms`] for a clause on a relation source, whose constants match as Clojure's `=`
/// (Datomic's: `2` is not `2.0` there, where a database pattern's constant is read as its
/// attribute's type).
pub fn match_source_terms(
    input: &Relation,
    terms: &[Term],
    budget: &Budget<'_>,
) -> Result<Relation, QueryError> {
    match_terms_by(input, terms, budget, crate::query::builtins::equal)
}

fn match_terms_by(
    input: &Relation,
    terms: &[Term],
    budget: &Budget<'_>,
    same: impl Fn(&Value, &Value) -> bool,
) -> Result<Relation, QueryError> {
    let mut vars: Vec<Var> = Vec::new();
    for t in terms {
        if let Term::Var(v) = t {
            if !vars.contains(v) {
                vars.push(*v);
            }
        }
    }
    let mut out = Relation::empty(vars.clone());
    let bytes = row_bytes(vars.len());
    'rows: for row in &input.rows {
        budget.charge(bytes)?;
        let mut r: Vec<Option<Value>> = vec![None; vars.len()];
        for (i, t) in terms.iter().enumerate() {
            let Some(val) = row.get(i) else {
                continue 'rows;
            };
            match t {
                Term::Const(c) => {
                    if !same(c, val) {
                        continue 'rows;
                    }
                }
                Term::Var(v) => {
                    let c = vars.iter().position(|x| x == v).expect("collected");
                    match &r[c] {
                        Some(prev) if prev != val => continue 'rows,
                        _ => r[c] = Some(val.clone()),
                    }
                }
                Term::Blank => {}
            }
        }
        out.rows
            .push(r.into_iter().map(|x| x.expect("every var set")).collect());
    }
    out.dedup(budget)?;
    Ok(out)
}

/// Keywords in ident position, for lowering.
pub fn ident_attr(schema: &Schema, k: &Keyword) -> AttrTerm {
    match schema.by_ident(k) {
        Some(a) => AttrTerm::Attr(a.id),
        None => AttrTerm::Unknown(k.clone()),
    }
}
