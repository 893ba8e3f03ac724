//! Data patterns whose entity is not bound: an AVE lookup (value known), a join on the value
//! (one lookup per distinct value), an AVE range scan narrowed by the comparisons on the value
//! (see `ranges`), or, for an unknown attribute, the whole EAV index.

use rustc_hash::FxHashMap as HashMap;
use std::ops::Bound;

use super::*;
use crate::codec::Value;
use crate::kv::Direction;
use crate::query::budget::{row_bytes, rows_bytes};
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Pattern, Term};
use crate::query::plan::PlanIndex;
use crate::query::prefetch::row_ahead;
use crate::query::relation::Relation;
use crate::store::{AttrId, EntityId};

impl<'a> Ctx<'a> {
    /// Evaluates data patterns on the database; several patterns share one bound entity (a
    /// merge scan) when `star.len() > 1`. `ranges` bound the value of a pattern on an unbound
    /// entity; `star_bounds` those of a star's patterns (per pattern: what the tests still to
    /// run let through, so a scan of the attribute may skip the rest). Returns the rows and
    /// the index read.
    pub(super) fn patterns(
        &mut self,
        star: &[Pattern],
        rel: Relation,
        ranges: &[(Bound<Value>, Bound<Value>)],
        star_bounds: &[StarBound],
    ) -> Result<(Relation, PlanIndex), QueryError> {
        let p = &star[0];
        let e_bound = match &p.e {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        if e_bound {
            return self.entity_star(star, rel, star_bounds);
        }
        debug_assert_eq!(star.len(), 1);
        match &p.a {
            AttrTerm::Unknown(_) => {
                Ok((Relation::empty(extend_vars(&rel.vars, p)), PlanIndex::None))
            }
            AttrTerm::Attr(a) => self.attr_scan(*a, p, rel, ranges),
            AttrTerm::Var(_) | AttrTerm::Blank => {
                Ok((self.full_scan(p, rel)?, PlanIndex::FullScan))
            }
        }
    }

    /// `[?e :a v]` with `?e` unbound and needed by no later clause nor the caller, `v` known
    /// (a constant, or bound in every row): the rows for which some entity holds `v`. A
    /// semi-join: one AVE entry answers each distinct value, where the join would fetch every
    /// holder and then deduplicate them away (a customer's orders, only to learn that it has
    /// one). The rows keep their variables (no column for `?e`).
    pub(super) fn holders_exist(
        &mut self,
        a: AttrId,
        p: &Pattern,
        mut rel: Relation,
    ) -> Result<Relation, QueryError> {
        self.hold_listed(a)?;
        let mut cursor = self.r.value_cursor()?;
        let c = match &p.v {
            Term::Const(v) => {
                let held = cursor.any_holds(a, &coerce(self.schema, a, v))?;
                return Ok(if held {
                    rel
                } else {
                    Relation::empty(rel.vars.clone())
                });
            }
            Term::Var(v) => rel.col(*v).expect("holders_exist: the value is bound"),
            Term::Blank => unreachable!("holders_exist: the value is known"),
        };
        // In value order through one cursor, as the join on the value below.
        let mut rows = std::mem::take(&mut rel.rows);
        crate::query::relation::sort_rows_by_column(&mut rows, c);
        let mut last: Option<(Value, bool)> = None;
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            self.budget.tick()?;
            let held = match &last {
                Some((value, held)) if *value == row[c] => *held,
                _ => {
                    let held = cursor.any_holds(a, &coerce(self.schema, a, &row[c]))?;
                    last = Some((row[c].clone(), held));
                    held
                }
            };
            if held {
                kept.push(row);
            }
        }
        Ok(Relation {
            vars: rel.vars.clone(),
            rows: kept,
        })
    }

