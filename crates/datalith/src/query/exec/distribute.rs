//! An `or` of tests spread over the rest of its conjunction, when each branch gives the
//! conjunction a much cheaper start than the conjunction has without it.
//!
//! `A ∧ (B1 ∨ B2 ∨ B3)` is `(A ∧ B1) ∨ (A ∧ B2) ∨ (A ∧ B3)`. Run as one filter, the `or` waits
//! until `A` has bound everything it tests, so `A` runs whole; spread, each branch's tests
//! bound its own scans (TPC-H Q19: `[(= ?brand "Brand#12")]` starts from 8,000 parts, where
//! `A` alone starts from the 200,000 parts or the 6 million line items). The answers are the
//! union of the branches' answers, deduplicated: a row that passes two branches is one row,
//! as the filter leaves it.
//!
//! Only an `or` whose branches are tests of the `or`'s own variables is spread (no functions,
//! no `not`, no branch-local variables), with at most [`MAX_BRANCHES`] branches, and only when
//! the branches' cheapest starts added up are [`GAIN`] times below the cheapest start without
//! them. Each branch is then planned on its own, so the plan may differ between them.

use super::estimate::{is_filter, COUNT_CAP};
use super::*;
use crate::query::error::QueryError;
use crate::query::ir::{Clause, Var};
use crate::query::plan::PlanIndex;
use crate::query::relation::Relation;

/// Branches past this many are not spread: each is a plan of its own, run in turn.
const MAX_BRANCHES: usize = 4;

/// How much cheaper the branches' starts together must be than the whole conjunction's.
const GAIN: u64 = 4;

impl<'a> Ctx<'a> {
    /// The conjunction's answer computed branch by branch of one of its `or`s, when that pays
    /// (see the module); `None` to evaluate it as it stands.
    pub(super) fn distributed(
        &mut self,
        clauses: &[Clause],
        input: &Relation,
        keep: &[Var],
    ) -> Result<Option<Relation>, QueryError> {
        let Some(at) = clauses.iter().position(spreadable) else {
            return Ok(None);
        };
        let Clause::Or { branches, .. } = &clauses[at] else {
            unreachable!("spreadable is an or")
        };
        let whole = self.cheapest_start(clauses, input)?;
        let rest: Vec<Clause> = clauses
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, c)| c.clone())
            .collect();
        let plans: Vec<Vec<Clause>> = branches
            .iter()
            .map(|b| rest.iter().chain(b).cloned().collect())
            .collect();
        let mut starts = 0u64;
        for plan in &plans {
            starts = starts.saturating_add(self.cheapest_start(plan, input)?);
            if starts.saturating_mul(GAIN) >= whole {
                return Ok(None);
            }
        }
        let mut union: Option<Relation> = None;
        for plan in &plans {
            let r = self.conj(plan, input.clone(), keep)?;
            match &mut union {
                None => union = Some(r),
                Some(u) => u.union(r, &self.budget)?,
            }
        }
        let mut union = union.expect("at least two branches");
        union.dedup(&self.budget)?;
        if self.trace.is_some() {
            let what = format!(
                "union of the {} plans above, one per branch of {}",
                branches.len(),
                self.show().clause(&clauses[at])
            );
            let actual = union.rows.len() as u64;
            if let Some(trace) = &mut self.trace {
                trace.push(Step {
                    what,
                    index: PlanIndex::Nested,
                    estimated: starts,
                    actual,
                });
            }
        }
        Ok(Some(union))
    }

    /// The estimated rows of the cheapest clause that can run first on `input`.
    fn cheapest_start(&mut self, clauses: &[Clause], input: &Relation) -> Result<u64, QueryError> {
        let n = input.rows.len() as u64;
        let mut best = u64::MAX;
        for c in clauses {
            // A test is no start: it runs once its variables are bound.
            if is_filter(c) || !self.ready(c, input) {
                continue;
            }
            let cap = best.min(COUNT_CAP);
            best = best.min(self.estimate(c, input, n, cap, clauses)?);
        }
        Ok(best)
    }
}

/// Whether `c` is an `or` of 2 to [`MAX_BRANCHES`] branches, each only tests of the `or`'s
/// own variables.
fn spreadable(c: &Clause) -> bool {
    let Clause::Or { vars, branches, .. } = c else {
        return false;
    };
    (2..=MAX_BRANCHES).contains(&branches.len())
        && branches.iter().flatten().all(|c| match c {
            Clause::Pred { args, .. } => args
                .iter()
                .filter_map(|t| t.var())
                .all(|v| vars.contains(&v)),
            _ => false,
        })
}
