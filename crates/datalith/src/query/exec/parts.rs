//! A conjunction answered a part at a time: when its first step scans an attribute (`[?e :a
//! ?v]` or `[_ :a ?v]`, entity and value unbound, on one input row), each run of the
//! conjunction reads only the next stretch of that attribute's values (about `rows_per_part`
//! datoms, whole runs of one value); when it looks up the entities holding one value (`[?e
//! :a v]`), the next stretch of those entities (their ids read whole, 8 bytes each). The rows
//! of each run are handed on before the next one starts. The memory the answer holds is
//! then one part's, not the whole result's.
//!
//! Why the parts add up to the answer: every step after the first treats the rows it is
//! given one by one (a join, a test, a function, `not`, `or` and rules all answer a row
//! alone, and answer a union of rows with the union of their answers), so splitting the
//! first step's rows by value (or by entity) splits the result the same way. The parts share
//! no row when the kept variables tell them apart: the value variable is kept, or the entity
//! variable is kept and the attribute is cardinality one (an entity then has one value, so it
//! is in one part); for a lookup, the entity variable is kept. Otherwise the conjunction runs
//! whole. An attribute without AVE entries (`store::listed`) is read in parts of whole
//! entities, in the order of its list, so only when the entity variable is kept (its parts
//! then share no row either); with the value alone kept it runs whole (in parts of values,
//! each part would sort the whole attribute).
//!
//! Each run chooses its steps as a whole run would; the first run's first step is taken
//! first by the later ones (the same clause, read from where the previous part stopped), so
//! that no part is answered by a different plan.

use std::ops::Bound;

use crate::codec::Value;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;

use super::elements::{self, Elements};
use super::Ctx;

/// Where a first step read in parts stands (`Ctx::part`).
#[derive(Debug)]
pub struct ScanPart {
    /// The first step's pattern, once the first run found it can be read in parts.
    pattern: Option<Pattern>,
    /// Where this part starts: its first value (a scan), or its first entity's place in the
    /// value's list of entities, as a `Long` (a lookup); `None`: at the beginning.
    from: Option<Value>,
    /// Datoms a part reads before it ends (at the end of a run of one value).
    rows: usize,
    /// Whether the scan's entity variable is kept: parts of whole entities then share no
    /// row either (what a scan of an attribute without AVE entries reads: `scan.rs`).
    entity_kept: bool,
    stage: Stage,
    /// Where the step stopped, the next part's start (as `from`); `None` when it reached its
    /// end.
    next: Option<Value>,
    /// A first step's collection elements not yet made rows (`elements`).
    elements: Option<Elements>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The run has not chosen its first step yet.
    First,
    /// The first step is the pattern, and its scan is to read this part only.
    Armed,
    /// The scan read this part.
    Read,
    /// The run is whole: its first step cannot be read in parts.
    Whole,
    /// The first step is a function whose collection is to be made rows a part at a time
    /// (`elements`).
    ElementsArmed,
    /// The function's first part was made; the other elements wait in `elements`.
    ElementsMade,
}

impl ScanPart {
    fn new(rows: usize) -> ScanPart {
        ScanPart {
            pattern: None,
            from: None,
            rows: rows.max(1),
            entity_kept: false,
            stage: Stage::First,
            next: None,
            elements: None,
        }
    }
}

/// What an armed scan reads: from where, and how many datoms before it may stop.
pub(super) struct PartBounds {
    pub from: Bound<Value>,
    pub rows: usize,
    /// The entity variable is kept: a part may end at an entity instead of at a value.
    pub entity_kept: bool,
}

impl<'a> Ctx<'a> {
    /// Evaluates a conjunction on `input` as `conj` does, handing its rows to `emit` a part
    /// at a time when its first step can be read in parts (see the module), else whole once.
    pub fn conj_in_parts(
        &mut self,
        clauses: &[Clause],
        input: Relation,
        keep: &[Var],
        rows_per_part: usize,
        emit: &mut dyn FnMut(Relation) -> Result<(), QueryError>,
    ) -> Result<(), QueryError> {
        if self.trace.is_none()
            && input.rows.len() > rows_per_part
            && input.vars.iter().all(|v| keep.contains(v))
        {
            return self.input_in_parts(clauses, input, keep, rows_per_part, emit);
        }
        if input.rows.len() != 1 || self.trace.is_some() {
            return emit(self.conj(clauses, input, keep)?);
        }
        // An `or` of tests answered one plan per branch runs as `conj` runs it, whole.
        if let Some(whole) = self.distributed(clauses, &input, keep)? {
            return emit(whole);
        }
        let mut todo: Vec<Clause> = clauses.to_vec();
        // The order `conj` runs them in (its choice of ties depends on it).
        todo.sort();
        let base = self.budget.used();
        let mut part = ScanPart::new(rows_per_part);
        for run in 0u64.. {
            self.part = Some(part);
            let out = self.run_steps(todo.clone(), input.clone(), keep, Vec::new(), Vec::new());
            part = self.part.take().expect("a run keeps its part");
            let out = out?;
            if part.stage == Stage::ElementsMade {
                return self.elements_in_parts(part, out, keep, base, emit);
            }
            if part.stage != Stage::Read {
                // A later run takes the first run's first step, from the same rows, the
                // same way: were it answered whole, the parts handed on would come twice.
                assert_eq!(run, 0, "a query read in parts changed its first step");
                return emit(out);
            }
            self.hand_on(out, base, 0, emit)?;
            match part.next.take() {
                Some(next) => {
                    part.from = Some(next);
                    part.stage = Stage::First;
                }
                None => break,
            }
        }
        Ok(())
    }

