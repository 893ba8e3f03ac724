//! Existence checks that stop at the first witness: a group of clauses on one entity nobody
//! reads afterwards (TPC-H's EXISTS and NOT EXISTS: "an order with a late line item") asks
//! only whether some entity satisfies them, per row. The join would fetch every holder,
//! read each one's values, run the tests on all of them and then deduplicate the rows the
//! holders multiplied; the probe walks a row's holders one at a time and stops at the first
//! that passes (`exists`), or keeps the row only when none does (`not`).
//!
//! The shape a probe answers (anything else takes the general path):
//! - an anchor `[?x :a v]`: `?x` a variable of the group only, `v` a constant or a variable
//!   the rows bind; its AVE entry lists the candidates in entity order;
//! - patterns `[?x :b w]` on the same entity, of cardinality one when `w` is the group's own
//!   variable (a constant or a bound variable is compared with each of the entity's values);
//! - tests (predicates, and `not`/`or` of predicates) on the rows' variables and the values
//!   the patterns bind.

use super::*;
use crate::codec::Value;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;
use crate::store::{AttrId, EntityId};

/// A group of clauses answered by walking one anchor's holders (see the module).
#[derive(Debug)]
pub(super) struct Probe {
    /// The anchor's attribute and value.
    anchor: AttrId,
    value: Term,
    /// The other patterns on the entity: attribute and value term.
    star: Vec<(AttrId, Term)>,
    /// Tests run on a candidate's values, in the clauses' canonical order.
    tests: Vec<Clause>,
    /// The rows' variables the group reads (a candidate's scratch row starts with them).
    inputs: Vec<Var>,
    /// The variables the star's patterns bind, in the order they are bound.
    bound_here: Vec<Var>,
}

impl Probe {
    /// The group of `clauses` anchored at `clauses[anchor]`, when every clause has the
    /// probe's shape. `bound` tells the variables the rows hold; the group's own variables
    /// (all others) must be read by nothing outside `clauses` (the caller's check).
    pub(super) fn of(
        ctx: &Ctx<'_>,
        clauses: &[Clause],
        anchor: usize,
        bound: &dyn Fn(Var) -> bool,
    ) -> Option<Probe> {
        let Clause::Pattern(src, p) = &clauses[anchor] else {
            return None;
        };
        let (x, a) = own_entity(p, bound)?;
        let value = match &p.v {
            Term::Var(v) if bound(*v) => p.v.clone(),
            Term::Const(_) => p.v.clone(),
            _ => return None,
        };
        let mut inputs: Vec<Var> = Vec::new();
        let note = |v: Var, inputs: &mut Vec<Var>| {
            if bound(v) && !inputs.contains(&v) {
                inputs.push(v);
            }
        };
        if let Term::Var(v) = value {
            note(v, &mut inputs);
        }
        let mut star = Vec::new();
        let mut bound_here: Vec<Var> = Vec::new();
        let mut tests = Vec::new();
        for (i, c) in clauses.iter().enumerate() {
            if i == anchor {
                continue;
            }
            match c {
                Clause::Pattern(s, q) if ctx.source_of(*s) == ctx.source_of(*src) => {
                    if q.e != Term::Var(x) {
                        return None;
                    }
                    let AttrTerm::Attr(b) = q.a else { return None };
                    match &q.v {
                        Term::Var(v) if *v == x => return None,
                        Term::Var(v) if bound(*v) => note(*v, &mut inputs),
                        // A second pattern on a variable the star binds compares with it.
                        Term::Var(v) if bound_here.contains(v) => {}
                        Term::Var(v) => {
                            if ctx.is_many(b) {
                                return None;
                            }
                            bound_here.push(*v);
                        }
                        Term::Const(_) | Term::Blank => {}
                    }
                    star.push((b, q.v.clone()));
                }
                // Its variables are checked below, against what a candidate's row holds.
                c if super::clauses::is_row_test(c, &|_| true) => tests.push(c.clone()),
                _ => return None,
            }
        }
        // Every test reads only what a candidate's scratch row holds.
        for t in &tests {
            for v in t.vars() {
                if v == x || !(bound(v) || bound_here.contains(&v)) {
                    return None;
                }
                note(v, &mut inputs);
            }
        }
        Some(Probe {
            anchor: a,
            value,
            star,
            tests,
            inputs,
            bound_here,
        })
    }
}

