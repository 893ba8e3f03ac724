//! Executing a lowered query: a conjunction of clauses is evaluated by repeatedly choosing the
//! cheapest clause that can run next (estimated from the indexes and the current bindings),
//! so the order of clauses in the query text never changes the plan. Clauses on one bound
//! entity run as one merge scan of its EAV entry; single-variable comparisons narrow AVE range
//! scans; variables nobody needs any more are projected away (with deduplication) after
//! every step.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::ops::Bound;

use super::budget::{row_bytes, rows_bytes, Budget};
use super::builtins::{self, compare};
use super::distinct;
use super::error::QueryError;
use super::ir::{AttrTerm, Binding, Clause, Pattern, RuleBody, Term, Var};
use super::relation::Relation;
use super::rules;
use super::show::ClauseText;
use crate::codec::{Keyword, Value};
use crate::kv::Direction;
use crate::store::reader::IndexReader;
use crate::store::schema::Schema;
use crate::store::{AttrId, EntityId};

/// A user function callable from queries.
pub type UserFn = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// AVE entity lists by attribute and value.
type AveLists = std::cell::RefCell<HashMap<(AttrId, Value), std::rc::Rc<Vec<EntityId>>>>;

/// A database a query reads, by source number.
pub struct DbSource<'a> {
    r: IndexReader<'a>,
    schema: &'a Schema,
    /// Its AVE lists while another database is the active one.
    ave_lists: AveLists,
}

impl<'a> DbSource<'a> {
    /// A database with its reader and schema.
    pub fn new(r: IndexReader<'a>, schema: &'a Schema) -> DbSource<'a> {
        DbSource {
            r,
            schema,
            ave_lists: Default::default(),
        }
    }
}

/// What a running query needs.
pub struct Ctx<'a> {
    /// Index access to the active database (`active`).
    pub r: IndexReader<'a>,
    /// Schema of the active database.
    pub schema: &'a Schema,
    /// Input relations for sources that are not databases (by source number).
    pub sources: HashMap<usize, Relation>,
    /// The databases, by source number (`$` is 0).
    pub dbs: HashMap<usize, DbSource<'a>>,
    /// The source `$` (source 0) stands for: 0, or `$x` inside a rule called as
    /// `($x rule ...)`.
    pub dollar: usize,
    /// The database `r`, `schema` and `ave_lists` belong to.
    pub active: usize,
    /// Rules by name, for the current `$`.
    pub rules: &'a BTreeMap<String, Vec<RuleBody>>,
    /// Rules by name, for each source a rule may read as its `$`.
    pub source_rules: &'a BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>,
    /// User functions.
    pub functions: &'a std::collections::HashMap<String, std::sync::Arc<UserFn>>,
    /// What the query may spend (time, cancellation, memory); every loop ticks it.
    pub budget: Budget<'a>,
    /// Plan steps, when explaining.
    pub trace: Option<Vec<Step>>,
    /// Variable names of the clauses being run (the query's, or a rule body's while it
    /// runs), to print steps and errors in query terms.
    pub var_names: std::sync::Arc<[String]>,
    /// Rule evaluation memo (rule name + bound pattern -> relation).
    pub rule_memo: HashMap<String, Relation>,
    /// AVE entity lists of the active database read while estimating, by attribute and
    /// value, for the step that then runs the pattern (this query only).
    pub ave_lists: AveLists,
    /// Nesting depth of rule evaluation (a recursion guard for non-stratifiable input).
    pub depth: u32,
    /// Spare capacity of the rows the current step makes: `ROW_SPARE` while clauses remain
    /// that may extend them, 0 for the last step (rows that only go to the result).
    pub row_spare: usize,
}

/// One executed step, for `explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What ran, in query terms: the clause as written (`[?e :person/name ?n]`); several
    /// patterns on one entity read together as `merge scan [...] [...]`, and a pattern
    /// answered as a semijoin as `values held [...]`.
    pub what: String,
    /// Estimated rows after the step.
    pub estimated: u64,
    /// Actual rows after the step.
    pub actual: u64,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}  (estimated {}, actual {})",
            self.what, self.estimated, self.actual
        )
    }
}

/// Distinct values an attribute may have for lookups to reuse its decoded values.
const DECODE_CACHE_VALUES: usize = 32;

/// The decoded value of `vb` (attribute `a`), from `cache` when decoded before; the cache
/// keeps at most `DECODE_CACHE_VALUES` entries.
fn cached_decode<'a>(
    cache: &mut Vec<(AttrId, &'a [u8], Value)>,
    r: IndexReader<'a>,
    a: AttrId,
    vb: &'a [u8],
) -> Result<Value, crate::store::StoreError> {
    if let Some((_, _, v)) = cache.iter().find(|(ca, cb, _)| *ca == a && *cb == vb) {
        return Ok(v.clone());
    }
    let v = r.decode_value(a, vb)?;
    if cache.len() < DECODE_CACHE_VALUES {
        cache.push((a, vb, v.clone()));
    }
    Ok(v)
}

/// A scan of an attribute's whole AVE range costs about as much as this many B-tree lookups
/// per row would save: above that share of the attribute's entities, scan and hash-join.
const SCAN_JOIN_FACTOR: u64 = 20;

/// Spare capacity of a new row: room for the columns later steps usually add, so that
/// extending a row rarely moves it.
pub(crate) const ROW_SPARE: usize = 2;

/// Cap on duplicate counts when estimating: an estimate needs no more.
const COUNT_CAP: u64 = 10_000;

impl<'a> Ctx<'a> {
    /// The source a clause's source number reads (`$` is whatever it stands for now).
    pub fn source_of(&self, src: usize) -> usize {
        if src == 0 {
            self.dollar
        } else {
            src
        }
    }

    /// Whether source `src` of a clause is a database.
    fn reads_db(&self, src: usize) -> bool {
        self.dbs.contains_key(&self.source_of(src))
    }

    /// Makes the database of clause source `src` the active one (`r`, `schema` and
    /// `ave_lists` read it); nothing when it is not a database.
    fn enter(&mut self, src: usize) {
        let src = self.source_of(src);
        if src == self.active || !self.dbs.contains_key(&src) {
            return;
        }
        // The active database's lists go back to it; the next one's come out.
        if let Some(cur) = self.dbs.get_mut(&self.active) {
            std::mem::swap(cur.ave_lists.get_mut(), self.ave_lists.get_mut());
        }
        let next = self.dbs.get_mut(&src).expect("checked");
        std::mem::swap(next.ave_lists.get_mut(), self.ave_lists.get_mut());
        self.r = next.r;
        self.schema = next.schema;
        self.active = src;
    }

    fn stats(&self, a: AttrId) -> Result<(u64, u64), QueryError> {
        let s = self.r.stats(a)?;
        Ok((s.datoms, s.distinct.max(1)))
    }

    fn is_many(&self, a: AttrId) -> bool {
        self.schema.get(a).is_some_and(|x| x.is_many())
    }

