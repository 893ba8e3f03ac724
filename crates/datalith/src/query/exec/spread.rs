//! A conjunction's remaining steps run on several threads at once, each on a part of the rows.
//!
//! A step's relation that is large (at least [`Spread::from_rows`] rows) is cut into one part
//! per thread; every part runs the clauses still to run, on its own thread, choosing its own
//! steps from its own rows, and the answers are put together. Joins distribute over a union
//! of their inputs (`(A ∪ B) ⋈ C = (A ⋈ C) ∪ (B ⋈ C)`), and so do tests and functions, so the
//! answer is the one the whole relation gives; each part's answer is a set, and the union is
//! deduplicated unless no two parts can make one row (`needs_dedup`).
//!
//! Each helper thread reads through its own clone of the database values, which share their
//! snapshot: concurrent reads of one LMDB read transaction are safe once its tables are
//! refreshed (`kv::Snapshot::prepare_share`, which the clone does). A helper has a budget of
//! its own (`Budget::fork`: the query's deadline and cancellation flag, a share of the memory
//! left, and a flag the other parts set when they stop), so an error or a stop in any part
//! stops them all; the first error is the answer's.
//!
//! Not spread: `explain` (its steps are one thread's), rule bodies (their memo is one
//! thread's), queries that read the log, and queries with large input relations (each part
//! would copy them).

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::db::Db;
use crate::query::budget::RunScope;
use crate::query::distinct::{self, Dependency};
use crate::query::error::QueryError;
use crate::query::ir::{Clause, Var};
use crate::query::relation::Relation;

/// Rows of a step from which the rest of its conjunction is spread: below it, starting a
/// thread and putting the answers together costs about what the second core saves.
pub const SPREAD_FROM_ROWS: usize = 16 * 1024;

/// The share of [`Spread::from_rows`] from which the rest is spread when a remaining pattern
/// looks each row up sparsely (`SPARSE_LOOKUPS`: its entity in EAV, or its value's entities
/// in AVE; TPC-H Q4's 5,552 orders each find their line items): each lookup is then a
/// B-tree descent to a cold page (about a microsecond here), so 2,048 rows of them are
/// milliseconds of work where a thread starts in tens of microseconds, and two threads wait
/// for memory at once (TPC-H Q8 at SF 0.1, 4,485 of 600,000 line items looked up: 11.7 and
/// 8.03 -> 6.83 and 4.31 ms in two runs of the harness).
pub const LOOKUP_SPREAD_SHARE: usize = 8;

/// Lookups are sparse when the rows are at most one in this many of the attribute's datoms: most
/// then descend to a leaf page no other lookup of theirs reads (TPC-H Q11 at SF 0.1, 4,000 of
/// 80,000 partsupp entities: spread, four rounds' fastest runs 2.2-3.4 ms against 3.8-4.7 ms
/// on one thread). Denser rows share pages, and a star over them soon scans instead.
pub const SPARSE_LOOKUPS: u64 = 8;

/// Rows of input relations (all of them) up to which a query is still spread: each part
/// takes a copy of them.
const SPREAD_MAX_SOURCE_ROWS: usize = 64 * 1024;

/// How a spread relation is cut into parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// In the rows' order.
    AsTheyCome,
    /// Sorted by the entity in this column first, so that each part looks up a run of ids of
    /// its own: its lookups then share leaf pages as often as one thread's would (cut as they
    /// come, each part's ids would be half as dense over the same span).
    ByEntity(usize),
    /// Sorted by the value in this column first, for AVE lookups of each value (as
    /// `ByEntity`; a pattern that finds the entities of each row's value looks them up in
    /// value order).
    ByValue(usize),
}

/// What spreading a query's conjunction needs: its databases, to clone for the helpers.
pub struct Spread<'a> {
    /// The databases, by source number.
    pub dbs: Vec<(usize, &'a Db)>,
    /// Threads a query may use, its own included (at least 2, or it is not spread).
    pub threads: usize,
    /// Rows of a step from which the rest is spread ([`SPREAD_FROM_ROWS`]; tests lower it).
    pub from_rows: usize,
}

impl<'a> Ctx<'a> {
    /// Whether the clauses `todo` left on `rel` are run spread over threads, and how the
    /// rows are cut into parts.
    pub(super) fn spreads(&self, rel: &Relation, todo: &[Clause]) -> Option<Cut> {
        let spread = self.spread.as_ref()?;
        let rows = rel.rows.len();
        let looked_up = if rows >= (spread.from_rows / LOOKUP_SPREAD_SHARE).max(2) {
            self.sparse_lookups(rel, todo)
        } else {
            None
        };
        let large = rows >= spread.from_rows.max(2) || looked_up.is_some();
        let spreads = spread.threads >= 2
            && large
            && self.trace.is_none()
            && self.depth == 0
            && self.log.is_none()
            && todo.iter().any(|c| !is_filter(c))
            && self.sources.values().map(|r| r.rows.len()).sum::<usize>() <= SPREAD_MAX_SOURCE_ROWS;
        spreads.then(|| looked_up.unwrap_or(Cut::AsTheyCome))
    }