/// `[?x :a _]` with `?x` a variable the rows do not bind: `?x` and the attribute.
fn own_entity(p: &Pattern, bound: &dyn Fn(Var) -> bool) -> Option<(Var, AttrId)> {
    match (&p.e, &p.a) {
        (Term::Var(x), AttrTerm::Attr(a)) if !bound(*x) => Some((*x, *a)),
        _ => None,
    }
}

impl<'a> Ctx<'a> {
    /// In the conjunction: the clauses of `todo` that join `p` (the clause chosen to run
    /// next, on source `src`) into a group whose variables nothing else reads (`keep` and
    /// the rest of `todo`), answered by a probe. Returns the probe and the group's indices in
    /// `todo`, descending. `None` for a lone pattern (`existence_probe` answers it) and for
    /// any group the probe's shape does not fit.
    pub(super) fn exists_group(
        &self,
        p: &Pattern,
        src: usize,
        rel: &Relation,
        todo: &[Clause],
        keep: &[Var],
    ) -> Option<(Probe, Vec<usize>)> {
        let bound = |v: Var| rel.binds(v);
        let (x, _) = own_entity(p, &bound)?;
        // Only an anchor whose value is known walks holders (`Probe::of`): a scan or a join
        // on a new value is no probe, and the group need not be gathered to learn so.
        let known = match &p.v {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        if keep.contains(&x) || !known {
            return None;
        }
        // The clauses connected to the entity through variables the rows do not bind.
        let mut own: Vec<Var> = vec![x];
        let mut group: Vec<usize> = Vec::new();
        loop {
            let before = group.len();
            for (i, c) in todo.iter().enumerate() {
                if group.contains(&i) {
                    continue;
                }
                let vars = c.vars();
                if vars.iter().any(|v| own.contains(v)) {
                    group.push(i);
                    for v in vars {
                        if !rel.binds(v) && !own.contains(&v) {
                            own.push(v);
                        }
                    }
                }
            }
            if group.len() == before {
                break;
            }
        }
        if group.is_empty() || own.iter().any(|v| keep.contains(v)) {
            return None;
        }
        let mut clauses = vec![Clause::Pattern(src, p.clone())];
        clauses.extend(group.iter().map(|&i| todo[i].clone()));
        let probe = Probe::of(self, &clauses, 0, &bound)?;
        group.sort_unstable_by(|a, b| b.cmp(a));
        Some((probe, group))
    }

    /// A `not` (its clauses, and the variables it shares with the rows, all bound) answered
    /// by a probe when its clauses have the probe's shape: the anchor is the pattern on the
    /// group's entity whose value the rows or a constant give.
    pub(super) fn not_probe(&mut self, vars: &[Var], clauses: &[Clause]) -> Option<Probe> {
        let bound = |v: Var| vars.contains(&v);
        for (i, c) in clauses.iter().enumerate() {
            let Clause::Pattern(src, p) = c else { continue };
            if !(self.reads_db(*src) && self.is_current(*src)) || own_entity(p, &bound).is_none() {
                continue;
            }
            // The schema the group's attributes are read with.
            self.enter(*src);
            if let Some(probe) = Probe::of(self, clauses, i, &bound) {
                return Some(probe);
            }
        }
        None
    }

    /// The rows of `rel` for which some holder of the anchor passes the group
    /// (`wanted` true), or for which none does (`wanted` false). The rows keep their
    /// variables.
    pub(super) fn probe(
        &mut self,
        probe: &Probe,
        rel: Relation,
        wanted: bool,
    ) -> Result<Relation, QueryError> {
        let r = self.r;
        let input_cols: Vec<usize> = probe
            .inputs
            .iter()
            .map(|v| rel.col(*v).expect("probe: its inputs are bound"))
            .collect();
        let mut scratch_vars = probe.inputs.clone();
        scratch_vars.extend(&probe.bound_here);
        let value_col = match &probe.value {
            Term::Var(v) => rel.col(*v),
            _ => None,
        };
        let star_attrs: Vec<AttrId> = probe.star.iter().map(|(a, _)| *a).collect();
        let max_attr = star_attrs.iter().max().copied();
        // The entity's values from the first wanted attribute: a line item's dates are its
        // twelfth and thirteenth attributes, and one search in its entry costs less than
        // stepping over the eleven before them.
        let min_attr = star_attrs.iter().min().copied().unwrap_or(0);
        // The last wanted attribute's values end the walk (its first when it has one).
        let many_last = max_attr.is_some_and(|m| self.is_many(m));
        let mut rel = rel;
        let mut rows = std::mem::take(&mut rel.rows);
        // In the anchor's value order: one AVE cursor walks its entries forward, and the
        // holders of neighbouring values mostly neighbour in EAV.
        if let Some(c) = value_col {
            crate::query::relation::sort_rows_by_column(&mut rows, c);
        }
        self.hold_listed(probe.anchor)?;
        let mut values = r.value_cursor()?;
        let mut entities = r.entity_cursor()?;
        let mut holders: Vec<EntityId> = Vec::new();
        let mut last: Option<Value> = None;
        let mut datoms: Vec<(AttrId, Value)> = Vec::new();
        let mut scratch: Vec<Value> = Vec::with_capacity(scratch_vars.len());
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            self.budget.tick()?;
            let value = match value_col {
                Some(c) => &row[c],
                None => match &probe.value {
                    Term::Const(v) => v,
                    _ => unreachable!("probe: the anchor's value is known"),
                },
            };
            // No pattern or test beyond the anchor: its first AVE entry answers.
            if probe.star.is_empty() && probe.tests.is_empty() {
                let held =
                    values.any_holds(probe.anchor, &coerce(self.schema, probe.anchor, value))?;
                if held == wanted {
                    kept.push(row);
                }
                continue;
            }
            if last.as_ref() != Some(value) {
                holders.clear();
                let v = coerce(self.schema, probe.anchor, value);
                values.entities_into(probe.anchor, &v, &mut holders)?;
                last = Some(value.clone());
            }
            let mut found = false;
            for &e in &holders {
                self.budget.tick()?;
                datoms.clear();
                if max_attr.is_some() {
                    entities.entity_raw_from(e, min_attr, |a, vb| {
                        if star_attrs.contains(&a) {
                            let v = match crate::store::reader::decode_fixed(vb) {
                                Some(v) => v,
                                None => r.decode_value(a, vb)?,
                            };
                            datoms.push((a, v));
                        }
                        Ok(max_attr.is_some_and(|m| a < m || (a == m && many_last)))
                    })?;
                }
                scratch.clear();
                scratch.extend(input_cols.iter().map(|&c| row[c].clone()));
                if !self.star_holds(probe, &datoms, &scratch_vars, &mut scratch) {
                    continue;
                }
                let mut all = true;
                for t in &probe.tests {
                    if !self.passes(t, &scratch_vars, &scratch)? {
                        all = false;
                        break;
                    }
                }
                if all {
                    found = true;
                    break;
                }
            }
            if found == wanted {
                kept.push(row);
            }
        }
        Ok(Relation {
            vars: rel.vars.clone(),
            rows: kept,
        })
    }

    /// Whether a candidate's `datoms` match the star's patterns, binding the variables the
    /// star binds onto `scratch` (which holds the inputs; `vars` names its columns).
    fn star_holds(
        &self,
        probe: &Probe,
        datoms: &[(AttrId, Value)],
        vars: &[Var],
        scratch: &mut Vec<Value>,
    ) -> bool {
        for (a, w) in &probe.star {
            let mut values = datoms.iter().filter(|(x, _)| x == a).map(|(_, v)| v);
            let ok = match w {
                Term::Blank => values.next().is_some(),
                Term::Const(c) => {
                    let c = coerce(self.schema, *a, c);
                    values.any(|v| crate::query::builtins::compare(v, &c).is_eq())
                }
                Term::Var(v) => {
                    let col = vars[..scratch.len()].iter().position(|x| x == v);
                    match col {
                        Some(c) => {
                            let want = coerce(self.schema, *a, &scratch[c]);
                            values.any(|x| crate::query::builtins::compare(x, &want).is_eq())
                        }
                        // Cardinality one (`Probe::of`): the single value binds.
                        None => match values.next() {
                            Some(x) => {
                                scratch.push(x.clone());
                                true
                            }
                            None => false,
                        },
                    }
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }
}
