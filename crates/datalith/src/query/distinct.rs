//! Set semantics without a hash pass after every step.
//!
//! The relation between two steps of a conjunction is always a set (no two equal rows). A
//! step keeps it one unless it can repeat a row, and only then is it deduplicated:
//!
//! - A data pattern yields distinct datoms, and on distinct input rows distinct rows, unless a
//!   blank (`_`) hides the position that tells two datoms apart: a blank value repeats an
//!   entity's row once per value (not for a cardinality-one attribute), a blank entity repeats a
//!   value's row once per holder (not for a unique attribute), a blank or variable attribute
//!   with any other blank repeats rows.
//! - A function bound to a collection or relation (`[?x ...]`, `[[?x ?y]]`) repeats a row for
//!   each repeated item; scalar and tuple bindings give at most one row per row.
//! - Predicates and `not` only remove rows; `or`, rules and input relations are deduplicated
//!   where they are built and then joined (a join of two sets is a set).
//!
//! Dropping variables no later step needs can make equal rows too, except when every dropped
//! variable is determined by the ones kept: the patterns already run give such functional
//! dependencies (`[?e :a ?v]` with `:a` of cardinality one: `?e` determines `?v`; with `:a`
//! unique: `?v` determines `?e`), and so do built-in function calls (a scalar or tuple result
//! is determined by the arguments; not `rand`, and not a user's function, which may be
//! impure). So `[?e :name ?n] [?e :age ?a] [(> ?a 30)]` with `?e ?n` wanted drops `?a`
//! without deduplicating, and `[(* ?price ?share) ?x]` drops `?share` without a pass when
//! `?price ?share` come from one kept entity.

use super::ir::{AttrTerm, Binding, Clause, Pattern, Term, Var};
use crate::store::schema::Schema;

/// A functional dependency: rows equal on the first variables are equal on the second.
pub type Dependency = (Vec<Var>, Var);

/// Whether a pattern on the database can give two equal rows from one input row.
pub fn pattern_repeats(schema: &Schema, p: &Pattern) -> bool {
    let blank_e = p.e == Term::Blank;
    let blank_v = p.v == Term::Blank;
    match &p.a {
        AttrTerm::Attr(a) => {
            let attr = schema.get(*a);
            match (blank_e, blank_v) {
                (false, false) => false,
                (false, true) => attr.is_none_or(|x| x.is_many()),
                (true, false) => attr.is_none_or(|x| x.unique.is_none()),
                (true, true) => true,
            }
        }
        AttrTerm::Var(_) => blank_e || blank_v,
        AttrTerm::Blank => true,
        AttrTerm::Unknown(_) => false,
    }
}

/// Whether a clause other than a database pattern can give two equal rows from one input row.
pub fn clause_repeats(schema: &Schema, c: &Clause) -> bool {
    match c {
        Clause::Pattern(0, p) => pattern_repeats(schema, p),
        Clause::Fn { binding, .. } => {
            matches!(binding, Binding::Collection(_) | Binding::Relation(_))
        }
        _ => false,
    }
}

/// Adds the dependencies a database pattern makes true of every row it leaves.
pub fn dependencies(schema: &Schema, p: &Pattern, out: &mut Vec<Dependency>) {
    let (Term::Var(e), AttrTerm::Attr(a), Term::Var(v)) = (&p.e, &p.a, &p.v) else {
        return;
    };
    let Some(attr) = schema.get(*a) else { return };
    if e == v {
        return;
    }
    if !attr.is_many() {
        out.push((vec![*e], *v));
    }
    if attr.unique.is_some() {
        out.push((vec![*v], *e));
    }
}

/// Functions whose result may differ between two calls with equal arguments: their results
/// determine nothing.
const IMPURE: [&str; 2] = ["rand", "rand-int"];

/// Adds the dependencies a function call makes true of every row it leaves: a built-in's
/// scalar or tuple result is determined by its arguments' variables (a user's function is
/// not assumed pure; `user` says whether the query has one by that name, which then runs
/// instead of the built-in).
pub fn call_dependencies(c: &Clause, user: impl Fn(&str) -> bool, out: &mut Vec<Dependency>) {
    let Clause::Fn {
        name,
        args,
        binding,
    } = c
    else {
        return;
    };
    if IMPURE.contains(&name.as_str()) || user(name) || !crate::query::builtins::is_builtin(name) {
        return;
    }
    let from: Vec<Var> = args.iter().filter_map(|t| t.var()).collect();
    let bound: Vec<&Term> = match binding {
        Binding::Scalar(t) => vec![t],
        Binding::Tuple(ts) => ts.iter().collect(),
        Binding::Collection(_) | Binding::Relation(_) => return,
    };
    for t in bound {
        if let Term::Var(v) = t {
            if !from.contains(v) {
                out.push((from.clone(), *v));
            }
        }
    }
}

/// Whether every variable of `dropped` is determined by the variables `kept` (through the
/// dependencies, transitively): then dropping them leaves a set a set.
pub fn determined(dropped: &[Var], kept: &[Var], deps: &[Dependency]) -> bool {
    if dropped.is_empty() {
        return true;
    }
    let mut known: Vec<Var> = kept.to_vec();
    loop {
        let before = known.len();
        for (from, to) in deps {
            if !known.contains(to) && from.iter().all(|f| known.contains(f)) {
                known.push(*to);
            }
        }
        if dropped.iter().all(|d| known.contains(d)) {
            return true;
        }
        if known.len() == before {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_variables_are_determined_through_the_dependencies() {
        // (dropped, kept, dependencies, determined?)
        type Deps<'a> = &'a [(&'a [Var], Var)];
        let cases: &[(&[Var], &[Var], Deps, bool)] = &[
            (&[], &[0], &[], true),
            (&[1], &[0], &[], false),
            (&[1], &[0], &[(&[0], 1)], true),
            (&[0], &[1], &[(&[0], 1)], false),
            // Transitively: 0 -> 1 -> 2.
            (&[1, 2], &[0], &[(&[1], 2), (&[0], 1)], true),
            (&[1, 2], &[0], &[(&[0], 1)], false),
            (&[2], &[0, 1], &[(&[3], 2)], false),
            // A function of two: both needed.
            (&[2], &[0, 1], &[(&[0, 1], 2)], true),
            (&[2], &[0], &[(&[0, 1], 2)], false),
            // A function of a variable determined by a kept one: 0 -> 1, (1, 3) -> 2.
            (&[1, 2], &[0, 3], &[(&[0], 1), (&[1, 3], 2)], true),
        ];
        for (dropped, kept, deps, want) in cases {
            let deps: Vec<Dependency> = deps.iter().map(|(f, t)| (f.to_vec(), *t)).collect();
            assert_eq!(
                determined(dropped, kept, &deps),
                *want,
                "{dropped:?} from {kept:?} with {deps:?}"
            );
        }
    }
}
