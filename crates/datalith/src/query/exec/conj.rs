//! A conjunction of clauses, evaluated by repeatedly choosing the cheapest clause that can run
//! next (estimated from the index statistics and the current bindings), so the order of the
//! clauses in the query text never changes the plan. After every step the variables no later
//! clause needs are projected away, deduplicating only when that can make equal rows (see
//! `query::distinct`), and the budget is settled to the relation now held.

use std::ops::Bound;

use super::estimate::COUNT_CAP;
use super::*;
use crate::codec::Value;
use crate::query::budget::rows_bytes;
use crate::query::distinct;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Term, Var};
use crate::query::plan::PlanIndex;
use crate::query::relation::Relation;
use crate::store::{AttrId, EntityId};

/// The index a clause other than a data pattern on a database reads when `Ctx::clause` runs
/// it: the database functions (`missing?`, `get-else`, `get-some`) read the entity's EAV
/// entry, other predicates and functions no index.
fn clause_index(c: &Clause) -> PlanIndex {
    match c {
        Clause::Pred { name, .. } | Clause::Fn { name, .. }
            if matches!(name.as_str(), "get-else" | "get-some" | "missing?") =>
        {
            PlanIndex::Eav
        }
        Clause::Pred { .. } => PlanIndex::None,
        Clause::Fn { .. } => PlanIndex::Function,
        Clause::Not { .. } | Clause::Or { .. } => PlanIndex::Nested,
        Clause::Rule { .. } => PlanIndex::Rule,
        Clause::Timed(..) => PlanIndex::History,
        Clause::Dollar { clause, .. } => clause_index(clause),
        // Here a pattern reads an input relation (`Ctx::clause`).
        Clause::Source { .. } | Clause::Pattern(..) => PlanIndex::Input,
    }
}

impl<'a> Ctx<'a> {
    /// Evaluates a conjunction on top of `input`, keeping the variables in `keep` (plus any
    /// the clauses bind that `keep` names).
    pub fn conj(
        &mut self,
        clauses: &[Clause],
        input: Relation,
        keep: &[Var],
    ) -> Result<Relation, QueryError> {
        // Every nested clause and rule body runs through here: the recursion's stack step.
        crate::stack::deep(|| self.conj_here(clauses, input, keep))
    }

    fn conj_here(
        &mut self,
        clauses: &[Clause],
        input: Relation,
        keep: &[Var],
    ) -> Result<Relation, QueryError> {
        if let Some(spread) = self.distributed(clauses, &input, keep)? {
            return Ok(spread);
        }
        let mut todo: Vec<Clause> = clauses.to_vec();
        // Canonical order: a tie between equally cheap clauses never depends on query order.
        todo.sort();
        self.run_steps(todo, input, keep, Vec::new(), Vec::new())
    }