    /// The index in `todo` of the clause a run's first step must be (the first run's), when
    /// this run is a later part's.
    pub(super) fn part_first_step(&self, todo: &[Clause]) -> Option<usize> {
        let part = self.part.as_ref()?;
        let pattern = part
            .pattern
            .as_ref()
            .filter(|_| part.stage == Stage::First)?;
        todo.iter()
            .position(|c| matches!(c, Clause::Pattern(_, p) if p == pattern))
    }

    /// Called with the clause a run chose first: arms the part's scan when the clause can
    /// be read in parts; otherwise the run is whole. Later steps leave the part alone.
    pub(super) fn part_chosen(&mut self, clause: &Clause, rel: &Relation, keep: &[Var]) {
        let Some(stage) = self.part.as_ref().map(|p| p.stage) else {
            return;
        };
        if stage != Stage::First {
            return;
        }
        let fits = self.parts_fit(clause, rel, keep);
        let part = self.part.as_mut().expect("checked above");
        if elements::fits(clause, rel, keep) {
            part.stage = Stage::ElementsArmed;
            return;
        }
        part.stage = Stage::Whole;
        if let (Some((p, entity_kept)), Clause::Pattern(_, chosen)) = (fits, clause) {
            if part.pattern.as_ref().is_none_or(|first| first == chosen) {
                part.pattern = Some(p);
                part.entity_kept = entity_kept;
                part.stage = Stage::Armed;
            }
        }
    }

    /// Ends a run's first step: a scan armed but not read (the step took another way) leaves
    /// the run whole.
    pub(super) fn part_step_done(&mut self) {
        if let Some(part) = self.part.as_mut() {
            if matches!(
                part.stage,
                Stage::First | Stage::Armed | Stage::ElementsArmed
            ) {
                part.stage = Stage::Whole;
            }
        }
    }

    /// The pattern of `clause` when its scan may be read in parts (see the module), and
    /// whether its entity variable is kept.
    fn parts_fit(&self, clause: &Clause, rel: &Relation, keep: &[Var]) -> Option<(Pattern, bool)> {
        let Clause::Pattern(src, p) = clause else {
            return None;
        };
        if !self.reads_db(*src) || !self.is_current(*src) || rel.rows.len() != 1 {
            return None;
        }
        let AttrTerm::Attr(a) = &p.a else {
            return None;
        };
        // The entity: an unbound variable (other than the value's), or `_`.
        let e = match &p.e {
            Term::Var(e) if !rel.binds(*e) && p.v != Term::Var(*e) => Some(*e),
            Term::Blank => None,
            _ => return None,
        };
        let entity_kept = e.is_some_and(|e| keep.contains(&e));
        match &p.v {
            // A scan of the attribute, in parts of its values.
            Term::Var(v) if !rel.binds(*v) => {
                let db = self.dbs.get(&self.source_of(*src))?;
                let one = db.schema().get(*a).is_some_and(|x| !x.is_many());
                // An attribute without AVE entries is read in parts of whole entities
                // (`scan.rs`), which the entity must tell apart; in parts of values, every
                // part would sort the whole attribute again: whole, it is sorted once.
                if !entity_kept && db.reader().is_listed(*a).unwrap_or(false) {
                    return None;
                }
                (keep.contains(v) || (entity_kept && one)).then(|| (p.clone(), entity_kept))
            }
            // The entities holding one value, in parts of them.
            Term::Const(_) => entity_kept.then(|| (p.clone(), entity_kept)),
            _ => None,
        }
    }

