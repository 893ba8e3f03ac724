//! Choosing where a conjunction starts by looking ahead. The step-by-step choice (`choose`)
//! sees one join ahead (`neighborhood`): from a query's most selective constant (one region)
//! it follows the joins outward, and the rows can grow at every step (region, nations,
//! customers, orders, line items) before a constant at the far end (a part type) cuts them
//! back. Before the first step of a conjunction with enough patterns, each of the cheapest
//! starts is followed to the end on estimates alone, the way `choose` would go on (the
//! cheapest ready step connected to what is bound, tests applied as soon as they can run with
//! their estimated share), and the start whose plan moves the fewest rows in all wins.
//!
//! Only the start is chosen this way: every later step is still chosen on the rows actually
//! bound, so an estimate that was wrong costs the start, not the plan.

use super::estimate::COUNT_CAP;
use super::*;
use crate::query::error::QueryError;
use crate::query::ir::{Clause, Term, Var};
use crate::query::relation::Relation;

/// Data patterns a conjunction needs before its start is looked ahead for: with fewer, the
/// rows have too few joins to grow through, and the lookahead (estimates for every step of
/// every plan followed) would cost more than it could save.
pub(super) const LOOKAHEAD_MIN_PATTERNS: usize = 6;

/// Starts followed to the end: the cheapest ones by the step-by-step score.
pub(super) const LOOKAHEAD_STARTS: usize = 4;

/// How many times fewer rows another start's plan must move than the step-by-step start's
/// to be taken instead.
pub(super) const LOOKAHEAD_MARGIN: f64 = 2.0;

impl<'a> Ctx<'a> {
    /// Whether `todo`, to be run on `rel`, is a conjunction whose start is looked ahead for:
    /// nothing bound yet, and enough data patterns.
    pub(super) fn looks_ahead(&self, todo: &[Clause], rel: &Relation) -> bool {
        rel.vars.is_empty()
            && todo
                .iter()
                .filter(|c| matches!(c, Clause::Pattern(..)))
                .count()
                >= LOOKAHEAD_MIN_PATTERNS
    }

    /// Of `starts` (indexes into `todo`, cheapest first by the step-by-step score: the first
    /// is the start `choose` takes), the one whose plan, followed on estimates, moves the
    /// fewest rows, the first unless another moves [`LOOKAHEAD_MARGIN`] times fewer; `None`
    /// when the first cannot be followed to the end.
    pub(super) fn start_by_lookahead(
        &mut self,
        todo: &[Clause],
        rel: &Relation,
        starts: &[usize],
    ) -> Result<Option<usize>, QueryError> {
        let Some((&first, others)) = starts.split_first() else {
            return Ok(None);
        };
        let Some(first_cost) = self.plan_cost(todo, rel, first, f64::INFINITY)? else {
            return Ok(None);
        };
        // Another start must beat the step-by-step one by a margin: the estimates of a plan
        // followed to its end multiply their errors at every step.
        let mut best = (first, first_cost / LOOKAHEAD_MARGIN);
        for &s in others.iter().take(LOOKAHEAD_STARTS - 1) {
            if let Some(cost) = self.plan_cost(todo, rel, s, best.1)? {
                best = (s, cost);
            }
        }
        Ok(Some(best.0))
    }