    /// The conjunction's loop: runs the clauses `todo` on `rel`, step by step, given what the
    /// patterns run so far tell about the rows (`deps`, see `distinct`); spread over threads
    /// from a large step on (`spread`). The clauses of `todo` also in `postponed` run after
    /// the others (`postpone`).
    pub(super) fn run_steps(
        &mut self,
        mut todo: Vec<Clause>,
        mut rel: Relation,
        keep: &[Var],
        mut deps: Vec<distinct::Dependency>,
        mut postponed: Vec<Clause>,
    ) -> Result<Relation, QueryError> {
        // What the enclosing steps hold (their relations stay alive while this one runs).
        let base = self.budget.used();
        // What `explain`'s estimates of filters learn from the steps run (only then).
        let mut notes: Option<Notes> = self.trace.as_ref().map(|_| Notes::default());
        while !todo.is_empty() {
            self.budget.tick()?;
            if rel.rows.is_empty() {
                // Nothing can come back: bind the remaining variables to nothing.
                let mut vars = rel.vars.clone();
                for c in &todo {
                    for v in c.vars() {
                        if !vars.contains(&v) {
                            vars.push(v);
                        }
                    }
                }
                return Relation::empty(vars).project_owned(keep, &self.budget);
            }
            if let Some(cut) = self.spreads(&rel, &todo) {
                return self.spread_steps(cut, todo, rel, keep, deps, postponed);
            }
            for c in self.waiting_extensions(&todo, &rel) {
                if !postponed.contains(&c) {
                    postponed.push(c);
                }
            }
            // A later part's run takes the first run's first step (`parts`).
            let (i, mut est) = match self.part_first_step(&todo) {
                Some(i) => (i, rel.rows.len() as u64),
                None => self.choose(&todo, &rel, &postponed)?,
            };
            self.part_chosen(&todo[i], &rel, keep);
            let clause = todo.remove(i);
            if let Some(notes) = &notes {
                if is_filter(&clause) || matches!(clause, Clause::Or { .. } if is_rowwise(&clause))
                {
                    est = self.filter_estimate(&clause, rel.rows.len() as u64, notes)?;
                }
            }
            // Tests and functions that can follow it, run in the same pass over the rows.
            // A function whose elements are made rows a part at a time runs alone.
            let chain = if self.elements_armed() {
                None
            } else {
                self.chain_from(&clause, &mut todo, &rel)
            };
            self.row_spare = row_spare(&rel, &clause, &todo);
            // Printed only for `explain`: most queries never show their steps.
            let mut what = match self.trace {
                Some(_) => self.show().clause(&clause),
                None => String::new(),
            };
            let repeats;
            let index;
            // A group whose variables nothing else reads: probed per row, first witness wins.
            let grouped = match &clause {
                Clause::Pattern(src, p) if self.reads_db(*src) && self.is_current(*src) => {
                    self.enter(*src);
                    self.exists_group(p, *src, &rel, &todo, keep)
                }
                _ => None,
            };
            rel = match (&clause, grouped) {
                (_, Some((probe, group))) => {
                    let mut shown = vec![clause.clone()];
                    for i in group {
                        shown.push(todo.remove(i));
                    }
                    if self.trace.is_some() {
                        let show = self.show();
                        let list: Vec<String> = shown.iter().map(|c| show.clause(c)).collect();
                        what = format!("exists {}", list.join(" "));
                        est = est.min(rel.rows.len() as u64);
                    }
                    repeats = false;
                    index = PlanIndex::Ave;
                    self.probe(&probe, rel, true)?
                }
                (Clause::Pattern(src, p), None) if self.reads_db(*src) && self.is_current(*src) => {
                    let src = self.source_of(*src);
                    self.enter(src);
                    // Merge scan: every other ready pattern on the same bound entity.
                    let mut star = vec![p.clone()];
                    if let Term::Var(e) = p.e {
                        if rel.binds(e) {
                            let mut j = 0;
                            while j < todo.len() {
                                match &todo[j] {
                                    Clause::Pattern(_, q)
                                        if self.joins_star(src, &Term::Var(e), &todo[j]) =>
                                    {
                                        star.push(q.clone());
                                        todo.remove(j);
                                    }
                                    _ => j += 1,
                                }
                            }
                        }
                    }
                    if star.len() > 1 {
                        // Values no test checks wait until the tests have run, when the tests
                        // are expected to pass few rows.
                        for q in self.defer_untested(&mut star, &rel, &todo)? {
                            todo.push(Clause::Pattern(src, q));
                        }
                        // Its sample may have run a test on another database.
                        self.enter(src);
                        for q in self.postpone_extensions(&mut star, &rel, &todo) {
                            postponed.push(Clause::Pattern(src, q.clone()));
                            todo.push(Clause::Pattern(src, q));
                        }
                        if star.len() == 1 && star[0] != *p && self.trace.is_some() {
                            what = self.show().clause(&Clause::Pattern(src, star[0].clone()));
                        }
                    }
                    if star.len() > 1 {
                        what = self.show_step("merge scan", &star);
                        if self.trace.is_some() {
                            est = self.star_estimate(src, &star, &rel, &todo)?;
                        }
                    }
                    if let Some(notes) = &mut notes {
                        notes.patterns(src, &star);
                    }
                    repeats = star
                        .iter()
                        .any(|q| distinct::pattern_repeats(self.schema, q));
                    for q in &star {
                        distinct::dependencies(self.schema, q, &mut deps);
                    }
                    // Constant patterns on the bound entity whose AVE entry is short filter
                    // the rows first (fewer rows to look up for the rest of the star).
                    let (rel, star) = self.const_filters(star, rel)?;
                    if star.is_empty() {
                        index = PlanIndex::Ave;
                        rel
                    } else if let Some(values) = self.semijoin_values(&star, &rel, &todo, keep)? {
                        what = self.show_step("values held", &star);
                        if self.trace.is_some() {
                            est = self.values_held_estimate(&star, est)?;
                        }
                        index = PlanIndex::AttrScan;
                        values
                    } else {
                        // An AVE range scan (entity and value both unbound) can take the
                        // single-variable comparisons on the value as its bounds.
                        let scan = star.len() == 1
                            && matches!(&p.e, Term::Var(e) if !rel.binds(*e))
                            && matches!(&p.v, Term::Var(v) if !rel.binds(*v));
                        let found = if scan {
                            range_preds(p, &todo, self.schema)
                        } else {
                            Vec::new()
                        };
                        let ranges: Vec<(Bound<Value>, Bound<Value>)> = found
                            .iter()
                            .map(|(_, lo, hi, _)| (lo.clone(), hi.clone()))
                            .collect();
                        // Bounds of fixed-width types are exact in the index: their predicates are
                        // answered by the scan and need not run again.
                        if let Some(notes) = &mut notes {
                            notes.scan_bounds(&found, &todo);
                        }
                        let mut exact: Vec<usize> = found
                            .iter()
                            .filter(|(_, _, _, exact)| *exact)
                            .map(|(i, _, _, _)| *i)
                            .collect();
                        exact.sort_unstable_by(|a, b| b.cmp(a));
                        for i in exact {
                            todo.remove(i);
                        }
                        // On a bound entity: the tests to run bound the star's values.
                        let star_bounds = if scan {
                            Vec::new()
                        } else {
                            self.star_bounds(&star, &todo)
                        };
                        // Only whether some entity holds the known value matters.
                        if let Some(a) = self.existence_probe(&star, &rel, &todo, keep) {
                            if self.trace.is_some() {
                                what.push_str(" +exists");
                                est = est.min(rel.rows.len() as u64);
                            }
                            index = PlanIndex::Ave;
                            self.holders_exist(a, &star[0], rel)?
                        } else if let Some((a, c, filter)) =
                            self.join_prefilter(src, &star, &rel, &mut todo, keep)?
                        {
                            // A later pattern that only tests the new entity narrows the join.
                            if self.trace.is_some() {
                                let show = self.show();
                                let list: Vec<String> =
                                    filter.clauses.iter().map(|c| show.clause(c)).collect();
                                what.push_str(&format!(" +filter {}", list.join(" ")));
                                est = (est as f64 * filter.share).ceil() as u64;
                            }
                            let only = self.prefiltered(&filter)?;
                            index = PlanIndex::Ave;
                            self.join_on_value(a, &star[0], rel, c, Some(&only))?
                        } else {
                            let (rel, read) = self.patterns(&star, rel, &ranges, &star_bounds)?;
                            // A scan of the star's attributes read only within the bounds: its rows
                            // are the ones the tests pass.
                            if let (Some(notes), PlanIndex::AttrScan) = (&mut notes, read) {
                                if star_bounds.iter().any(Option::is_some) {
                                    est = self.bounded_estimate(&star, &star_bounds, est)?;
                                    let tests: Vec<usize> = star
                                        .iter()
                                        .flat_map(|q| range_preds(q, &todo, self.schema))
                                        .map(|(i, _, _, _)| i)
                                        .collect();
                                    notes.star_bounds(&tests, &todo);
                                }
                            }
                            index = read;
                            rel
                        }
                    }
                }
                (first, _) if chain.is_some() => {
                    let links = chain.unwrap_or_default();
                    let functions = self.functions;
                    repeats = false;
                    for c in &links {
                        distinct::call_dependencies(c, |n| functions.contains_key(n), &mut deps);
                    }
                    index = clause_index(first);
                    self.run_chain(&links, rel)?
                }
                (other, _) => {
                    repeats = distinct::clause_repeats(self.schema, other);
                    let functions = self.functions;
                    distinct::call_dependencies(other, |n| functions.contains_key(n), &mut deps);
                    index = match other {
                        Clause::Pattern(src, _) if self.reads_db(*src) => PlanIndex::History,
                        _ => clause_index(other),
                    };
                    self.clause(other, rel)?
                }
            };
            self.part_step_done();
            // Project away what no later clause and no caller needs; the rows stay a set.
            let mut needed: Vec<Var> = keep.to_vec();
            for c in &todo {
                needed.extend(c.vars());
            }
            let keep_now: Vec<Var> = rel
                .vars
                .iter()
                .copied()
                .filter(|v| needed.contains(v))
                .collect();
            let dropped: Vec<Var> = rel
                .vars
                .iter()
                .copied()
                .filter(|v| !keep_now.contains(v))
                .collect();
            let dedup = repeats || !distinct::determined(&dropped, &keep_now, &deps);
            if dedup && (repeats || !dropped.is_empty()) {
                what.push_str(" +dedup");
            }
            rel = rel.into_projection(&keep_now, dedup, &self.budget)?;
            // Postponed clauses run now, or were taken into this step's merge scan.
            postponed.retain(|c| todo.contains(c));
            self.elements_then(&todo, &deps, &postponed, &rel.vars);
            self.budget
                .settle(base, rows_bytes(rel.rows.len(), rel.vars.len()));
            if self.trace.is_some() {
                let index = self.shown_index(&clause, index)?;
                if let Some(trace) = &mut self.trace {
                    trace.push(Step {
                        what,
                        index,
                        estimated: est,
                        actual: rel.rows.len() as u64,
                    });
                }
            }
        }
        rel.project_owned(keep, &self.budget)
    }

