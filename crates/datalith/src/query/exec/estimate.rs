//! Estimated rows after a clause, from the index statistics and the current bindings: what
//! `conj` compares to choose the next step, and what `explain` shows beside the actual.
//!
//! - A pattern on an unbound entity reads the AVE entries of its attribute: all of them, those
//!   of one value (counted), or, when comparisons on its value variable narrow the scan
//!   (`ranges`), those within the bounds (counted up to a cap, interpolated past it:
//!   `store::range_estimate`).
//! - A pattern on a bound entity keeps each row once per value (card-one) or per the
//!   attribute's average (card-many); a constant value keeps the share of datoms holding it
//!   (the length of its AVE entry, which LMDB keeps).
//! - Filters (predicates, `not`) only shrink, so `conj` runs them as soon as they can run;
//!   for `explain` their estimate is the share of rows that pass, from the statistics of the
//!   attribute whose value the compared variable holds, else a fixed share by kind of test.

use std::ops::Bound;

use super::*;
use crate::codec::Value;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;
use crate::store::AttrId;

/// Cap on duplicate counts when estimating: an estimate needs no more.
pub(super) const COUNT_CAP: u64 = 10_000;

/// Datoms counted exactly before a range is interpolated: a few microseconds of a walk, paid
/// by every candidate step with a range.
const RANGE_COUNT_CAP: u64 = 1024;

/// Shares of rows assumed to pass a filter the statistics cannot tell about (System R's
/// classic defaults): a comparison, an equality, an inequality, anything else.
const SHARE_COMPARISON: f64 = 1.0 / 3.0;
const SHARE_EQUAL: f64 = 1.0 / 10.0;
const SHARE_NOT_EQUAL: f64 = 0.9;
const SHARE_OTHER: f64 = 0.5;

/// What `explain`'s estimates of filters learn from the steps of a conjunction run so far
/// (kept only while explaining; out of line, so that the loop the queries run stays small).
#[derive(Default)]
pub(super) struct Notes {
    /// Which attribute's value a variable holds: (variable, source, attribute).
    value_of: Vec<(Var, usize, AttrId)>,
    /// Comparisons a range scan applied already (all their rows pass).
    applied: Vec<Clause>,
}

impl Notes {
    /// The value variables of a step's patterns on source `src`.
    #[inline(never)]
    pub(super) fn patterns(&mut self, src: usize, star: &[Pattern]) {
        for q in star {
            if let (Term::Var(v), AttrTerm::Attr(a)) = (&q.v, &q.a) {
                self.value_of.push((*v, src, *a));
            }
        }
    }

    /// The comparisons in `todo` that bounded a scan without being answered by it.
    #[inline(never)]
    pub(super) fn scan_bounds(&mut self, found: &[RangePred], todo: &[Clause]) {
        for (i, _, _, exact) in found {
            if !*exact {
                self.applied.push(todo[*i].clone());
            }
        }
    }
}