    /// How to cut the rows when a pattern of `todo` (on the active database) will look each
    /// row up sparsely (rows under `1 / SPARSE_LOOKUPS` of the attribute's datoms, so that most
    /// lookups descend to a page of their own): by the entity the rows bind when the star on
    /// it reads EAV (scanning its attributes whole would cost more, `star::lookups_win`, the
    /// star's own test), or by the value the rows bind when a pattern finds its entities in
    /// AVE (one lookup per distinct value, e.g. the line items of each order).
    fn sparse_lookups(&self, rel: &Relation, todo: &[Clause]) -> Option<Cut> {
        let rows = rel.rows.len();
        let sparse = |datoms: u64| (rows as u64).saturating_mul(SPARSE_LOOKUPS) <= datoms;
        // Per entity: what scanning its attributes costs, and the most datoms of one.
        let mut scans: Vec<(Var, u64, u64)> = Vec::new();
        let mut by_value = None;
        for c in todo {
            let Clause::Pattern(src, p) = c else { continue };
            let crate::query::ir::AttrTerm::Attr(a) = &p.a else {
                continue;
            };
            if self.source_of(*src) != self.active {
                continue;
            }
            let Ok((datoms, distinct)) = self.stats(*a) else {
                continue;
            };
            match (p.e.var().filter(|e| rel.binds(*e)), p.v.var()) {
                (Some(e), _) => {
                    let cost = super::star::scan_cost(datoms, distinct);
                    match scans.iter_mut().find(|(v, _, _)| *v == e) {
                        Some((_, total, most)) => {
                            *total = total.saturating_add(cost);
                            *most = (*most).max(datoms);
                        }
                        None => scans.push((e, cost, datoms)),
                    }
                }
                (None, Some(v)) if p.e.var().is_some() && by_value.is_none() && sparse(datoms) => {
                    by_value = rel.col(v).map(Cut::ByValue);
                }
                _ => {}
            }
        }
        scans
            .iter()
            .find(|(_, cost, most)| super::star::lookups_win(rows, *cost) && sparse(*most))
            .and_then(|(e, _, _)| rel.col(*e))
            .map(Cut::ByEntity)
            .or(by_value)
    }

    /// Runs the clauses `todo` on `rel` in parts, one per thread (see the module); the
    /// answer is the one [`Ctx::run_steps`] gives on the whole of `rel`.
    pub(super) fn spread_steps(
        &mut self,
        cut: Cut,
        todo: Vec<Clause>,
        mut rel: Relation,
        keep: &[Var],
        deps: Vec<Dependency>,
        postponed: Vec<Clause>,
    ) -> Result<Relation, QueryError> {
        let spread = self.spread.take().expect("spreads() checked");
        match cut {
            Cut::AsTheyCome => {}
            Cut::ByEntity(c) => crate::query::relation::sort_rows_by_key(&mut rel.rows, |row| {
                entity_of(&row[c]).unwrap_or(0)
            }),
            Cut::ByValue(c) => crate::query::relation::sort_rows_by_column(&mut rel.rows, c),
        }
        let out = self.spread_parts(&spread, todo, rel, keep, deps, postponed);
        self.spread = Some(spread);
        out
    }