    /// The index `explain` names for a step that read `index` for `clause`: `AEV` where
    /// the pattern's attribute has no AVE entries (`store::value_index`).
    fn shown_index(&mut self, clause: &Clause, index: PlanIndex) -> Result<PlanIndex, QueryError> {
        if let (PlanIndex::Ave | PlanIndex::AttrScan, Clause::Pattern(src, p)) = (index, clause) {
            if let AttrTerm::Attr(a) = p.a {
                self.enter(*src);
                if self.r.is_listed(a)? {
                    return Ok(PlanIndex::Aev);
                }
            }
        }
        Ok(index)
    }

    /// Whether clause `c` joins the merge scan of the patterns of source `src` on the bound
    /// entity `e`: a pattern of that source, on that entity, of a known attribute.
    pub(super) fn joins_star(&self, src: usize, e: &Term, c: &Clause) -> bool {
        matches!(c, Clause::Pattern(s, q)
            if self.source_of(*s) == src && q.e == *e && matches!(q.a, AttrTerm::Attr(_)))
    }

    /// The attribute of a pattern answered by an existence check (`holders_exist`): alone,
    /// on an entity not bound yet that nothing after it reads (`keep` and the clauses still
    /// `todo`), with a known value.
    fn existence_probe(
        &self,
        star: &[crate::query::ir::Pattern],
        rel: &Relation,
        todo: &[Clause],
        keep: &[Var],
    ) -> Option<AttrId> {
        let [p] = star else { return None };
        let AttrTerm::Attr(a) = p.a else { return None };
        let unread = |e: Var| {
            !rel.binds(e) && !keep.contains(&e) && todo.iter().all(|c| !c.vars().contains(&e))
        };
        let entity_unread = match &p.e {
            Term::Var(e) => unread(*e) && p.v != p.e,
            Term::Blank => true,
            Term::Const(_) => false,
        };
        let value_known = match &p.v {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        (entity_unread && value_known).then_some(a)
    }

    /// Picks the next clause: the cheapest ready one, preferring clauses connected to what is
    /// already bound; the first of a large conjunction by looking ahead (`lookahead`).
    pub(super) fn choose(
        &mut self,
        todo: &[Clause],
        rel: &Relation,
        waiting: &[Clause],
    ) -> Result<(usize, u64), QueryError> {
        let n = rel.rows.len() as u64;
        let connected = |c: &Clause| c.vars().iter().any(|v| rel.binds(*v));
        // Postponed clauses wait while another can run.
        let free = todo
            .iter()
            .any(|c| !waiting.contains(c) && self.ready(c, rel));
        let eligible = |c: &Clause| self.ready(c, rel) && !(free && waiting.contains(c));
        let any_connected =
            !rel.vars.is_empty() && todo.iter().any(|c| connected(c) && eligible(c));
        let candidates: Vec<usize> = (0..todo.len())
            .filter(|&i| eligible(&todo[i]) && (!any_connected || connected(&todo[i])))
            .collect();
        // One candidate needs no estimate (an estimate can cost as much as the step), unless
        // `explain` wants to show it.
        if let ([only], None) = (candidates.as_slice(), &self.trace) {
            return Ok((*only, 0));
        }
        // (clause, score, estimate): the score is the rows once the variables the clause
        // binds have met the other patterns on them (`neighborhood`), so that a small start
        // that must then join a large one does not win over a larger start that stays small.
        let mut best: Option<(usize, u64, u64)> = None;
        let several = candidates.len() > 1;
        let lookahead = several && self.looks_ahead(todo, rel);
        let mut scored: Vec<(u64, usize)> = Vec::new();
        for i in candidates {
            let c = &todo[i];
            // Counting past the best estimate so far cannot change the choice.
            let cap = best.map_or(COUNT_CAP, |(_, b, _)| {
                (b / n.max(1)).saturating_add(1).min(COUNT_CAP)
            });
            let est = self.estimate(c, rel, n, cap, todo)?;
            let score = if several {
                self.neighborhood(c, i, rel, est, todo)?
            } else {
                est
            };
            if lookahead {
                scored.push((score, i));
            }
            if best.is_none_or(|(_, b, _)| score < b) {
                best = Some((i, score, est));
            }
        }
        if lookahead {
            scored.sort_unstable();
            let starts: Vec<usize> = scored.iter().map(|&(_, i)| i).collect();
            if let Some(s) = self.start_by_lookahead(todo, rel, &starts)? {
                if best.is_some_and(|(b, _, _)| b != s) {
                    let est = self.estimate(&todo[s], rel, n, COUNT_CAP, todo)?;
                    best = Some((s, 0, est));
                }
            }
        }
        match best {
            Some((i, _, est)) => Ok((i, est)),
            None => {
                // Nothing is ready: the first clause that needs a binding it cannot get.
                let c = &todo[0];
                let var = c.vars().into_iter().find(|v| !rel.binds(*v)).unwrap_or(0);
                Err(QueryError::Unbound {
                    var: self.show().var(var),
                    clause: self.show().clause(c),
                })
            }
        }
    }

    pub(super) fn ready(&self, c: &Clause, rel: &Relation) -> bool {
        let bound = |t: &Term| !matches!(t, Term::Var(v) if !rel.binds(*v));
        match c {
            Clause::Pred { args, .. } => args.iter().all(bound),
            Clause::Fn { args, .. } => args.iter().all(bound),
            Clause::Not { vars, .. } => vars.iter().all(|v| rel.binds(*v)),
            // An `or` of tests and functions reads its variables: it waits for them (the
            // functions bind the rest).
            Clause::Or { vars, .. } if is_rowwise(c) => rowwise_inputs(c)
                .iter()
                .all(|v| !vars.contains(v) || rel.binds(*v)),
            Clause::Or { required, .. } => required.iter().all(|v| rel.binds(*v)),
            // A rule whose head starts with required variables (`[(r [?a] ?b) ...]`) waits
            // for the call's arguments there, as Datomic waits for them: a call that no
            // clause ever binds them for is refused when nothing else is left to run.
            Clause::Rule { name, args, src } => {
                let target = self.source_of(*src);
                let rules = if target == self.dollar {
                    Some(self.rules)
                } else {
                    self.source_rules.get(&target)
                };
                let required = rules
                    .and_then(|r| r.get(name))
                    .and_then(|bodies| bodies.iter().map(|b| b.required).max())
                    .unwrap_or(0);
                args.iter().take(required).all(bound)
            }
            Clause::Dollar { clause, .. } => self.ready(clause, rel),
            _ => true,
        }
    }

    /// How many entities have `a` = `v`: a list of at most `cap` is read and kept for the
    /// step that then runs the pattern ([`Self::entities_with`]); a longer one is not read,
    /// LMDB counts it (O(1)).
    pub(super) fn count_entities_with(
        &self,
        a: AttrId,
        v: &Value,
        cap: u64,
    ) -> Result<u64, QueryError> {
        let v = coerce(self.schema, a, v);
        if let Some(l) = self.ave_lists.borrow().get(&(a, v.clone())) {
            return Ok(l.len() as u64);
        }
        if self.r.is_listed(a)? {
            // No AVE entries (`store::value_index`): counting walks the attribute whatever
            // the cap, so the whole list is kept for the step, which then walks it no more.
            let l = self.r.entities_with(a, &v)?;
            let n = l.len() as u64;
            self.ave_lists
                .borrow_mut()
                .insert((a, v), std::rc::Rc::new(l));
            return Ok(n);
        }
        Ok(match self.r.entities_with_at_most(a, &v, cap.max(1))? {
            Some(l) => {
                let n = l.len() as u64;
                self.ave_lists
                    .borrow_mut()
                    .insert((a, v), std::rc::Rc::new(l));
                n
            }
            None => self.r.entities_with_count(a, &v)?,
        })
    }

    /// The entities whose `a` is `v` (an already coerced constant), ascending.
    pub(super) fn entities_with(
        &self,
        a: AttrId,
        v: &Value,
    ) -> Result<std::rc::Rc<Vec<EntityId>>, QueryError> {
        if let Some(l) = self.ave_lists.borrow().get(&(a, v.clone())) {
            return Ok(l.clone());
        }
        Ok(std::rc::Rc::new(self.r.entities_with(a, v)?))
    }
}

/// Room a row made by the step running `clause` on `rel` keeps for the columns later clauses
/// (`todo`) bind: rows grown one column at a time by a scan, a merge scan and then a function
/// per step moved each time they outgrew their capacity (TPC-H Q1 at SF 0.1: growing the rows
/// of ~600,000 line items was ~15% of its samples). At least `ROW_SPARE` while clauses remain,
/// at most `ROW_SPARE_MAX`, none for the last step.
fn row_spare(rel: &Relation, clause: &Clause, todo: &[Clause]) -> usize {
    if todo.is_empty() {
        return 0;
    }
    let now = clause.vars();
    let mut later: Vec<Var> = Vec::new();
    for v in todo.iter().flat_map(|c| c.vars()) {
        if !rel.binds(v) && !now.contains(&v) && !later.contains(&v) {
            later.push(v);
        }
    }
    later.len().clamp(ROW_SPARE, ROW_SPARE_MAX)
}