    /// The rows the plan starting with `todo[start]` moves (the sum of the rows after each
    /// step), followed on estimates; `None` once past `bound` or when it cannot go on (a
    /// clause that no order can make ready).
    fn plan_cost(
        &mut self,
        todo: &[Clause],
        rel: &Relation,
        start: usize,
        bound: f64,
    ) -> Result<Option<f64>, QueryError> {
        let mut notes = Notes::default();
        let mut vars = rel.vars.clone();
        let mut left: Vec<usize> = (0..todo.len()).filter(|&i| i != start).collect();
        let mut rows = 1.0f64;
        let mut cost = 0.0f64;
        let mut next = Some(start);
        while let Some(i) = next {
            let c = &todo[i];
            let before = Relation::empty(vars.clone());
            let n = count(rows);
            let mut step = vec![i];
            rows = match c {
                c if is_filter(c) => rows * self.filter_share(c, &notes)?,
                Clause::Pattern(src, p) if matches!(p.e, Term::Var(e) if vars.contains(&e)) => {
                    // The other patterns on the bound entity join it in one merge scan, as
                    // `conj` runs them: one step, each pattern a factor on the rows.
                    let src = self.source_of(*src);
                    let mut star_rows = self.estimate(c, &before, n, COUNT_CAP, todo)? as f64;
                    for &j in left.iter() {
                        if self.joins_star(src, &p.e, &todo[j]) {
                            let e = self.estimate(&todo[j], &before, n, COUNT_CAP, todo)?;
                            star_rows *= e as f64 / n.max(1) as f64;
                            step.push(j);
                        }
                    }
                    left.retain(|j| !step.contains(j));
                    star_rows
                }
                c => self.estimate(c, &before, n, COUNT_CAP, todo)? as f64,
            };
            cost += rows;
            if cost >= bound {
                return Ok(None);
            }
            for &j in &step {
                let c = &todo[j];
                if let Clause::Pattern(src, p) = c {
                    notes.patterns(self.source_of(*src), std::slice::from_ref(p));
                    // A scan of the attribute (entity and value unbound) takes the
                    // comparisons on its value as bounds: its estimate counted them, they
                    // pass every row.
                    let unbound = |t: &Term| matches!(t, Term::Var(v) if !vars.contains(v));
                    if unbound(&p.e) && unbound(&p.v) {
                        let tests: Vec<usize> = range_preds(p, todo, self.schema)
                            .iter()
                            .map(|(i, _, _, _)| *i)
                            .collect();
                        notes.star_bounds(&tests, todo);
                    }
                }
                for v in c.vars() {
                    if !vars.contains(&v) {
                        vars.push(v);
                    }
                }
            }
            if rows == 0.0 {
                return Ok(Some(cost));
            }
            next = self.next_on_estimates(todo, &mut left, &vars, rows)?;
        }
        Ok(left.is_empty().then_some(cost))
    }

    /// The step `choose` would take next on `rows` estimated rows binding `vars`: a test
    /// that can run (they shrink the rows: first), else the ready clause connected to what is
    /// bound (any ready one when none is) with the lowest score (`neighborhood`). Taken out
    /// of `left`.
    fn next_on_estimates(
        &mut self,
        todo: &[Clause],
        left: &mut Vec<usize>,
        vars: &[Var],
        rows: f64,
    ) -> Result<Option<usize>, QueryError> {
        let bound_now = Relation::empty(vars.to_vec());
        let ready: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| self.ready(&todo[i], &bound_now))
            .collect();
        let pick = match ready.iter().find(|&&i| is_filter(&todo[i])) {
            Some(&test) => Some(test),
            None => {
                let connected = |i: &usize| todo[*i].vars().iter().any(|v| vars.contains(v));
                let any_connected = ready.iter().any(connected);
                let n = count(rows);
                let candidates: Vec<usize> = ready
                    .iter()
                    .copied()
                    .filter(|i| !any_connected || connected(i))
                    .collect();
                let mut best: Option<(usize, u64)> = None;
                for &i in &candidates {
                    let est = self.estimate(&todo[i], &bound_now, n, COUNT_CAP, todo)?;
                    // Scored as `choose` scores its candidates.
                    let score = match candidates.len() {
                        1 => est,
                        _ => self.neighborhood(&todo[i], i, &bound_now, est, todo)?,
                    };
                    if best.is_none_or(|(_, b)| score < b) {
                        best = Some((i, score));
                    }
                }
                best.map(|(i, _)| i)
            }
        };
        if let Some(i) = pick {
            left.retain(|&j| j != i);
        }
        Ok(pick)
    }
}

/// Estimated rows as the count the estimates take (clamped far below overflow: they multiply
/// it).
fn count(rows: f64) -> u64 {
    rows.min(u64::MAX as f64 / 4.0) as u64
}