    fn spread_parts(
        &mut self,
        spread: &Spread<'a>,
        todo: Vec<Clause>,
        mut rel: Relation,
        keep: &[Var],
        deps: Vec<Dependency>,
        postponed: Vec<Clause>,
    ) -> Result<Relation, QueryError> {
        let dedup = needs_dedup(&rel.vars, keep, &deps);
        let parts = spread.threads.min(rel.rows.len());
        let size = rel.rows.len().div_ceil(parts);
        let mut theirs: Vec<Vec<Vec<crate::codec::Value>>> = Vec::with_capacity(parts - 1);
        while rel.rows.len() > size {
            let at = rel.rows.len().saturating_sub(size).max(size);
            theirs.push(rel.rows.split_off(at));
        }
        // In the rows' order, so that the united answer is too: this thread's part first.
        theirs.reverse();
        let vars = rel.vars.clone();
        let halt = AtomicBool::new(false);
        let share = self.budget.remaining() / parts as u64;
        // Held by this thread's budget while the helpers spend their shares.
        let lent = share.saturating_mul(theirs.len() as u64);
        self.budget.charge(lent)?;
        let outcome = std::thread::scope(|scope| {
            let mut helpers = Vec::with_capacity(theirs.len());
            for rows in theirs {
                let dbs: Vec<(usize, Db)> =
                    spread.dbs.iter().map(|(n, d)| (*n, (*d).clone())).collect();
                let part = Part {
                    todo: todo.clone(),
                    rel: Relation {
                        vars: vars.clone(),
                        rows,
                    },
                    keep: keep.to_vec(),
                    deps: deps.clone(),
                    postponed: postponed.clone(),
                    sources: self.sources.clone(),
                    dollar: self.dollar,
                    active: self.active,
                    rules: self.rules,
                    source_rules: self.source_rules,
                    functions: self.functions,
                    var_names: self.var_names.clone(),
                    row_spare: self.row_spare,
                };
                let budget = self.budget.fork(share, &halt);
                let halt = &halt;
                helpers.push(scope.spawn(move || {
                    let out = part.run(&dbs, budget);
                    if out.is_err() {
                        halt.store(true, Ordering::Relaxed);
                    }
                    out
                }));
            }
            // This thread's part, with nothing spread further.
            let mine = self.run_steps(todo, rel, keep, deps, postponed);
            if mine.is_err() {
                halt.store(true, Ordering::Relaxed);
            }
            let answers: Vec<Result<Relation, QueryError>> = helpers
                .into_iter()
                // A helper's panic is the query's, as it would be on one thread.
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            (mine, answers)
        });
        self.budget.release(lent);
        let (mine, answers) = outcome;
        // The first error in part order; a part stopped by another's error says `Cancelled`.
        let mut all = mine;
        for answer in answers {
            match (&mut all, answer) {
                (Ok(union), Ok(part)) => union.union(part, &self.budget)?,
                (Ok(_), Err(e)) => all = Err(e),
                (Err(QueryError::Cancelled), Err(e)) if !matches!(e, QueryError::Cancelled) => {
                    all = Err(e)
                }
                (Err(_), _) => {}
            }
        }
        let mut union = all?;
        if dedup {
            union.dedup(&self.budget)?;
        }
        Ok(union)
    }
}

/// One part of a spread conjunction, moved to its thread.
struct Part<'a> {
    todo: Vec<Clause>,
    rel: Relation,
    keep: Vec<Var>,
    deps: Vec<Dependency>,
    postponed: Vec<Clause>,
    sources: rustc_hash::FxHashMap<usize, Relation>,
    dollar: usize,
    active: usize,
    rules: &'a std::collections::BTreeMap<String, Vec<crate::query::ir::RuleBody>>,
    source_rules: &'a std::collections::BTreeMap<
        usize,
        std::collections::BTreeMap<String, Vec<crate::query::ir::RuleBody>>,
    >,
    functions: &'a std::collections::HashMap<String, std::sync::Arc<UserFn>>,
    var_names: std::sync::Arc<[String]>,
    row_spare: usize,
}

impl Part<'_> {
    /// Runs the part through a query context of its own over `dbs`.
    fn run(
        self,
        dbs: &[(usize, Db)],
        budget: crate::query::budget::Budget<'_>,
    ) -> Result<Relation, QueryError> {
        let _run = RunScope::enter();
        let (r, schema, time) = dbs
            .iter()
            .find(|(n, _)| *n == self.active)
            .map(|(_, d)| (d.reader(), &**d.schema(), d.time_filter()))
            .expect("the active source is one of the databases");
        let mut ctx = Ctx {
            row_spare: self.row_spare,
            r,
            schema,
            time,
            log: None,
            sources: self.sources,
            dbs: dbs
                .iter()
                .map(|(n, d)| (*n, DbSource::new(d.reader(), d.schema(), d.time_filter())))
                .collect(),
            dollar: self.dollar,
            active: self.active,
            rules: self.rules,
            source_rules: self.source_rules,
            functions: self.functions,
            budget,
            trace: None,
            var_names: self.var_names,
            rule_memo: Default::default(),
            ave_lists: Default::default(),
            depth: 0,
            spread: None,
            part: None,
        };
        ctx.run_steps(self.todo, self.rel, &self.keep, self.deps, self.postponed)
    }
}

/// Whether two parts can answer one row: unless every variable of the parts' rows that the
/// answer drops is determined by ones it keeps (`distinct::determined`), two rows of
/// different parts may end alike.
fn needs_dedup(vars: &[Var], keep: &[Var], deps: &[Dependency]) -> bool {
    let dropped: Vec<Var> = vars.iter().copied().filter(|v| !keep.contains(v)).collect();
    let kept: Vec<Var> = vars.iter().copied().filter(|v| keep.contains(v)).collect();
    !dropped.is_empty() && !distinct::determined(&dropped, &kept, deps)
}
