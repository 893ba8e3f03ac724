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
use crate::query::ir::{AttrTerm, Binding, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;
use crate::store::AttrId;

/// Cap on duplicate counts when estimating: an estimate needs no more.
pub(super) const COUNT_CAP: u64 = 10_000;

/// Datoms counted exactly before a range is interpolated: a few microseconds of a walk, paid
/// by every candidate step with a range.
const RANGE_COUNT_CAP: u64 = 1024;

/// The largest share of rows the tests on part of a merge scan may pass for the rest of it
/// to be read after them (a second read of each passing entity then costs less than reading
/// the rest for every row).
const DEFER_SHARE: f64 = 0.5;

/// Rows from which the share of rows a merge scan's tests pass is measured on a sample of the
/// rows themselves rather than taken from the attributes' value ranges: the rows that reach a
/// step are often not a random draw of the attribute's entities (TPC-H Q3: of the line items
/// of orders placed before a date, 5% ship after it, against 54% of all line items), and 64
/// lookups are a few tens of microseconds beside the thousands the step makes.
const SAMPLE_TESTS_FROM_ROWS: usize = 4096;

/// Rows read in such a sample, evenly spaced through the relation (deterministic: the same
/// rows give the same plan).
const TEST_SAMPLE_ROWS: usize = 64;

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

    /// The comparisons in `todo` (by index) that bounded the scans of a star's attributes
    /// (they still run, and pass every row).
    #[inline(never)]
    pub(super) fn star_bounds(&mut self, tests: &[usize], todo: &[Clause]) {
        for i in tests {
            self.applied.push(todo[*i].clone());
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
            Clause::Pred { .. } => 0,
            // A `not` of tests is a test; one that reads the database does a nested query per
            // row: at most the rows it gets, so that a cheaper filter (a pattern on a bound
            // entity with a constant) runs before it and leaves it fewer rows.
            Clause::Not { clauses, .. } if clauses.iter().all(is_filter) => 0,
            Clause::Not { .. } => n,
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
                            // Both bound: a test of each row's pair, passed by about
                            // one value in `distinct`.
                            Term::Var(v) if rel.binds(*v) => {
                                scale(n.saturating_mul(per_entity), 1.0 / distinct as f64)
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
                        n.max(1).saturating_mul(16)
                    } else {
                        u64::MAX / 4
                    }
                }
            },
            Clause::Pattern(src, _) | Clause::Timed(src, _) | Clause::Source { src, .. } => self
                .sources
                .get(&self.source_of(*src))
                .map_or(0, |r| r.rows.len() as u64)
                .saturating_mul(n.max(1)),
            // Branches of tests and functions (`(and [(< ?d x)] [(ground 1995) ?y])`) keep
            // at most the rows they get.
            Clause::Or { .. } if is_rowwise(c) => n,
            // Else each branch's rows, as its cheapest data pattern estimates them on these
            // rows (a branch without one: a guess of 1,000 rows a row).
            Clause::Or { branches, .. } => {
                let mut sum = 0u64;
                for b in branches {
                    let mut cheapest: Option<u64> = None;
                    for p in b.iter().filter(|p| matches!(p, Clause::Pattern(..))) {
                        let est = self.estimate(p, rel, n, COUNT_CAP, b)?;
                        cheapest = Some(cheapest.map_or(est, |c| c.min(est)));
                    }
                    sum = sum
                        .saturating_add(cheapest.unwrap_or_else(|| n.max(1).saturating_mul(1000)));
                }
                sum
            }
            Clause::Dollar { clause, .. } => self.estimate(clause, rel, n, cap, todo)?,
            Clause::Rule { .. } => n.max(1).saturating_mul(10_000),
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

    /// Takes out of a merge scan on a bound entity (`star`) the patterns whose value no test
    /// in `todo` checks, when the tests that can run right after it are expected to pass at
    /// most `DEFER_SHARE` of the rows (from their value ranges): those patterns are then read
    /// for the rows that pass, not for every row. Returns the patterns taken out.
    pub(super) fn defer_untested(
        &mut self,
        star: &mut Vec<Pattern>,
        rel: &Relation,
        todo: &[Clause],
    ) -> Result<Vec<Pattern>, QueryError> {
        // The variables bound once the whole star has run.
        let mut after: Vec<Var> = rel.vars.clone();
        after.extend(star.iter().filter_map(|q| q.v.var()));
        let tests: Vec<&Clause> = todo
            .iter()
            .filter(|c| is_filter(c) && c.vars().iter().all(|v| after.contains(v)))
            .collect();
        let tested = |q: &Pattern| {
            q.v.var()
                .is_some_and(|v| tests.iter().any(|c| c.vars().contains(&v)))
        };
        let n_tested = star.iter().filter(|q| tested(q)).count();
        if n_tested == 0 || n_tested == star.len() {
            return Ok(Vec::new());
        }
        let keep: Vec<Pattern> = star.iter().filter(|q| tested(q)).cloned().collect();
        let share = match self.sampled_share(&keep, rel, &tests)? {
            Some(share) => share,
            None => {
                let mut share = 1.0f64;
                for q in &keep {
                    let AttrTerm::Attr(a) = q.a else { continue };
                    let (datoms, _) = self.stats(a)?;
                    if let Some(rows) = self.range_rows(q, todo, datoms)? {
                        share *= rows as f64 / datoms.max(1) as f64;
                    }
                }
                share
            }
        };
        if share > DEFER_SHARE {
            return Ok(Vec::new());
        }
        let later: Vec<Pattern> = std::mem::take(star)
            .into_iter()
            .filter(|q| !tested(q))
            .collect();
        *star = keep;
        Ok(later)
    }

    /// The share of `rel`'s rows that pass the `tests` that can run once the patterns `keep`
    /// (a merge scan on a bound entity) have: measured on `TEST_SAMPLE_ROWS` rows of `rel`
    /// by running those steps on them. `None` below `SAMPLE_TESTS_FROM_ROWS` rows, or when the
    /// sample cannot tell (a test fails on it: the real run reports that).
    fn sampled_share(
        &mut self,
        keep: &[Pattern],
        rel: &Relation,
        tests: &[&Clause],
    ) -> Result<Option<f64>, QueryError> {
        if rel.rows.len() < SAMPLE_TESTS_FROM_ROWS || keep.is_empty() {
            return Ok(None);
        }
        let mut bound: Vec<Var> = rel.vars.clone();
        bound.extend(keep.iter().filter_map(|q| q.v.var()));
        let runnable: Vec<&Clause> = tests
            .iter()
            .copied()
            .filter(|c| c.vars().iter().all(|v| bound.contains(v)))
            .collect();
        if runnable.is_empty() {
            return Ok(None);
        }
        let step = rel.rows.len() / TEST_SAMPLE_ROWS;
        let sample = Relation {
            vars: rel.vars.clone(),
            rows: (0..TEST_SAMPLE_ROWS)
                .map(|i| rel.rows[i * step].clone())
                .collect(),
        };
        let stop = |e: QueryError| match e {
            e @ (QueryError::Timeout { .. }
            | QueryError::Cancelled
            | QueryError::ResourceExhausted { .. }) => Err(e),
            _ => Ok(None),
        };
        let mut out = match self.patterns(keep, sample, &[], &[]) {
            Ok((out, _)) => out,
            Err(e) => return stop(e),
        };
        for c in runnable {
            out = match self.clause(c, out) {
                Ok(out) => out,
                Err(e) => return stop(e),
            };
        }
        Ok(Some(
            (out.rows.len() as f64 / TEST_SAMPLE_ROWS as f64).min(1.0),
        ))
    }

    /// What choosing clause `c` (`todo[skip]`, estimated at `est` rows on `rel`) costs: its
    /// rows, plus the rows once the data patterns on the variables it binds have run too:
    /// `est` times each such pattern's factor (its estimate on rows that bind those
    /// variables, over the rows); only patterns that extend the rows or test them against a
    /// constant count. A part bound first that every line item then joins costs the line
    /// items' count, not the parts'.
    pub(super) fn neighborhood(
        &mut self,
        c: &Clause,
        skip: usize,
        rel: &Relation,
        est: u64,
        todo: &[Clause],
    ) -> Result<u64, QueryError> {
        if est == 0 || !matches!(c, Clause::Pattern(..) | Clause::Or { .. }) {
            return Ok(est);
        }
        let new: Vec<Var> = c.vars().into_iter().filter(|v| !rel.binds(*v)).collect();
        if new.is_empty() {
            return Ok(est);
        }
        let mut vars = rel.vars.clone();
        vars.extend(&new);
        let after = Relation::empty(vars);
        let mut rows = est as f64;
        for (j, q) in todo.iter().enumerate() {
            let Clause::Pattern(_, p) = q else { continue };
            if j == skip || !q.vars().iter().any(|v| new.contains(v)) {
                continue;
            }
            // A pattern that would test two bound variables is left out: its one value in
            // `distinct` assumes the two independent, and a join that closes a cycle (a line
            // item's part and supplier, both from one partsupp) is anything but.
            let both_bound = [&p.e, &p.v]
                .iter()
                .all(|t| matches!(t, Term::Var(v) if after.binds(*v)));
            if both_bound {
                continue;
            }
            let e = self.estimate(q, &after, est, COUNT_CAP, todo)?;
            rows *= e as f64 / est as f64;
        }
        // The step's own rows count too: a large start that the next patterns shrink still
        // reads them all.
        Ok((est as f64 + rows).min(u64::MAX as f64 / 2.0) as u64)
    }

    /// The datoms of attribute `a` within `bounds` (counted up to a cap, interpolated past it).
    pub(super) fn bounded_rows(
        &self,
        a: AttrId,
        bounds: &(Bound<Value>, Bound<Value>),
    ) -> Result<u64, QueryError> {
        let (datoms, _) = self.stats(a)?;
        let est = self.r.estimate_range(
            a,
            as_ref(&bounds.0),
            as_ref(&bounds.1),
            datoms,
            RANGE_COUNT_CAP,
        )?;
        Ok(est.datoms)
    }

    /// `est` rows of a star whose attribute scans kept only the values within `bounds`.
    #[inline(never)]
    pub(super) fn bounded_estimate(
        &self,
        star: &[Pattern],
        bounds: &[StarBound],
        est: u64,
    ) -> Result<u64, QueryError> {
        let mut share = 1.0f64;
        for (q, b) in star.iter().zip(bounds) {
            if let (AttrTerm::Attr(a), Some(b)) = (&q.a, b) {
                let (datoms, _) = self.stats(*a)?;
                share *= self.bounded_rows(*a, b)? as f64 / datoms.max(1) as f64;
            }
        }
        Ok(scale(est, share))
    }

    /// The value bounds the tests in `todo` put on each pattern of a star (`None` where
    /// they put none).
    pub(super) fn star_bounds(&self, star: &[Pattern], todo: &[Clause]) -> Vec<StarBound> {
        star.iter()
            .map(|q| {
                let found = range_preds(q, todo, self.schema);
                if found.is_empty() {
                    return None;
                }
                let ranges: Vec<(Bound<Value>, Bound<Value>)> =
                    found.into_iter().map(|(_, lo, hi, _)| (lo, hi)).collect();
                Some(intersect_ranges(&ranges))
            })
            .collect()
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
    pub(super) fn filter_share(&mut self, c: &Clause, notes: &Notes) -> Result<f64, QueryError> {
        if notes.applied.contains(c) {
            return Ok(1.0);
        }
        Ok(match c {
            Clause::Pred { name, args } => self.pred_share(name, args, &notes.value_of)?,
            Clause::Dollar { clause, .. } => self.filter_share(clause, notes)?,
            Clause::Fn { .. } => 1.0,
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

/// Whether `c` makes at most one row of each row it gets: a filter, a function with a scalar
/// or tuple result, an `or` whose branches hold only such clauses.
pub(super) fn is_rowwise(c: &Clause) -> bool {
    match c {
        Clause::Fn { binding, .. } => matches!(binding, Binding::Scalar(_) | Binding::Tuple(_)),
        Clause::Or { branches, .. } => branches.iter().all(|b| b.iter().all(is_rowwise)),
        Clause::Dollar { clause, .. } => is_rowwise(clause),
        c => is_filter(c),
    }
}

/// The variables a row-wise clause (`is_rowwise`) reads: the arguments of its tests and
/// functions, the variables of its `not`s; not those its functions bind.
pub(super) fn rowwise_inputs(c: &Clause) -> Vec<Var> {
    let mut out = Vec::new();
    let mut add = |v: Var| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    match c {
        Clause::Pred { args, .. } | Clause::Fn { args, .. } => {
            args.iter().filter_map(|t| t.var()).for_each(&mut add)
        }
        Clause::Not { vars, .. } => vars.iter().copied().for_each(&mut add),
        Clause::Or { branches, .. } => {
            for b in branches {
                for c in b {
                    rowwise_inputs(c).into_iter().for_each(&mut add);
                }
            }
        }
        Clause::Dollar { clause, .. } => rowwise_inputs(clause).into_iter().for_each(&mut add),
        _ => {}
    }
    out
}

/// `n` times `share`, rounded up so that a non-empty share of rows is never estimated as none.
fn scale(n: u64, share: f64) -> u64 {
    if share <= 0.0 {
        return 0;
    }
    ((n as f64) * share.min(1.0)).ceil() as u64
}