    /// Evaluates a conjunction on top of `input`, keeping the variables in `keep` (plus any
    /// the clauses bind that `keep` names).
    pub fn conj(
        &mut self,
        clauses: &[Clause],
        input: Relation,
        keep: &[Var],
    ) -> Result<Relation, QueryError> {
        let mut rel = input;
        let mut todo: Vec<Clause> = clauses.to_vec();
        // Canonical order: a tie between equally cheap clauses never depends on query order.
        todo.sort();
        // What the patterns run so far tell about the rows (see `distinct`).
        let mut deps: Vec<distinct::Dependency> = Vec::new();
        // What the enclosing steps hold (their relations stay alive while this one runs).
        let base = self.budget.used();
        while !todo.is_empty() {
            // Once a step: a step can take long, and there are few.
            self.budget.check()?;
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
            let (i, est) = self.choose(&todo, &rel)?;
            let clause = todo.remove(i);
            self.row_spare = if todo.is_empty() { 0 } else { ROW_SPARE };
            // Printed only for `explain`: most queries never show their steps.
            let mut what = match self.trace {
                Some(_) => self.show().clause(&clause),
                None => String::new(),
            };
            let repeats;
            rel = match &clause {
                Clause::Pattern(src, p) if self.reads_db(*src) => {
                    let src = self.source_of(*src);
                    self.enter(src);
                    // Merge scan: every other ready pattern on the same bound entity.
                    let mut star = vec![p.clone()];
                    if let Term::Var(e) = p.e {
                        if rel.binds(e) {
                            let mut j = 0;
                            while j < todo.len() {
                                match &todo[j] {
                                    Clause::Pattern(s, q)
                                        if self.source_of(*s) == src
                                            && q.e == Term::Var(e)
                                            && matches!(q.a, AttrTerm::Attr(_)) =>
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
                        what = self.show_step("merge scan", &star);
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
                        rel
                    } else if let Some(values) = self.semijoin_values(&star, &rel, &todo, keep)? {
                        what = self.show_step("values held", &star);
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
                        let mut exact: Vec<usize> = found
                            .iter()
                            .filter(|(_, _, _, exact)| *exact)
                            .map(|(i, _, _, _)| *i)
                            .collect();
                        exact.sort_unstable_by(|a, b| b.cmp(a));
                        for i in exact {
                            todo.remove(i);
                        }
                        self.patterns(&star, rel, &ranges)?
                    }
                }
                other => {
                    repeats = distinct::clause_repeats(self.schema, other);
                    self.clause(other, rel)?
                }
            };
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
            self.budget
                .settle(base, rows_bytes(rel.rows.len(), rel.vars.len()));
            if let Some(trace) = &mut self.trace {
                trace.push(Step {
                    what,
                    estimated: est,
                    actual: rel.rows.len() as u64,
                });
            }
        }
        rel.project_owned(keep, &self.budget)
    }

    /// The printer of the clauses being run.
    pub fn show(&self) -> ClauseText<'_> {
        ClauseText {
            names: &self.var_names,
            schema: self.schema,
        }
    }

    /// A step of several patterns, printed (only when explaining).
    fn show_step(&self, how: &str, patterns: &[Pattern]) -> String {
        if self.trace.is_none() {
            return String::new();
        }
        let show = self.show();
        let list: Vec<String> = patterns.iter().map(|p| show.pattern(0, p)).collect();
        format!("{how} {}", list.join(" "))
    }

    /// Runs `f` with `names` as the variable names of the clauses (a rule body's); only
    /// `explain` and errors read them.
    pub fn with_names<T>(
        &mut self,
        names: &std::sync::Arc<[String]>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let outer = std::mem::replace(&mut self.var_names, names.clone());
        let out = f(self);
        self.var_names = outer;
        out
    }

    /// Picks the next clause: the cheapest ready one, preferring clauses connected to what is
    /// already bound.
    fn choose(&mut self, todo: &[Clause], rel: &Relation) -> Result<(usize, u64), QueryError> {
        let n = rel.rows.len() as u64;
        let connected = |c: &Clause| c.vars().iter().any(|v| rel.binds(*v));
        let any_connected =
            !rel.vars.is_empty() && todo.iter().any(|c| connected(c) && self.ready(c, rel));
        let candidates: Vec<usize> = (0..todo.len())
            .filter(|&i| self.ready(&todo[i], rel) && (!any_connected || connected(&todo[i])))
            .collect();
        // One candidate needs no estimate (an estimate can cost as much as the step), unless
        // `explain` wants to show it.
        if let ([only], None) = (candidates.as_slice(), &self.trace) {
            return Ok((*only, 0));
        }
        let mut best: Option<(usize, u64)> = None;
        for i in candidates {
            let c = &todo[i];
            // Counting past the best estimate so far cannot change the choice.
            let cap = best.map_or(COUNT_CAP, |(_, b)| {
                (b / n.max(1)).saturating_add(1).min(COUNT_CAP)
            });
            let est = self.estimate(c, rel, n, cap)?;
            if best.is_none_or(|(_, b)| est < b) {
                best = Some((i, est));
            }
        }
        match best {
            Some(b) => Ok(b),
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

    fn ready(&self, c: &Clause, rel: &Relation) -> bool {
        let bound = |t: &Term| !matches!(t, Term::Var(v) if !rel.binds(*v));
        match c {
            Clause::Pred { args, .. } => args.iter().all(bound),
            Clause::Fn { args, .. } => args.iter().all(bound),
            Clause::Not { vars, .. } => vars.iter().all(|v| rel.binds(*v)),
            Clause::Or { required, .. } => required.iter().all(|v| rel.binds(*v)),
            Clause::Dollar { clause, .. } => self.ready(clause, rel),
            _ => true,
        }
    }

    /// The estimated rows after `c`; an index count stops at `cap`.
    fn estimate(
        &mut self,
        c: &Clause,
        rel: &Relation,
        n: u64,
        cap: u64,
    ) -> Result<u64, QueryError> {
        // Each pattern is estimated on its own database.
        if let Clause::Pattern(src, _) = c {
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
            Clause::Fn { .. } => n,
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
                        n.max(1) * per_entity
                    } else {
                        match &p.v {
                            Term::Const(v) => n.max(1) * self.count_entities_with(*a, v, cap)?,
                            Term::Var(v) if rel.binds(*v) => n * (datoms / distinct).max(1),
                            _ => n.max(1) * datoms.max(1),
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
            Clause::Pattern(src, _) | Clause::Source { src, .. } => {
                self.sources
                    .get(&self.source_of(*src))
                    .map_or(0, |r| r.rows.len() as u64)
                    * n.max(1)
            }
            Clause::Or { .. } => n.max(1) * 1000,
            Clause::Dollar { clause, .. } => self.estimate(clause, rel, n, cap)?,
            Clause::Rule { .. } => n.max(1) * 10_000,
        })
    }

    /// How many entities have `a` = `v`, counting at most `cap`; a complete list is kept for
    /// [`Self::entities_with`].
    fn count_entities_with(&self, a: AttrId, v: &Value, cap: u64) -> Result<u64, QueryError> {
        let v = coerce(self.schema, a, v);
        if let Some(l) = self.ave_lists.borrow().get(&(a, v.clone())) {
            return Ok((l.len() as u64).min(cap.max(1)));
        }
        Ok(match self.r.entities_with_at_most(a, &v, cap.max(1))? {
            Some(l) => {
                let n = l.len() as u64;
                self.ave_lists
                    .borrow_mut()
                    .insert((a, v), std::rc::Rc::new(l));
                n
            }
            None => cap.max(1),
        })
    }

    /// The entities whose `a` is `v` (an already coerced constant), ascending.
    fn entities_with(
        &self,
        a: AttrId,
        v: &Value,
    ) -> Result<std::rc::Rc<Vec<EntityId>>, QueryError> {
        if let Some(l) = self.ave_lists.borrow().get(&(a, v.clone())) {
            return Ok(l.clone());
        }
        Ok(std::rc::Rc::new(self.r.entities_with(a, v)?))
    }

    /// Applies a non-pattern clause.
    fn clause(&mut self, c: &Clause, rel: Relation) -> Result<Relation, QueryError> {
        // Database functions read `$`.
        if let Clause::Pred { name, .. } | Clause::Fn { name, .. } = c {
            if matches!(name.as_str(), "get-else" | "get-some" | "missing?") {
                self.enter(0);
            }
        }
        match c {
            Clause::Pred { name, args } => {
                let mut out = Relation {
                    vars: rel.vars.clone(),
                    rows: Vec::with_capacity(rel.rows.len()),
                };
                for row in rel.rows {
                    self.budget.tick()?;
                    let vals = resolve_args(args, &rel.vars, &row);
                    if builtins::truthy(self.call(name, &vals)?.as_ref()) {
                        out.rows.push(row);
                    }
                }
                Ok(out)
            }
            Clause::Fn {
                name,
                args,
                binding,
            } => {
                let mut out = Relation {
                    vars: rel.vars.clone(),
                    rows: Vec::new(),
                };
                let new_vars: Vec<Var> = binding
                    .vars()
                    .into_iter()
                    .filter(|v| !rel.binds(*v))
                    .collect();
                out.vars.extend(&new_vars);
                let bytes = row_bytes(out.vars.len());
                for row in &rel.rows {
                    self.budget.tick()?;
                    let vals = resolve_args(args, &rel.vars, row);
                    let result = match self.call(name, &vals) {
                        Ok(Some(v)) => v,
                        // A nil result binds nothing (Datomic drops the row).
                        Ok(None) => continue,
                        // get-some and friends bind nothing when there is nothing.
                        Err(QueryError::BadArguments { .. }) if name == "get-some" => continue,
                        Err(e) => return Err(e),
                    };
                    for bound in destructure(binding, result) {
                        let mut r = row.clone();
                        let mut ok = true;
                        for (v, val) in bound {
                            match rel.col(v) {
                                Some(c) => ok &= r[c] == val,
                                None => {
                                    if new_vars.contains(&v) && r.len() < out.vars.len() {
                                        r.push(val)
                                    }
                                }
                            }
                        }
                        if ok && r.len() == out.vars.len() {
                            self.budget.charge(bytes)?;
                            out.rows.push(r);
                        }
                    }
                }
                Ok(out)
            }
            Clause::Not { vars, clauses } => {
                let probe = rel.project(vars, &self.budget)?;
                let matched = self.conj(clauses, probe, vars)?;
                rel.anti_join(&matched, &self.budget)
            }
            Clause::Or { vars, branches, .. } => {
                let shared: Vec<Var> = vars.iter().copied().filter(|v| rel.binds(*v)).collect();
                let probe = rel.project(&shared, &self.budget)?;
                let mut union = Relation::empty(vars.clone());
                for b in branches {
                    let r = self.conj(b, probe.clone(), vars)?;
                    union.union(r.project(vars, &self.budget)?, &self.budget)?;
                }
                union.dedup(&self.budget)?;
                rel.join(&union, &self.budget)
            }
            Clause::Rule { name, args, src } => {
                // `($x rule ...)`: the rule's `$` is `$x` (and its rules are lowered for it).
                let target = self.source_of(*src);
                let saved = (self.dollar, self.rules);
                if target != self.dollar {
                    let all: &'a BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>> =
                        self.source_rules;
                    let Some(rules) = all.get(&target) else {
                        return Err(QueryError::UnknownRule { name: name.clone() });
                    };
                    self.dollar = target;
                    self.rules = rules;
                }
                let r = rules::call(self, name, args, &rel);
                (self.dollar, self.rules) = saved;
                rel.join(&r?, &self.budget)
            }
            Clause::Dollar { src, clause } => {
                let saved = self.dollar;
                self.dollar = self.source_of(*src);
                let out = self.clause(clause, rel);
                self.dollar = saved;
                out
            }
            Clause::Source { src, terms } => {
                let input = self
                    .sources
                    .get(&self.source_of(*src))
                    .cloned()
                    .unwrap_or_default();
                rel.join(&match_terms(&input, terms, &self.budget)?, &self.budget)
            }
            Clause::Pattern(src, p) => {
                let input = self
                    .sources
                    .get(&self.source_of(*src))
                    .cloned()
                    .unwrap_or_default();
                let terms = vec![p.e.clone(), attr_term(&p.a), p.v.clone()];
                rel.join(&match_terms(&input, &terms, &self.budget)?, &self.budget)
            }
        }
    }

    /// Calls a predicate or function (built-in, database-aware, or user-registered);
    /// `None` is nil.
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Option<Value>, QueryError> {
        match name {
            "get-else" | "get-some" | "missing?" => return self.db_fn(name, args).map(Some),
            _ => {}
        }
        if let Some(f) = self.functions.get(name) {
            self.budget.tick_weighted(super::budget::USER_CALL)?;
            return f(args).map(Some).map_err(|m| QueryError::BadArguments {
                name: name.to_string(),
                message: m,
            });
        }
        builtins::call(name, args)
    }

    fn attr_arg(&self, name: &str, v: &Value) -> Result<AttrId, QueryError> {
        match v {
            Value::Keyword(k) => {
                self.schema
                    .by_ident(k)
                    .map(|a| a.id)
                    .ok_or_else(|| QueryError::UnknownAttribute {
                        attr: k.to_string(),
                        clause: format!("({name} $ ...)"),
                    })
            }
            other => Err(QueryError::BadArguments {
                name: name.to_string(),
                message: format!(
                    "{} is not an attribute",
                    crate::edn::to_edn_string(&crate::edn::edn_from_value(other))
                ),
            }),
        }
    }

    fn db_fn(&self, name: &str, args: &[Value]) -> Result<Value, QueryError> {
        // Arguments arrive without the `$` source (dropped when the query is lowered).
        let entity = |v: &Value| match v {
            Value::Ref(e) => Some(*e),
            Value::Long(n) if *n >= 0 => Some(*n as u64),
            _ => None,
        };
        let bad = |m: &str| QueryError::BadArguments {
            name: name.to_string(),
            message: m.to_string(),
        };
        match name {
            "missing?" => {
                let [e, a] = args else {
                    return Err(bad("takes $ ?e :attr"));
                };
                let e = entity(e).ok_or_else(|| bad("not an entity"))?;
                // An attribute the schema lacks is missing from every entity (Datomic).
                if let Value::Keyword(k) = a {
                    if self.schema.by_ident(k).is_none() {
                        return Ok(Value::Boolean(true));
                    }
                }
                let a = self.attr_arg(name, a)?;
                Ok(Value::Boolean(self.r.values(e, a)?.is_empty()))
            }
            "get-else" => {
                let [e, a, default] = args else {
                    return Err(bad("takes $ ?e :attr default"));
                };
                let e = entity(e).ok_or_else(|| bad("not an entity"))?;
                let a = self.attr_arg(name, a)?;
                if self.is_many(a) {
                    return Err(bad("cardinality-many attributes are not supported"));
                }
                Ok(self
                    .r
                    .values(e, a)?
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| default.clone()))
            }
            _ => {
                let [e, rest @ ..] = args else {
                    return Err(bad("takes $ ?e :attr..."));
                };
                let e = entity(e).ok_or_else(|| bad("not an entity"))?;
                for a in rest {
                    let a = self.attr_arg(name, a)?;
                    if let Some(v) = self.r.values(e, a)?.into_iter().next() {
                        let attr = self.schema.get(a).map(|x| Value::Keyword(x.ident.clone()));
                        return Ok(Value::Tuple(vec![attr, Some(v)]));
                    }
                }
                Err(bad("no value"))
            }
        }
    }

    /// Evaluates data patterns on the database; several patterns share one bound entity (a
    /// merge scan) when `star.len() > 1`.
    fn patterns(
        &mut self,
        star: &[Pattern],
        rel: Relation,
        ranges: &[(Bound<Value>, Bound<Value>)],
    ) -> Result<Relation, QueryError> {
        let p = &star[0];
        let e_bound = match &p.e {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        if e_bound {
            return self.entity_star(star, rel);
        }
        debug_assert_eq!(star.len(), 1);
        match &p.a {
            AttrTerm::Unknown(_) => Ok(Relation::empty(extend_vars(&rel.vars, p))),
            AttrTerm::Attr(a) => self.attr_scan(*a, p, rel, ranges),
            AttrTerm::Var(_) | AttrTerm::Blank => self.full_scan(p, rel),
        }
    }

    /// Splits off the star's constant patterns `[?e :a c]` (on a bound `?e`) whose AVE entry
    /// is shorter than looking up every row would be, and keeps only the rows whose entity is
    /// in those entries. Returns the filtered rows and the rest of the star.
    fn const_filters(
        &self,
        star: Vec<Pattern>,
        mut rel: Relation,
    ) -> Result<(Relation, Vec<Pattern>), QueryError> {
        let Some(e_col) = star[0].e.var().and_then(|e| rel.col(e)) else {
            return Ok((rel, star));
        };
        let mut rest = Vec::with_capacity(star.len());
        for p in star {
            let mut filter = None;
            if let (AttrTerm::Attr(a), Term::Const(c)) = (&p.a, &p.v) {
                let c = coerce(self.schema, *a, c);
                let typed = self
                    .schema
                    .get(*a)
                    .is_some_and(|x| Some(x.value_type) == c.value_type());
                let budget = (rel.rows.len() as u64).saturating_mul(SCAN_JOIN_FACTOR);
                if typed && encoding_is_equality(&c) {
                    filter = self.r.entities_with_at_most(*a, &c, budget)?;
                }
            }
            match filter {
                Some(es) => {
                    // A bitmap when the ids are compact, else binary search (they ascend).
                    let set = EntitySet::new(es.iter().copied());
                    rel.rows.retain(|row| {
                        entity_of(&row[e_col]).is_some_and(|e| match set.bits {
                            Some(_) => set.may_contain(e),
                            None => es.binary_search(&e).is_ok(),
                        })
                    })
                }
                None => rest.push(p),
            }
        }
        Ok((rel, rest))
    }

    /// `[?e :a ?v]` on rows that bind only `?e`, when nothing later needs `?e`: the distinct
    /// values of `a` some row's entity holds, found by walking each value's (sorted) entity
    /// list only until its first row entity, when that is cheaper than one lookup per row.
    fn semijoin_values(
        &self,
        star: &[Pattern],
        rel: &Relation,
        todo: &[Clause],
        keep: &[Var],
    ) -> Result<Option<Relation>, QueryError> {
        let [p] = star else { return Ok(None) };
        let (Term::Var(e), AttrTerm::Attr(a), Term::Var(v)) = (&p.e, &p.a, &p.v) else {
            return Ok(None);
        };
        if rel.vars != [*e]
            || e == v
            || keep.contains(e)
            || todo.iter().any(|c| c.vars().contains(e))
        {
            return Ok(None);
        }
        let n = rel.rows.len() as u64;
        let (datoms, distinct) = self.stats(*a)?;
        // Expected entries walked per value before the first row entity (at most all).
        let per_value = (datoms / distinct).min(datoms / n.max(1)).max(1);
        let cost = distinct.saturating_mul(SCAN_JOIN_FACTOR + per_value);
        if cost >= n.saturating_mul(SCAN_JOIN_FACTOR) {
            return Ok(None);
        }
        self.budget.charge(rows_bytes(rel.rows.len(), 1))?;
        let members: rustc_hash::FxHashSet<EntityId> =
            rel.rows.iter().filter_map(|r| entity_of(&r[0])).collect();
        let budget = &self.budget;
        let bytes = row_bytes(1);
        let r = self.r;
        let mut out = Relation::empty(vec![*v]);
        r.values_held(
            *a,
            |e| members.contains(&e),
            |vb| {
                // The walk cannot be stopped from here: a stop is reported after it.
                budget.charge_step(bytes);
                out.rows.push(vec![r.decode_value(*a, vb)?]);
                Ok(())
            },
        )?;
        self.budget.check()?;
        Ok(Some(out))
    }

    /// For each row: one read of the entity's EAV entry answers every pattern of the star.
    /// When the rows name a large share of the attributes' entities, one sequential scan of
    /// each attribute's AVE range (then a hash join) is cheaper than a B-tree descent per
    /// row.
    fn entity_star(&mut self, star: &[Pattern], rel: Relation) -> Result<Relation, QueryError> {
        let r = self.r;
        let mut vars = rel.vars.clone();
        // Same order as rows are extended below: the attribute variable, then the value.
        for p in star {
            if let AttrTerm::Var(v) = p.a {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            if let Term::Var(v) = &p.v {
                if !vars.contains(v) {
                    vars.push(*v);
                }
            }
        }
        let e_col = match &star[0].e {
            Term::Var(v) => rel.col(*v),
            _ => None,
        };
        let e_const = match &star[0].e {
            Term::Const(v) => entity_of(v),
            _ => None,
        };
        let star_attrs: Option<Vec<AttrId>> = star
            .iter()
            .map(|p| match p.a {
                AttrTerm::Attr(a) => Some(a),
                _ => None,
            })
            .collect();
        let max_attr = star_attrs.as_ref().and_then(|w| w.iter().max().copied());
        // Attributes with few distinct values: their decoded values are reused across rows
        // (a string decodes into a new allocation each time otherwise).
        let mut few: Vec<AttrId> = Vec::new();
        for a in star_attrs.iter().flatten() {
            if self.stats(*a)?.1 <= DECODE_CACHE_VALUES as u64 {
                few.push(*a);
            }
        }
        let mut decoded: Vec<(AttrId, &[u8], Value)> = Vec::new();
        let last_is_one = max_attr.is_some_and(|m| !self.is_many(m));
        // The common star: `[?e :a ?new]` patterns on distinct attributes of cardinality one,
        // each binding its own new variable. A row then takes each attribute's single value in
        // star order, or is dropped when one is missing: no pattern-by-pattern matching.
        let simple: Option<Vec<AttrId>> = star_attrs.clone().filter(|attrs| {
            let mut new_vars: Vec<Var> = Vec::new();
            star.iter().zip(attrs).all(|(p, a)| match &p.v {
                Term::Var(v) if !rel.vars.contains(v) && !new_vars.contains(v) => {
                    new_vars.push(*v);
                    !self.is_many(*a) && p.e.var().is_some_and(|e| Some(e) != Some(*v))
                }
                _ => false,
            }) && (1..attrs.len()).all(|i| !attrs[..i].contains(&attrs[i]))
        });
        // Hash join when scanning the attributes costs less than looking up every row.
        let scanned = match (&star_attrs, e_col) {
            (Some(attrs), Some(c)) => self.scan_join(star, attrs, &rel, c)?,
            _ => None,
        };
        let mut out = Relation {
            vars: vars.clone(),
            rows: Vec::with_capacity(rel.rows.len()),
        };
        let mut looked_up: Vec<(AttrId, Value)> = Vec::new();
        let mut partial: Vec<Vec<Value>> = Vec::new();
        let mut next: Vec<Vec<Value>> = Vec::new();
        let mut matched: Vec<usize> = Vec::new();
        let mut picked: Vec<usize> = Vec::new();
        // One cursor for every row's lookup: rows mostly come in entity order, so each lookup
        // mostly stays on the previous one's leaf page.
        let mut cursor = match scanned {
            Some(_) => None,
            None => Some(r.entity_cursor()?),
        };
        let bytes = row_bytes(vars.len());
        for row in rel.rows.into_iter() {
            self.budget.charge(bytes)?;
            let e = match e_col {
                Some(c) => entity_of(&row[c]),
                None => e_const,
            };
            let Some(e) = e else { continue };
            let datoms: &[(AttrId, Value)] = match (&scanned, &mut cursor) {
                (Some(j), _) => j.datoms(e),
                (None, None) => &[],
                (None, Some(cursor)) => {
                    looked_up.clear();
                    let wanted = star_attrs.as_deref();
                    // From the entity's first value: stepping over a few values costs less than
                    // LMDB's search for the first wanted one.
                    cursor.entity_raw(
                        e,
                        #[inline(always)]
                        |a, vb| {
                            if wanted.is_none_or(|w| w.contains(&a)) {
                                // Numbers inline (no large `Result` through a call).
                                let v = if let Some(v) = crate::store::reader::decode_fixed(vb) {
                                    v
                                } else if few.contains(&a) {
                                    cached_decode(&mut decoded, r, a, vb)?
                                } else {
                                    r.decode_value(a, vb)?
                                };
                                looked_up.push((a, v));
                            }
                            // Attributes come in order: stop past the last one wanted, or at it
                            // when it has one value.
                            Ok(match max_attr {
                                None => true,
                                Some(m) if a == m => !last_is_one,
                                Some(m) => a < m,
                            })
                        },
                    )?;
                    &looked_up
                }
            };
            if let Some(attrs) = &simple {
                // Each attribute's datom; an attribute holding several values anyway (data
                // older than its cardinality) takes the general path.
                picked.clear();
                let mut missing = false;
                for a in attrs {
                    let mut it = datoms.iter().enumerate().filter(|(_, (x, _))| x == a);
                    match (it.next(), it.next()) {
                        (Some((i, _)), None) => picked.push(i),
                        (None, _) => {
                            missing = true;
                            break;
                        }
                        (Some(_), Some(_)) => break,
                    }
                }
                if missing {
                    continue;
                }
                if picked.len() == attrs.len() {
                    let mut row = row;
                    row.extend(picked.iter().map(|&i| datoms[i].1.clone()));
                    out.rows.push(row);
                    continue;
                }
            }
            // Extend the row pattern by pattern (a pattern may yield several values).
            partial.clear();
            partial.push(row);
            for p in star {
                next.clear();
                for mut pr in partial.drain(..) {
                    let cur_vars = &vars[..pr.len()];
                    let col = |v: Var| cur_vars.iter().position(|x| *x == v);
                    matched.clear();
                    for (i, (a, val)) in datoms.iter().enumerate() {
                        let a = *a;
                        let a_ok = match &p.a {
                            AttrTerm::Attr(x) => *x == a,
                            AttrTerm::Var(v) => match col(*v) {
                                // The attribute's id, or its ident when a function bound it.
                                Some(c) => match &pr[c] {
                                    Value::Keyword(k) => {
                                        self.schema.by_ident(k).map(|x| x.id) == Some(a)
                                    }
                                    other => *other == Value::Ref(a as u64),
                                },
                                None => true,
                            },
                            AttrTerm::Blank => true,
                            AttrTerm::Unknown(_) => false,
                        };
                        if !a_ok {
                            continue;
                        }
                        let v_ok = match &p.v {
                            Term::Const(c) => compare(c, val) == std::cmp::Ordering::Equal,
                            // An attribute variable bound by this very pattern comes first.
                            Term::Var(v) => match col(*v) {
                                Some(c) => pr[c] == *val,
                                None => match p.a {
                                    AttrTerm::Var(av) if av == *v && col(av).is_none() => {
                                        Value::Ref(a as u64) == *val
                                    }
                                    _ => true,
                                },
                            },
                            Term::Blank => true,
                        };
                        if v_ok {
                            matched.push(i);
                        }
                    }
                    // The last match takes the row itself; earlier ones copy it.
                    let last = matched.len();
                    for (k, &i) in matched.iter().enumerate() {
                        let (a, val) = &datoms[i];
                        let mut r = if k + 1 == last {
                            std::mem::take(&mut pr)
                        } else {
                            pr.clone()
                        };
                        let base = r.len();
                        r.reserve(vars.len() - base);
                        if let AttrTerm::Var(v) = p.a {
                            if !vars[..base].contains(&v) {
                                r.push(Value::Ref(*a as u64));
                            }
                        }
                        if let Term::Var(v) = &p.v {
                            if !vars[..r.len()].contains(v) {
                                r.push(val.clone());
                            }
                        }
                        self.budget.charge(bytes)?;
                        next.push(r);
                    }
                }
                std::mem::swap(&mut partial, &mut next);
                if partial.is_empty() {
                    break;
                }
            }
            out.rows
                .extend(partial.drain(..).filter(|r| r.len() == vars.len()));
        }
        Ok(out)
    }

    /// The datoms of the star's attributes for the entities of column `e_col`, read by scanning
    /// each attribute's AVE entries (only those of its value, for a constant) when that costs
    /// less than one EAV lookup per row; `None` when lookups are cheaper.
    fn scan_join(
        &self,
        star: &[Pattern],
        attrs: &[AttrId],
        rel: &Relation,
        e_col: usize,
    ) -> Result<Option<ScanJoin>, QueryError> {
        let r = self.r;
        let budget = (rel.rows.len() as u64).saturating_mul(SCAN_JOIN_FACTOR);
        // Per pattern: the constant whose AVE entries suffice, if any.
        let mut consts: Vec<Option<Value>> = Vec::with_capacity(star.len());
        let mut total = 0u64;
        for (p, a) in star.iter().zip(attrs) {
            let exact = match &p.v {
                Term::Const(c) => {
                    let c = coerce(self.schema, *a, c);
                    self.schema
                        .get(*a)
                        .is_some_and(|x| {
                            Some(x.value_type) == c.value_type() && encoding_is_equality(&c)
                        })
                        .then_some(c)
                }
                _ => None,
            };
            total += match &exact {
                Some(c) => self.r.count_with(*a, c, budget.max(1))?,
                None => self.stats(*a)?.0,
            };
            consts.push(exact);
            if total > budget {
                return Ok(None);
            }
        }
        // Entities of the rows, numbered.
        let mut slot: HashMap<EntityId, u32> =
            HashMap::with_capacity_and_hasher(rel.rows.len(), Default::default());
        for row in &rel.rows {
            if let Some(e) = entity_of(&row[e_col]) {
                let next = slot.len() as u32;
                slot.entry(e).or_insert(next);
            }
        }
        self.budget.charge(rows_bytes(slot.len(), 2))?;
        let members = EntitySet::new(slot.keys().copied());
        let mut hits: Vec<(u32, AttrId, Value)> = Vec::new();
        // A hit is held twice: in `hits`, then grouped in `datoms`.
        let hit_bytes = 2 * std::mem::size_of::<(u32, AttrId, Value)>() as u64;
        let budget = &self.budget;
        // Each datom is read once, however many patterns of the star share its attribute (a
        // datom read twice would match a pattern twice): one full scan of an attribute covers
        // its constants too.
        let mut reads: Vec<(AttrId, &Option<Value>)> = Vec::new();
        for (a, c) in attrs.iter().zip(&consts) {
            let full = consts.iter().zip(attrs).any(|(c, x)| x == a && c.is_none());
            let read = if full { &None } else { c };
            if !reads.contains(&(*a, read)) {
                reads.push((*a, read));
            }
        }
        for (a, c) in reads.iter().map(|(a, c)| (a, *c)) {
            match c {
                Some(c) => {
                    for e in self.r.entities_with(*a, c)? {
                        budget.tick()?;
                        if let Some(s) = slot.get(&e) {
                            budget.charge(hit_bytes)?;
                            hits.push((*s, *a, c.clone()));
                        }
                    }
                }
                None => {
                    let mut last: Option<(&[u8], Value)> = None;
                    self.r.scan_attr(
                        *a,
                        Bound::Unbounded,
                        Bound::Unbounded,
                        Direction::Forward,
                        #[inline(always)]
                        |vb, e| {
                            if !budget.step() {
                                return Ok(false);
                            }
                            if !members.may_contain(e) {
                                return Ok(true);
                            }
                            let Some(s) = slot.get(&e) else {
                                return Ok(true);
                            };
                            // Numbers inline; runs of one other value share its decoding.
                            let v = if let Some(v) = crate::store::reader::decode_fixed(vb) {
                                v
                            } else {
                                match &last {
                                    Some((b, v)) if *b == vb => v.clone(),
                                    _ => {
                                        let v = r.decode_value(*a, vb)?;
                                        last = Some((vb, v.clone()));
                                        v
                                    }
                                }
                            };
                            budget.charge_step(hit_bytes);
                            hits.push((*s, *a, v));
                            Ok(true)
                        },
                    )?;
                    budget.check()?;
                }
            }
        }
        // Group by entity (a counting sort keeps each entity's datoms in scan order).
        let mut start = vec![0u32; slot.len() + 1];
        for (s, _, _) in &hits {
            start[*s as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; hits.len()];
        for (i, (s, _, _)) in hits.iter().enumerate() {
            order[fill[*s as usize] as usize] = i as u32;
            fill[*s as usize] += 1;
        }
        let mut datoms = Vec::with_capacity(hits.len());
        for i in order {
            let (_, a, v) = &mut hits[i as usize];
            datoms.push((*a, std::mem::replace(v, Value::Boolean(false))));
        }
        Ok(Some(ScanJoin {
            slot,
            start,
            datoms,
        }))
    }

    /// `[?e :a v]` with `?e` unbound: AVE lookups (when `v` is known) or an AVE range scan.
    fn attr_scan(
        &mut self,
        a: AttrId,
        p: &Pattern,
        rel: Relation,
        ranges: &[(Bound<Value>, Bound<Value>)],
    ) -> Result<Relation, QueryError> {
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
        match (&p.v, v_col) {
            (Term::Const(v), _) => {
                let es = self.entities_with(a, &coerce(self.schema, a, v))?;
                let bytes = row_bytes(out.vars.len() + spare);
                for row in rel.rows.iter() {
                    out.rows.reserve(es.len());
                    for &e in es.iter() {
                        self.budget.charge(bytes)?;
                        let mut r = Vec::with_capacity(row.len() + 1 + spare);
                        r.extend_from_slice(row);
                        if let Term::Var(_) = p.e {
                            r.push(Value::Ref(e));
                        }
                        out.rows.push(r);
                    }
                }
            }
            (Term::Var(_), Some(c)) => {
                // Join on the value: one AVE lookup per distinct value.
                let mut cache: HashMap<Value, Vec<EntityId>> = HashMap::default();
                let bytes = row_bytes(out.vars.len() + spare);
                for row in rel.rows.iter() {
                    self.budget.tick()?;
                    let v = &row[c];
                    if !cache.contains_key(v) {
                        let es = self.r.entities_with(a, &coerce(self.schema, a, v))?;
                        self.budget.charge(rows_bytes(es.len(), 1))?;
                        cache.insert(v.clone(), es);
                    }
                    for &e in &cache[v] {
                        self.budget.charge(bytes)?;
                        let mut r = Vec::with_capacity(row.len() + 1 + spare);
                        r.extend_from_slice(row);
                        if let Term::Var(_) = p.e {
                            r.push(Value::Ref(e));
                        }
                        out.rows.push(r);
                    }
                }
            }
            _ => {
                let (lo, hi) = intersect_ranges(ranges);
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
                if let [row] = rel.rows.as_slice() {
                    // One input row (the usual first step): rows straight from the scan.
                    self.r.scan_attr(
                        a,
                        lo_ref,
                        hi_ref,
                        Direction::Forward,
                        #[inline(always)]
                        |vb, e| {
                            if !budget.charge_step(bytes) {
                                return Ok(false);
                            }
                            // Numbers inline (no large `Result` through the decode call).
                            let v = match crate::store::reader::decode_fixed(vb) {
                                Some(v) => v,
                                None => decode(vb)?,
                            };
                            if same && Value::Ref(e) != v {
                                return Ok(true);
                            }
                            let mut r = Vec::with_capacity(width + spare);
                            r.extend_from_slice(row);
                            if push_e {
                                r.push(Value::Ref(e));
                            }
                            if push_v {
                                r.push(v);
                            }
                            out.rows.push(r);
                            Ok(true)
                        },
                    )?;
                    self.budget.check()?;
                    return Ok(out);
                }
                let mut pairs: Vec<(EntityId, Value)> = Vec::new();
                let pair_bytes = std::mem::size_of::<(EntityId, Value)>() as u64;
                self.r.scan_attr(
                    a,
                    lo_ref,
                    hi_ref,
                    Direction::Forward,
                    #[inline(always)]
                    |vb, e| {
                        if !budget.charge_step(pair_bytes) {
                            return Ok(false);
                        }
                        let v = match crate::store::reader::decode_fixed(vb) {
                            Some(v) => v,
                            None => decode(vb)?,
                        };
                        pairs.push((e, v));
                        Ok(true)
                    },
                )?;
                self.budget.check()?;
                for row in rel.rows.iter() {
                    for (e, v) in &pairs {
                        self.budget.charge(bytes)?;
                        if same && Value::Ref(*e) != *v {
                            continue;
                        }
                        let mut r = Vec::with_capacity(width + spare);
                        r.extend_from_slice(row);
                        if push_e {
                            r.push(Value::Ref(*e));
                        }
                        if push_v {
                            r.push(v.clone());
                        }
                        out.rows.push(r);
                    }
                }
            }
        }
        Ok(out)
    }

    /// A pattern with an unknown attribute and unbound entity: the whole EAV index.
    fn full_scan(&mut self, p: &Pattern, rel: Relation) -> Result<Relation, QueryError> {
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

/// The datoms of a scan join, grouped by entity.
struct ScanJoin {
    slot: HashMap<EntityId, u32>,
    /// `datoms[start[s]..start[s + 1]]` belong to the entity numbered `s`.
    start: Vec<u32>,
    datoms: Vec<(AttrId, Value)>,
}

impl ScanJoin {
    fn datoms(&self, e: EntityId) -> &[(AttrId, Value)] {
        match self.slot.get(&e) {
            Some(s) => {
                let s = *s as usize;
                &self.datoms[self.start[s] as usize..self.start[s + 1] as usize]
            }
            None => &[],
        }
    }
}

/// A quick membership pre-test for entity ids: a bitmap over their span when it is compact
/// (entity ids are allocated densely; then the test is exact), else nothing (everything may
/// be a member).
struct EntitySet {
    lo: EntityId,
    bits: Option<Vec<u64>>,
}

impl EntitySet {
    fn new(ids: impl Iterator<Item = EntityId> + Clone) -> EntitySet {
        let (mut lo, mut hi, mut n) = (u64::MAX, 0, 0u64);
        for e in ids.clone() {
            lo = lo.min(e);
            hi = hi.max(e);
            n += 1;
        }
        // At most 64 bits per member (plus a little): never more memory than a hash set.
        let span = hi.saturating_sub(lo).saturating_add(1);
        if n == 0 || span > n.saturating_mul(64).saturating_add(4096) {
            return EntitySet { lo, bits: None };
        }
        let mut bits = vec![0u64; span.div_ceil(64) as usize];
        for e in ids {
            let i = e - lo;
            bits[(i / 64) as usize] |= 1 << (i % 64);
        }
        EntitySet {
            lo,
            bits: Some(bits),
        }
    }

    /// False only for ids certainly not in the set.
    #[inline]
    fn may_contain(&self, e: EntityId) -> bool {
        match &self.bits {
            None => true,
            Some(bits) => {
                let Some(i) = e.checked_sub(self.lo) else {
                    return false;
                };
                bits.get((i / 64) as usize)
                    .is_some_and(|w| w & (1 << (i % 64)) != 0)
            }
        }
    }
}

/// Whether two values of this one's type are equal exactly when their index encodings are
/// (so an AVE lookup of it finds what a comparison would).
fn encoding_is_equality(v: &Value) -> bool {
    matches!(
        v,
        Value::Boolean(_)
            | Value::Long(_)
            | Value::BigInt(_)
            | Value::Instant(_)
            | Value::Uuid(_)
            | Value::String(_)
            | Value::Keyword(_)
            | Value::Symbol(_)
            | Value::Ref(_)
    )
}

fn attr_term(a: &AttrTerm) -> Term {
    match a {
        AttrTerm::Attr(id) => Term::Const(Value::Ref(*id as u64)),
        AttrTerm::Var(v) => Term::Var(*v),
        AttrTerm::Blank => Term::Blank,
        AttrTerm::Unknown(k) => Term::Const(Value::Keyword(k.clone())),
    }
}

fn extend_vars(vars: &[Var], p: &Pattern) -> Vec<Var> {
    let mut out = vars.to_vec();
    for t in [&p.e, &p.v] {
        if let Term::Var(v) = t {
            if !out.contains(v) {
                out.push(*v);
            }
        }
    }
    out
}

/// The entity a value names.
pub fn entity_of(v: &Value) -> Option<EntityId> {
    match v {
        Value::Ref(e) => Some(*e),
        Value::Long(n) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// A constant for attribute `a` in the form the index stores (longs name entities for refs).
pub fn coerce(schema: &Schema, a: AttrId, v: &Value) -> Value {
    match (schema.get(a).map(|x| x.is_ref()), v) {
        (Some(true), Value::Long(n)) if *n >= 0 => Value::Ref(*n as u64),
        _ => v.clone(),
    }
}

fn resolve_args(args: &[Term], vars: &[Var], row: &[Value]) -> Vec<Value> {
    args.iter()
        .map(|t| match t {
            Term::Var(v) => vars
                .iter()
                .position(|x| x == v)
                .map(|c| row[c].clone())
                .unwrap_or(Value::Boolean(false)),
            Term::Const(c) => c.clone(),
            Term::Blank => Value::Boolean(false),
        })
        .collect()
}

/// The bindings a function result makes.
fn destructure(binding: &Binding, v: Value) -> Vec<Vec<(Var, Value)>> {
    let one = |t: &Term, v: Value| -> Option<(Var, Value)> { t.var().map(|x| (x, v)) };
    let items = |v: Value| -> Vec<Value> {
        match v {
            Value::Tuple(items) => items
                .into_iter()
                .map(|i| i.unwrap_or(Value::Boolean(false)))
                .collect(),
            // A set binds its elements, as Datomic's `[(ground #{1 2}) [?x ...]]`.
            Value::Set(items) => items.to_vec(),
            other => vec![other],
        }
    };
    match binding {
        Binding::Scalar(t) => vec![one(t, v).into_iter().collect()],
        Binding::Tuple(ts) => {
            let vals = items(v);
            if vals.len() < ts.len() {
                return Vec::new();
            }
            vec![ts.iter().zip(vals).filter_map(|(t, v)| one(t, v)).collect()]
        }
        Binding::Collection(t) => items(v)
            .into_iter()
            .map(|x| one(t, x).into_iter().collect())
            .collect(),
        Binding::Relation(ts) => items(v)
            .into_iter()
            .filter_map(|row| {
                let vals = items(row);
                (vals.len() >= ts.len())
                    .then(|| ts.iter().zip(vals).filter_map(|(t, v)| one(t, v)).collect())
            })
            .collect(),
    }
}

/// Rows of `input` (columns: `terms` positions) that match the constants, as a relation over
/// the variables.
pub fn match_terms(
    input: &Relation,
    terms: &[Term],
    budget: &Budget<'_>,
) -> Result<Relation, QueryError> {
    let mut vars: Vec<Var> = Vec::new();
    for t in terms {
        if let Term::Var(v) = t {
            if !vars.contains(v) {
                vars.push(*v);
            }
        }
    }
    let mut out = Relation::empty(vars.clone());
    let bytes = row_bytes(vars.len());
    'rows: for row in &input.rows {
        budget.charge(bytes)?;
        let mut r: Vec<Option<Value>> = vec![None; vars.len()];
        for (i, t) in terms.iter().enumerate() {
            let Some(val) = row.get(i) else {
                continue 'rows;
            };
            match t {
                Term::Const(c) => {
                    if compare(c, val) != std::cmp::Ordering::Equal {
                        continue 'rows;
                    }
                }
                Term::Var(v) => {
                    let c = vars.iter().position(|x| x == v).expect("collected");
                    match &r[c] {
                        Some(prev) if prev != val => continue 'rows,
                        _ => r[c] = Some(val.clone()),
                    }
                }
                Term::Blank => {}
            }
        }
        out.rows
            .push(r.into_iter().map(|x| x.expect("every var set")).collect());
    }
    out.dedup(budget)?;
    Ok(out)
}

/// Comparisons on the value variable of a scan pattern that can narrow its AVE range.
/// A comparison turned into AVE bounds: its index in `todo`, the bounds, and whether the
/// bounds alone answer it exactly.
type RangePred = (usize, Bound<Value>, Bound<Value>, bool);

fn range_preds(p: &Pattern, todo: &[Clause], schema: &Schema) -> Vec<RangePred> {
    let (Term::Var(v), AttrTerm::Attr(a)) = (&p.v, &p.a) else {
        return Vec::new();
    };
    let Some(attr) = schema.get(*a) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, c) in todo.iter().enumerate() {
        let Clause::Pred { name, args } = c else {
            continue;
        };
        let [x, y] = args.as_slice() else { continue };
        // Normalize to (?v op const).
        let (op, k) = match (x, y) {
            (Term::Var(xv), Term::Const(k)) if xv == v => (name.as_str(), k),
            (Term::Const(k), Term::Var(yv)) if yv == v => (flip(name), k),
            _ => continue,
        };
        // Only a constant of the attribute's own type has a meaningful place in its index.
        if k.value_type() != Some(attr.value_type) {
            continue;
        }
        // Fixed-width encodings order exactly like the values; long strings and the like may
        // be giants, whose order inside a shared prefix is by hash.
        let exact = matches!(
            k,
            Value::Long(_)
                | Value::Double(_)
                | Value::Float(_)
                | Value::Instant(_)
                | Value::BigInt(_)
                | Value::Ref(_)
                | Value::Boolean(_)
                | Value::Uuid(_)
        );
        let k = k.clone();
        let (lo, hi) = match op {
            ">" => (Bound::Excluded(k), Bound::Unbounded),
            ">=" => (Bound::Included(k), Bound::Unbounded),
            "<" => (Bound::Unbounded, Bound::Excluded(k)),
            "<=" => (Bound::Unbounded, Bound::Included(k)),
            "=" | "==" => (Bound::Included(k.clone()), Bound::Included(k)),
            _ => continue,
        };
        out.push((i, lo, hi, exact));
    }
    out
}

fn flip(op: &str) -> &str {
    match op {
        ">" => "<",
        "<" => ">",
        ">=" => "<=",
        "<=" => ">=",
        other => other,
    }
}

fn intersect_ranges(ranges: &[(Bound<Value>, Bound<Value>)]) -> (Bound<Value>, Bound<Value>) {
    let mut lo = Bound::Unbounded;
    let mut hi = Bound::Unbounded;
    for (l, h) in ranges {
        lo = tighter(lo, l.clone(), true);
        hi = tighter(hi, h.clone(), false);
    }
    (lo, hi)
}

fn tighter(a: Bound<Value>, b: Bound<Value>, lower: bool) -> Bound<Value> {
    use Bound::*;
    let key = |x: &Bound<Value>| match x {
        Included(v) | Excluded(v) => Some(v.clone()),
        Unbounded => None,
    };
    match (key(&a), key(&b)) {
        (None, _) => b,
        (_, None) => a,
        (Some(x), Some(y)) => match x.cmp(&y) {
            std::cmp::Ordering::Equal => {
                if matches!(a, Excluded(_)) {
                    a
                } else {
                    b
                }
            }
            o => {
                if (o == std::cmp::Ordering::Greater) == lower {
                    a
                } else {
                    b
                }
            }
        },
    }
}

fn as_ref(b: &Bound<Value>) -> Bound<&Value> {
    match b {
        Bound::Included(v) => Bound::Included(v),
        Bound::Excluded(v) => Bound::Excluded(v),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Keywords in ident position, for lowering.
pub fn ident_attr(schema: &Schema, k: &Keyword) -> AttrTerm {
    match schema.by_ident(k) {
        Some(a) => AttrTerm::Attr(a.id),
        None => AttrTerm::Unknown(k.clone()),
    }
}