    /// `[?e :a v]` with `?e` unbound: AVE lookups (when `v` is known: [`PlanIndex::Ave`]) or
    /// an AVE range scan ([`PlanIndex::AttrScan`]).
    pub(super) fn attr_scan(
        &mut self,
        a: AttrId,
        p: &Pattern,
        rel: Relation,
        ranges: &[(Bound<Value>, Bound<Value>)],
    ) -> Result<(Relation, PlanIndex), QueryError> {
        let r = self.r;
        let spare = self.row_spare;
        let vars = extend_vars(&rel.vars, p);
        let mut out = Relation {
            vars,
            rows: Vec::new(),
        };
        let v_col = match &p.v {
            Term::Var(v) => rel.col(*v),
            _ => None,
        };
        let index = match (&p.v, v_col) {
            (Term::Const(_), _) | (Term::Var(_), Some(_)) => PlanIndex::Ave,
            _ => PlanIndex::AttrScan,
        };
        match (&p.v, v_col) {
            (Term::Const(v), _) => {
                let es = self.entities_with(a, &coerce(self.schema, a, v))?;
                // A first step read a part at a time: the value's entities from this part's
                // first (its place in the list, which every run of one snapshot reads the
                // same) up to its size (`parts`); the ids themselves are read whole.
                let part = match rel.rows.len() {
                    1 => self.part_bounds(p),
                    _ => None,
                };
                let (from, to) = match &part {
                    Some(part) => {
                        let from = match &part.from {
                            Bound::Included(Value::Long(at)) => (*at as usize).min(es.len()),
                            _ => 0,
                        };
                        (from, from.saturating_add(part.rows).min(es.len()))
                    }
                    None => (0, es.len()),
                };
                let bytes = row_bytes(out.vars.len() + spare);
                for row in rel.rows.iter() {
                    out.rows.reserve(to - from);
                    for &e in &es[from..to] {
                        self.budget.charge(bytes)?;
                        out.rows.push(row_with_entity(row, p, e, spare));
                    }
                }
                if part.is_some() {
                    self.part_read((to < es.len()).then_some(Value::Long(to as i64)));
                }
            }
            (Term::Var(_), Some(c)) => {
                return Ok((self.join_on_value(a, p, rel, c, None)?, index));
            }
            _ => {
                let (lo, hi) = intersect_ranges(ranges);
                // A first step read a part at a time: from this part's first value on, and
                // up to its size (`parts`).
                let part = match rel.rows.len() {
                    1 => self.part_bounds(p),
                    _ => None,
                };
                if let Some(part) = part.as_ref().filter(|part| part.entity_kept) {
                    if self.r.is_listed(a)? {
                        let out = self.listed_part(a, p, &rel, (&lo, &hi), part, out)?;
                        return Ok((out, index));
                    }
                }
                self.hold_listed(a)?;
                // A listed attribute read in value order is gathered and sorted first
                // (`store::listed`): gathered here, looking at the budget at each datom, so
                // that a time limit or a cancel stops it before the sort (a server's run of a
                // query in place, which stops after 2 ms, held the whole attribute before:
                // +24.1 MiB answering a million rows, 2026-12-08).
                let gathered = match part.is_none() && self.r.is_listed(a)? {
                    true => Some(self.gather_listed(a, (&lo, &hi))?),
                    false => None,
                };
                let lo = match &part {
                    Some(part) => tighter(lo, part.from.clone(), true),
                    None => lo,
                };
                let part_rows = part.as_ref().map_or(usize::MAX, |part| part.rows);
                // The value the scan stopped before, once the part is full.
                let mut next_part: Option<Value> = None;
                let mut full_at: Option<&[u8]> = None;
                let lo_ref = as_ref(&lo);
                let hi_ref = as_ref(&hi);
                // `[?x :a ?x]`: one variable in both places must take one value.
                let same = matches!((&p.e, &p.v), (Term::Var(a), Term::Var(b)) if a == b);
                let push_e = matches!(p.e, Term::Var(_));
                let push_v = matches!(p.v, Term::Var(_)) && !same;
                let width = out.vars.len();
                let bytes = row_bytes(width + spare);
                let budget = &self.budget;
                let mut last: Option<(&[u8], Value)> = None;
                let mut decode = |vb: &'a [u8]| -> Result<Value, crate::store::StoreError> {
                    // Numbers decode for less than a clone of the kept value costs.
                    if let Some(v) = crate::store::reader::decode_fixed(vb) {
                        return Ok(v);
                    }
                    // Runs of one value share its decoding.
                    match &last {
                        Some((b, v)) if *b == vb => Ok(v.clone()),
                        _ => {
                            let v = r.decode_value(a, vb)?;
                            last = Some((vb, v.clone()));
                            Ok(v)
                        }
                    }
                };
                // The input row followed by the pattern's entity and value, where they are
                // variables.
                let joined = |row: &[Value], e: EntityId, v: Value| {
                    let mut r = Vec::with_capacity(width + spare);
                    r.extend_from_slice(row);
                    if push_e {
                        r.push(Value::Ref(e));
                    }
                    if push_v {
                        r.push(v);
                    }
                    r
                };
                // With one input row (the usual first step) rows come straight from the scan;
                // with several, the scan's pairs are read once and crossed with each row.
                let single = match rel.rows.as_slice() {
                    [row] => Some(row),
                    _ => None,
                };
                let mut pairs: Vec<(EntityId, Value)> = Vec::new();
                let step_bytes = if single.is_some() {
                    bytes
                } else {
                    std::mem::size_of::<(EntityId, Value)>() as u64
                };
                scan_or_feed(
                    &self.r,
                    gathered,
                    (a, lo_ref, hi_ref),
                    #[inline(always)]
                    |vb, e| {
                        if !budget.charge_step(step_bytes) {
                            return Ok(false);
                        }
                        // A full part ends with the run of the value it reached.
                        if out.rows.len() >= part_rows {
                            match full_at {
                                None => full_at = Some(vb),
                                Some(at) if at != vb => {
                                    next_part = Some(decode(vb)?);
                                    return Ok(false);
                                }
                                Some(_) => {}
                            }
                        }
                        // Numbers inline (no large `Result` through the decode call).
                        let v = match crate::store::reader::decode_fixed(vb) {
                            Some(v) => v,
                            None => decode(vb)?,
                        };
                        match single {
                            Some(row) if !(same && Value::Ref(e) != v) => {
                                out.rows.push(joined(row, e, v))
                            }
                            Some(_) => {}
                            None => pairs.push((e, v)),
                        }
                        Ok(true)
                    },
                )?;
                self.budget.check()?;
                if part.is_some() {
                    self.part_read(next_part);
                }
                if single.is_some() {
                    return Ok((out, index));
                }
                for row in rel.rows.iter() {
                    for (e, v) in &pairs {
                        self.budget.charge(bytes)?;
                        if same && Value::Ref(*e) != *v {
                            continue;
                        }
                        out.rows.push(joined(row, *e, v.clone()));
                    }
                }
            }
        }
        Ok((out, index))
    }

    /// The datoms of the listed attribute `a` within the bounds, sorted by value then entity
    /// as AVE holds them, gathered with a look at the budget at each (its time limit and
    /// cancel flag stop the gathering; its memory was charged by `hold_listed`).
    fn gather_listed(
        &self,
        a: AttrId,
        (lo, hi): (&Bound<Value>, &Bound<Value>),
    ) -> Result<Vec<(&'a [u8], EntityId)>, QueryError> {
        let mut rows = Vec::new();
        let budget = &self.budget;
        self.r
            .each_listed_datom_from(a, 0, as_ref(lo), as_ref(hi), |e, vb| {
                if !budget.charge_step(0) {
                    return Ok(false);
                }
                rows.push((vb, e));
                Ok(true)
            })?;
        self.budget.check()?;
        rows.sort_unstable();
        Ok(rows)
    }

    /// A first step over a listed attribute (`store::listed`) read a part at a time (only when
    /// its entity variable is kept: `parts`): in entity order from the part's first entity
    /// (kept as a long in the part's bound), so each part walks its own stretch of the
    /// attribute's list and nothing is sorted (in value order every part would read and sort
    /// the whole attribute). A full part ends with the entity it reached, so no entity's
    /// values are split between parts, and no row is in two.
    fn listed_part(
        &mut self,
        a: AttrId,
        p: &Pattern,
        rel: &Relation,
        (lo, hi): (&Bound<Value>, &Bound<Value>),
        part: &super::parts::PartBounds,
        mut out: Relation,
    ) -> Result<Relation, QueryError> {
        let from = match &part.from {
            Bound::Included(Value::Long(e)) => *e as EntityId,
            _ => 0,
        };
        let row = &rel.rows[0];
        let same = matches!((&p.e, &p.v), (Term::Var(x), Term::Var(y)) if x == y);
        let push_e = matches!(p.e, Term::Var(_));
        let push_v = matches!(p.v, Term::Var(_)) && !same;
        let width = out.vars.len() + self.row_spare;
        let bytes = row_bytes(width);
        let (r, budget) = (self.r, &self.budget);
        let mut full_at: Option<EntityId> = None;
        let mut next: Option<Value> = None;
        r.each_listed_datom_from(a, from, as_ref(lo), as_ref(hi), |e, vb| {
            if !budget.charge_step(bytes) {
                return Ok(false);
            }
            if out.rows.len() >= part.rows {
                match full_at {
                    None => full_at = Some(e),
                    Some(at) if at != e => {
                        next = Some(Value::Long(e as i64));
                        return Ok(false);
                    }
                    Some(_) => {}
                }
            }
            let v = match crate::store::reader::decode_fixed(vb) {
                Some(v) => v,
                None => r.decode_value(a, vb)?,
            };
            if same && Value::Ref(e) != v {
                return Ok(true);
            }
            let mut joined = Vec::with_capacity(width);
            joined.extend_from_slice(row);
            if push_e {
                joined.push(Value::Ref(e));
            }
            if push_v {
                joined.push(v);
            }
            out.rows.push(joined);
            Ok(true)
        })?;
        self.budget.check()?;
        self.part_read(next);
        Ok(out)
    }

    /// `[?e :a ?v]` with `?e` unbound and `?v` bound in column `c` of every row: each row
    /// joined with the entities holding its value, only those in `only` when given (a later
    /// pattern's test passed sideways: `prefilter`).
    pub(super) fn join_on_value(
        &mut self,
        a: AttrId,
        p: &Pattern,
        mut rel: Relation,
        c: usize,
        only: Option<&super::prefilter::EntitySet>,
    ) -> Result<Relation, QueryError> {
        let spare = self.row_spare;
        let mut out = Relation {
            vars: extend_vars(&rel.vars, p),
            rows: Vec::new(),
        };
        // One AVE lookup per distinct value, in value order through one cursor (each lookup
        // then mostly stays on the previous one's leaf page, and equal values come together,
        // so the last lookup serves them all).
        crate::query::relation::sort_rows_by_column(&mut rel.rows, c);
        self.hold_listed(a)?;
        let mut cursor = self.r.value_cursor()?;
        let mut last: Option<&Value> = None;
        let mut es: Vec<EntityId> = Vec::new();
        let bytes = row_bytes(out.vars.len() + spare);
        // The rows' own allocations come in an order of their values, not of their
        // addresses: each is asked for ahead (on a large relation a cache miss a row).
        for (i, row) in rel.rows.iter().enumerate() {
            row_ahead(&rel.rows, i);
            self.budget.tick()?;
            let v = &row[c];
            if last != Some(v) {
                self.budget.release(rows_bytes(es.len(), 1));
                es.clear();
                cursor.entities_into(a, &coerce(self.schema, a, v), &mut es)?;
                if let Some(only) = only {
                    es.retain(|e| only.contains(*e));
                }
                self.budget.charge(rows_bytes(es.len(), 1))?;
                last = Some(v);
            }
            for &e in &es {
                self.budget.charge(bytes)?;
                out.rows.push(row_with_entity(row, p, e, spare));
            }
        }
        self.budget.release(rows_bytes(es.len(), 1));
        Ok(out)
    }

    /// A pattern with an unknown attribute and unbound entity: the whole EAV index.
    pub(super) fn full_scan(&mut self, p: &Pattern, rel: Relation) -> Result<Relation, QueryError> {
        let r = self.r;
        let mut triples = Vec::new();
        let budget = &self.budget;
        let bytes = row_bytes(3);
        self.r.scan_entities(0, u64::MAX, |e, a, vb| {
            if !budget.charge_step(bytes) {
                return Ok(false);
            }
            triples.push((e, a, r.decode_value(a, vb)?));
            Ok(true)
        })?;
        self.budget.check()?;
        let mut vars = rel.vars.clone();
        let mut out_vars = Vec::new();
        for v in [
            p.e.var(),
            match p.a {
                AttrTerm::Var(v) => Some(v),
                _ => None,
            },
            p.v.var(),
        ]
        .into_iter()
        .flatten()
        {
            if !vars.contains(&v) && !out_vars.contains(&v) {
                out_vars.push(v);
            }
        }
        let mut input = Relation::empty(Vec::new());
        // Build a relation of the triples over the pattern's variables, then join.
        let terms = [p.e.clone(), attr_term(&p.a), p.v.clone()];
        input.vars = Vec::new();
        // An attribute variable bound by a function to an ident (`(keyword "person" "name")`)
        // joins on the ident, so that it keeps the keyword in the result as Datomic does.
        let by_ident = match p.a {
            AttrTerm::Var(v) => rel
                .col(v)
                .and_then(|c| rel.rows.first().map(|r| matches!(r[c], Value::Keyword(_)))),
            _ => None,
        }
        .unwrap_or(false);
        let schema = self.schema;
        let attr_value = |a: AttrId| match schema.get(a) {
            Some(x) if by_ident => Value::Keyword(x.ident.clone()),
            _ => Value::Ref(a as u64),
        };
        let rows: Vec<Vec<Value>> = triples
            .into_iter()
            .map(|(e, a, v)| vec![Value::Ref(e), attr_value(a), v])
            .collect();
        let m = match_terms(
            &Relation {
                vars: vec![usize::MAX - 2, usize::MAX - 1, usize::MAX],
                rows,
            },
            &terms,
            &self.budget,
        )?;
        vars.extend(out_vars);
        let joined = rel.join(&m, &self.budget)?;
        joined.project_owned(&vars, &self.budget)
    }
}