    /// The bounds of the scan of `p`, when it is this run's armed part (taken once).
    pub(super) fn part_bounds(&mut self, p: &Pattern) -> Option<PartBounds> {
        let part = self.part.as_mut()?;
        if part.stage != Stage::Armed || part.pattern.as_ref() != Some(p) {
            return None;
        }
        part.stage = Stage::Read;
        Some(PartBounds {
            from: part.from.clone().map_or(Bound::Unbounded, Bound::Included),
            rows: part.rows,
            entity_kept: part.entity_kept,
        })
    }

    /// Records where the part's step stopped: before `next`, or at its end.
    pub(super) fn part_read(&mut self, next: Option<Value>) {
        if let Some(part) = self.part.as_mut() {
            part.next = next;
        }
    }

    /// The rows a first step's function makes now when its collection is to be made rows a
    /// part at a time: `Some(n)`, the part's elements (see `elements`).
    pub(super) fn elements_wanted(&self) -> Option<usize> {
        let part = self.part.as_ref()?;
        (part.stage == Stage::ElementsArmed).then_some(part.rows)
    }

    /// Keeps the elements the first step's function did not make rows.
    pub(super) fn elements_kept(&mut self, waiting: Elements) {
        let part = self
            .part
            .as_mut()
            .expect("elements are wanted only with a part");
        assert_eq!(part.stage, Stage::ElementsArmed);
        part.stage = Stage::ElementsMade;
        part.elements = Some(waiting);
    }

    /// Whether a run's first step is a function whose elements are made rows a part at a
    /// time (its tests and functions then run as later steps, not chained to it).
    pub(super) fn elements_armed(&self) -> bool {
        self.part
            .as_ref()
            .is_some_and(|p| p.stage == Stage::ElementsArmed)
    }

    /// Called at the end of each step of a run: after the first, when its function kept
    /// elements, keeps what the run has left to do for the later parts.
    pub(super) fn elements_then(
        &mut self,
        todo: &[Clause],
        deps: &[crate::query::distinct::Dependency],
        postponed: &[Clause],
        vars: &[Var],
    ) {
        if let Some(waiting) = self.part.as_mut().and_then(|p| p.elements.as_mut()) {
            waiting.keep_then(todo, deps, postponed, vars);
        }
    }

    /// Hands a part's rows to `emit`, then counts as held only `base` (what the query held
    /// before its parts) and `held` (what waits for the later parts): what the handed-on rows
    /// held is let go. The time the caller takes with the items is not the query's (a server
    /// writing them waits for its client).
    fn hand_on(
        &mut self,
        out: Relation,
        base: u64,
        held: u64,
        emit: &mut dyn FnMut(Relation) -> Result<(), QueryError>,
    ) -> Result<(), QueryError> {
        let handing = std::time::Instant::now();
        emit(out)?;
        self.budget.postpone(handing.elapsed());
        self.budget.settle(base, held);
        Ok(())
    }

    /// Answers the conjunction on `rows_per_part` input rows at a time (an input of many
    /// rows: `:in $ [?x ...]`), each part's rows handed on before the next. Every clause
    /// answers each input row alone, so the parts add up to the answer; the input's
    /// variables are kept and its rows are distinct (`run::answer` deduplicates them), so
    /// no two parts share a row.
    fn input_in_parts(
        &mut self,
        clauses: &[Clause],
        mut input: Relation,
        keep: &[Var],
        rows_per_part: usize,
        emit: &mut dyn FnMut(Relation) -> Result<(), QueryError>,
    ) -> Result<(), QueryError> {
        let base = self.budget.used();
        let vars = std::mem::take(&mut input.vars);
        let mut rows = std::mem::take(&mut input.rows).into_iter();
        loop {
            let part: Vec<Vec<Value>> = rows.by_ref().take(rows_per_part.max(1)).collect();
            if part.is_empty() {
                return Ok(());
            }
            let out = self.conj(
                clauses,
                Relation {
                    vars: vars.clone(),
                    rows: part,
                },
                keep,
            )?;
            self.hand_on(out, base, 0, emit)?;
        }
    }

    /// Hands on the first part's rows, then makes and answers the later parts one by one.
    fn elements_in_parts(
        &mut self,
        mut part: ScanPart,
        first: Relation,
        keep: &[Var],
        base: u64,
        emit: &mut dyn FnMut(Relation) -> Result<(), QueryError>,
    ) -> Result<(), QueryError> {
        let mut waiting = part
            .elements
            .take()
            .expect("a function's first part keeps its elements");
        let mut out = first;
        loop {
            // The waiting elements stay held.
            self.hand_on(out, base, waiting.waiting_bytes(), emit)?;
            let Some((rel, then)) = waiting.next_part(part.rows, &self.budget)? else {
                return Ok(());
            };
            out = self.run_steps(then.todo, rel, keep, then.deps, then.postponed)?;
        }
    }
}