impl<'a> Ctx<'a> {
    /// The estimated rows after `c`, with `todo` the clauses not run yet (their comparisons
    /// may narrow a scan); an index count stops at `cap`.
    pub(super) fn estimate(
        &mut self,
        c: &Clause,
        rel: &Relation,
        n: u64,
        cap: u64,
        todo: &[Clause],
    ) -> Result<u64, QueryError> {
        // Each pattern is estimated on its own database.
        if let Clause::Pattern(src, _) | Clause::Timed(src, _) = c {
            self.enter(*src);
        }
        let bound = |t: &Term| match t {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        Ok(match c {
            // Filters only shrink: run them as soon as they can run.
            Clause::Pred { .. } | Clause::Not { .. } => 0,
            Clause::Or { .. } if is_filter(c) => 0,
            Clause::Fn { .. } => n,
            Clause::Timed(src, t) if self.reads_db(*src) => self.estimate_timed(&t.p, rel, n)?,
            Clause::Pattern(src, p) if self.reads_db(*src) && !self.is_current(*src) => {
                self.estimate_timed(p, rel, n)?
            }
            Clause::Pattern(src, p) if self.reads_db(*src) => match &p.a {
                AttrTerm::Unknown(_) => 0,
                AttrTerm::Attr(a) => {
                    let (datoms, distinct) = self.stats(*a)?;
                    let per_entity = if self.is_many(*a) {
                        (datoms / distinct.max(1)).max(2)
                    } else {
                        1
                    };
                    if bound(&p.e) {
                        match &p.v {
                            Term::Const(v) => {
                                let share = self.value_share(*a, v, datoms)?;
                                scale(n.max(1).saturating_mul(per_entity), share)
                            }
                            _ => n.max(1).saturating_mul(per_entity),
                        }
                    } else {
                        match &p.v {
                            Term::Const(v) => n
                                .max(1)
                                .saturating_mul(self.count_entities_with(*a, v, cap)?),
                            Term::Var(v) if rel.binds(*v) => {
                                n.saturating_mul((datoms / distinct).max(1))
                            }
                            _ => {
                                let within = match self.range_rows(p, todo, datoms)? {
                                    Some(r) => r,
                                    None => datoms,
                                };
                                n.max(1).saturating_mul(within.max(1))
                            }
                        }
                    }
                }
                _ => {
                    if bound(&p.e) {
                        n.max(1) * 16
                    } else {
                        u64::MAX / 4
                    }
                }
            },
            Clause::Pattern(src, _) | Clause::Timed(src, _) | Clause::Source { src, .. } => {
                self.sources
                    .get(&self.source_of(*src))
                    .map_or(0, |r| r.rows.len() as u64)
                    * n.max(1)
            }
            // Each branch's rows, as its cheapest data pattern estimates them on these rows.
            Clause::Or { branches, .. } => {
                let mut sum = 0u64;
                for b in branches {
                    let mut cheapest = n.max(1).saturating_mul(1000);
                    for p in b.iter().filter(|p| matches!(p, Clause::Pattern(..))) {
                        cheapest = cheapest.min(self.estimate(p, rel, n, COUNT_CAP, b)?);
                    }
                    sum = sum.saturating_add(cheapest);
                }
                sum
            }
            Clause::Dollar { clause, .. } => self.estimate(clause, rel, n, cap, todo)?,
            Clause::Rule { .. } => n.max(1) * 10_000,
        })
    }

    /// The rows after a `values held` step: one per distinct value held, at most the
    /// attribute's distinct values.
    #[inline(never)]
    pub(super) fn values_held_estimate(
        &self,
        star: &[Pattern],
        est: u64,
    ) -> Result<u64, QueryError> {
        Ok(match star.first().map(|q| &q.a) {
            Some(AttrTerm::Attr(a)) => est.min(self.stats(*a)?.1),
            _ => est,
        })
    }

    /// The rows after a merge scan of `star` (patterns of source `src` on one bound entity):
    /// each pattern's estimate taken as a factor on the rows.
    #[inline(never)]
    pub(super) fn star_estimate(
        &mut self,
        src: usize,
        star: &[Pattern],
        rel: &Relation,
        todo: &[Clause],
    ) -> Result<u64, QueryError> {
        let n = rel.rows.len() as u64;
        let mut factor = 1.0f64;
        for q in star {
            let c = Clause::Pattern(src, q.clone());
            let est = self.estimate(&c, rel, n, COUNT_CAP, todo)?;
            factor *= est as f64 / n.max(1) as f64;
        }
        Ok(scale(n, factor))
    }

    /// The datoms a scan of pattern `p` (entity and value unbound) reads when the comparisons
    /// on its value in `todo` bound it; `None` when none do.
    pub(super) fn range_rows(
        &self,
        p: &Pattern,
        todo: &[Clause],
        datoms: u64,
    ) -> Result<Option<u64>, QueryError> {
        let AttrTerm::Attr(a) = p.a else {
            return Ok(None);
        };
        let found = range_preds(p, todo, self.schema);
        if found.is_empty() {
            return Ok(None);
        }
        let ranges: Vec<(Bound<Value>, Bound<Value>)> =
            found.into_iter().map(|(_, lo, hi, _)| (lo, hi)).collect();
        let (lo, hi) = intersect_ranges(&ranges);
        let est = self
            .r
            .estimate_range(a, as_ref(&lo), as_ref(&hi), datoms, RANGE_COUNT_CAP)?;
        Ok(Some(est.datoms))
    }

    /// The share of attribute `a`'s datoms whose value is `v` (LMDB keeps the length of each
    /// AVE entry's entity list: no walk).
    fn value_share(&self, a: AttrId, v: &Value, datoms: u64) -> Result<f64, QueryError> {
        let with = self.r.entities_with_count(a, &coerce(self.schema, a, v))?;
        Ok((with as f64 / datoms.max(1) as f64).min(1.0))
    }

    /// What `explain` shows as the rows after filter `c` on `n` rows: the share that passes
    /// (module doc), from what `notes` learned of the steps before.
    #[inline(never)]
    pub(super) fn filter_estimate(
        &mut self,
        c: &Clause,
        n: u64,
        notes: &Notes,
    ) -> Result<u64, QueryError> {
        if notes.applied.contains(c) {
            return Ok(n);
        }
        let share = self.filter_share(c, notes)?;
        Ok(scale(n, share))
    }

    /// The share of rows filter `c` lets through: a test's from the statistics, an `or` of
    /// tests the sum of its branches' (each the product of its tests').
    fn filter_share(&mut self, c: &Clause, notes: &Notes) -> Result<f64, QueryError> {
        if notes.applied.contains(c) {
            return Ok(1.0);
        }
        Ok(match c {
            Clause::Pred { name, args } => self.pred_share(name, args, &notes.value_of)?,
            Clause::Dollar { clause, .. } => self.filter_share(clause, notes)?,
            Clause::Or { branches, .. } => {
                let mut sum = 0.0;
                for b in branches {
                    let mut product = 1.0;
                    for c in b {
                        product *= self.filter_share(c, notes)?;
                    }
                    sum += product;
                }
                f64::min(sum, 1.0)
            }
            _ => SHARE_OTHER,
        })
    }

    fn pred_share(
        &mut self,
        name: &str,
        args: &[Term],
        value_of: &[(Var, usize, AttrId)],
    ) -> Result<f64, QueryError> {
        let fixed = match name {
            "<" | ">" | "<=" | ">=" => SHARE_COMPARISON,
            "=" | "==" => SHARE_EQUAL,
            "!=" | "not=" => SHARE_NOT_EQUAL,
            _ => return Ok(SHARE_OTHER),
        };
        // `(?v op constant)` on a variable holding an attribute's values.
        let (v, op, k) = match args {
            [Term::Var(v), Term::Const(k)] => (*v, name, k),
            [Term::Const(k), Term::Var(v)] => (*v, flip(name), k),
            _ => return Ok(fixed),
        };
        let Some(&(_, src, a)) = value_of.iter().rev().find(|(x, _, _)| *x == v) else {
            return Ok(fixed);
        };
        self.enter(src);
        let Some(attr) = self.schema.get(a) else {
            return Ok(fixed);
        };
        if k.value_type() != Some(attr.value_type) {
            return Ok(fixed);
        }
        let (datoms, _) = self.stats(a)?;
        if datoms == 0 {
            return Ok(fixed);
        }
        let equal = |ctx: &Self| ctx.value_share(a, k, datoms);
        Ok(match op {
            "=" | "==" => equal(self)?,
            "!=" | "not=" => 1.0 - equal(self)?,
            _ => {
                let k = k.clone();
                let (lo, hi) = match op {
                    ">" => (Bound::Excluded(k), Bound::Unbounded),
                    ">=" => (Bound::Included(k), Bound::Unbounded),
                    "<" => (Bound::Unbounded, Bound::Excluded(k)),
                    _ => (Bound::Unbounded, Bound::Included(k)),
                };
                let est =
                    self.r
                        .estimate_range(a, as_ref(&lo), as_ref(&hi), datoms, RANGE_COUNT_CAP)?;
                est.datoms as f64 / datoms as f64
            }
        })
    }
}

/// Whether `c` only removes rows of the variables it tests: a predicate, a `not`, or an `or`
/// whose branches hold only such clauses (`(or (and [(= ?b "x")] [(< ?q 5)]) ...)`).
pub(super) fn is_filter(c: &Clause) -> bool {
    match c {
        Clause::Pred { .. } | Clause::Not { .. } => true,
        Clause::Or { branches, .. } => branches.iter().all(|b| b.iter().all(is_filter)),
        Clause::Dollar { clause, .. } => is_filter(clause),
        _ => false,
    }
}

/// `n` times `share`, rounded up so that a non-empty share of rows is never estimated as none.
fn scale(n: u64, share: f64) -> u64 {
    if share <= 0.0 {
        return 0;
    }
    ((n as f64) * share.min(1.0)).ceil() as u64
}