/// `row` followed by entity `e` when the pattern's entity is a variable, with room for `spare`
/// more values (the columns later steps add).
#[inline(always)]
fn row_with_entity(row: &[Value], p: &Pattern, e: EntityId, spare: usize) -> Vec<Value> {
    let mut r = Vec::with_capacity(row.len() + 1 + spare);
    // A first step's rows extend nothing: no call for an empty copy.
    if !row.is_empty() {
        r.extend_from_slice(row);
    }
    if let Term::Var(_) = p.e {
        r.push(Value::Ref(e));
    }
    r
}

/// Hands `f` the datoms of attribute `a` within the bounds in AVE's order: from `gathered`
/// when the caller gathered them (a listed attribute, `Ctx::gather_listed`), else from the
/// index (`IndexReader::scan_attr`).
fn scan_or_feed<'a, F>(
    r: &crate::store::IndexReader<'a>,
    gathered: Option<Vec<(&'a [u8], EntityId)>>,
    (a, lo, hi): (AttrId, Bound<&Value>, Bound<&Value>),
    mut f: F,
) -> Result<(), crate::store::StoreError>
where
    F: FnMut(&'a [u8], EntityId) -> Result<bool, crate::store::StoreError>,
{
    match gathered {
        Some(rows) => {
            for (vb, e) in rows {
                if !f(vb, e)? {
                    break;
                }
            }
            Ok(())
        }
        None => r.scan_attr(a, lo, hi, Direction::Forward, f),
    }
}
