//! Clauses other than data patterns on a database: predicates (filters), functions (with their
//! binding forms), `not`, `or`, rule calls, `$x` sources, and patterns on input relations; and
//! the calls of built-in, database-aware and user functions.

use std::collections::BTreeMap;

use super::*;
use crate::codec::Value;
use crate::query::budget::row_bytes;
use crate::query::builtins::{self};
use crate::query::error::QueryError;
use crate::query::ir::{Binding, Clause, RuleBody, Term, Var};
use crate::query::relation::Relation;
use crate::query::rules;
use crate::store::{AttrId, EntityId};

/// Names whose calls read a database, the log or the full-text index ([`Ctx::call`] answers
/// them, with a database entered): never resolved to a plain built-in, never a chain's link.
pub(super) const READING_CALLS: [&str; 6] = [
    "get-else", "get-some", "missing?", "tx-ids", "tx-data", "fulltext",
];

impl<'a> Ctx<'a> {
    /// Applies a non-pattern clause.
    pub(super) fn clause(&mut self, c: &Clause, rel: Relation) -> Result<Relation, QueryError> {
        // Database functions read `$`.
        if let Clause::Pred { name, .. } | Clause::Fn { name, .. } = c {
            if matches!(
                name.as_str(),
                "get-else" | "get-some" | "missing?" | "fulltext"
            ) {
                self.enter(0);
            }
        }
        match c {
            Clause::Pred { name, args } => {
                let mut out = Relation {
                    vars: rel.vars.clone(),
                    rows: Vec::with_capacity(rel.rows.len()),
                };
                // The arguments' columns and the test, resolved once for every row.
                let cols: smallvec::SmallVec<[Option<usize>; 4]> = args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => rel.col(*v),
                        _ => None,
                    })
                    .collect();
                let first = match args.first() {
                    Some(Term::Const(k)) => Some(k),
                    _ => None,
                };
                let test = (!self.functions.contains_key(name.as_str()))
                    .then(|| builtins::Test::new(name, first));
                for row in rel.into_rows() {
                    self.budget.tick()?;
                    let pass = {
                        let refs: smallvec::SmallVec<[&Value; 4]> = args
                            .iter()
                            .zip(&cols)
                            .map(|(t, c)| match (t, c) {
                                (_, Some(c)) => &row[*c],
                                (Term::Const(k), None) => k,
                                _ => &FALSE,
                            })
                            .collect();
                        match test.as_ref().and_then(|t| t.holds(&refs)) {
                            Some(b) => b,
                            None => {
                                let vals: smallvec::SmallVec<[Value; 4]> =
                                    refs.into_iter().cloned().collect();
                                builtins::truthy(self.call(name, &vals)?.as_ref())
                            }
                        }
                    };
                    if pass {
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
                // A scalar binding makes at most one row of each (most often exactly one):
                // room for them all at once, not grown (and copied) a doubling at a time.
                if matches!(binding, Binding::Scalar(_)) {
                    out.rows.reserve(rel.rows.len());
                }
                let new_vars: Vec<Var> = binding
                    .vars()
                    .into_iter()
                    .filter(|v| !rel.binds(*v))
                    .collect();
                out.vars.extend(&new_vars);
                let bytes = row_bytes(out.vars.len());
                // Each row is moved into its result (the last one, when a collection binds
                // several) and extended in place, its old place let go as it goes.
                let given = row_bytes(rel.vars.len());
                let in_vars = rel.vars.clone();
                let col = |v: Var| in_vars.iter().position(|x| *x == v);
                let mut results = Vec::new();
                // The arguments' columns, found once; one buffer holds each row's arguments.
                let arg_cols: Vec<Option<usize>> = args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => col(*v),
                        _ => None,
                    })
                    .collect();
                let mut vals: Vec<Value> = Vec::with_capacity(args.len());
                // `[(f ...) ?new]`, the common binding: the result goes onto the row.
                let scalar_new = match binding {
                    Binding::Scalar(Term::Var(v)) => new_vars == [*v],
                    _ => false,
                };
                // `[(f ...) [?new ...]]`: each element makes a row of its own, at its final
                // size, without the bindings `destructure` lists (a `range` of a million made
                // ~200 bytes of them an element, all held until the rows were made).
                let collection_new = match binding {
                    Binding::Collection(Term::Var(v)) => new_vars == [*v],
                    _ => false,
                };
                // New rows get the room later steps add to them (`conj::row_spare`): a row
                // cloned and pushed to grows to four values whatever its width.
                let row_capacity = out.vars.len() + self.row_spare;
                // A first step whose elements are made rows a part at a time (`elements`):
                // the first part's now, the others kept.
                let part_of = if collection_new || matches!(binding, Binding::Relation(_)) {
                    self.elements_wanted()
                } else {
                    None
                };
                let width = super::elements::width(binding);
                let mut waiting = None;
                let callee = self.builtin_callee(name);
                let call = |vals: &[Value]| match callee {
                    Some(f) => f(&builtins::Call { name, args: vals }),
                    None => self.call(name, vals),
                };
                for mut row in rel.into_rows() {
                    self.budget.tick()?;
                    self.budget.release(given);
                    vals.clear();
                    vals.extend(args.iter().zip(&arg_cols).map(|(t, c)| match (t, c) {
                        (_, Some(c)) => row[*c].clone(),
                        (Term::Const(k), None) => k.clone(),
                        _ => Value::Boolean(false),
                    }));
                    if scalar_new {
                        match call(&vals) {
                            Ok(Some(v)) => {
                                row.push(v);
                                self.budget.charge(bytes)?;
                                out.rows.push(row);
                            }
                            Ok(None) => {}
                            Err(QueryError::BadArguments { .. }) if name == "get-some" => {}
                            Err(e) => return Err(e),
                        }
                        continue;
                    }
                    let result = match call(&vals) {
                        Ok(Some(v)) => v,
                        // A nil result binds nothing (Datomic drops the row).
                        Ok(None) => continue,
                        // get-some and friends bind nothing when there is nothing.
                        Err(QueryError::BadArguments { .. }) if name == "get-some" => continue,
                        Err(e) => return Err(e),
                    };
                    if let Some(n) = part_of {
                        let elements = match width {
                            Some(w) => super::elements::tuples(result, w),
                            None => super::elements::all(result),
                        };
                        let (first, rest) = super::elements::Elements::split(
                            elements,
                            n,
                            &row,
                            out.vars.clone(),
                            row_capacity,
                            width,
                        );
                        for x in first {
                            self.budget.charge(bytes)?;
                            out.rows
                                .push(super::elements::row_of(&row, x, width, row_capacity));
                        }
                        waiting = Some(rest);
                        continue;
                    }
                    if collection_new {
                        let mut elements = elements(result).peekable();
                        while let Some(x) = elements.next() {
                            let mut r = match elements.peek() {
                                // The last element takes the row (extended in place).
                                None => std::mem::take(&mut row),
                                Some(_) => {
                                    let mut r = Vec::with_capacity(row_capacity);
                                    r.extend_from_slice(&row);
                                    r
                                }
                            };
                            r.push(x);
                            self.budget.charge(bytes)?;
                            out.rows.push(r);
                        }
                        continue;
                    }
                    results.clear();
                    results.extend(destructure(binding, result));
                    let mut row = Some(row);
                    let last = results.len().saturating_sub(1);
                    for (i, bound) in results.drain(..).enumerate() {
                        let mut r = match (i == last, &mut row) {
                            (true, row) => row.take().expect("the last result takes the row"),
                            (false, Some(row)) => {
                                let mut r = Vec::with_capacity(row_capacity);
                                r.extend_from_slice(row);
                                r
                            }
                            (false, None) => unreachable!("the row is taken by the last only"),
                        };
                        let mut ok = true;
                        for (v, val) in bound {
                            match col(v) {
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
                if let Some(rest) = waiting {
                    self.elements_kept(rest);
                }
                Ok(out)
            }
            // Tests only: row by row, without the relations a nested conjunction builds.
            Clause::Not { .. } | Clause::Or { .. } if row_test(c, &rel) => {
                let mut out = Relation {
                    vars: rel.vars.clone(),
                    rows: Vec::with_capacity(rel.rows.len()),
                };
                for row in rel.into_rows() {
                    self.budget.tick()?;
                    if self.passes(c, &out.vars, &row)? {
                        out.rows.push(row);
                    }
                }
                Ok(out)
            }
            Clause::Not { vars, clauses } => {
                // NOT EXISTS on one entity's values: a walk of its holders per row.
                if let Some(probe) = self.not_probe(vars, clauses) {
                    return self.probe(&probe, rel, false);
                }
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
                // Read where it lies: a source of a million tuples is not copied per clause.
                let empty = Relation::default();
                let input = self.sources.get(&self.source_of(*src)).unwrap_or(&empty);
                let read = crate::query::inputs::read_terms(terms);
                rel.join(
                    &match_source_terms(input, read, &self.budget)?,
                    &self.budget,
                )
            }
            Clause::Timed(src, t) if self.reads_db(*src) => {
                self.enter(*src);
                self.timed(t, rel)
            }
            Clause::Pattern(src, p) if self.reads_db(*src) => {
                // A database value in time (the conjunction runs current-state patterns).
                self.enter(*src);
                let t = crate::query::ir::TimedPattern {
                    p: p.clone(),
                    tx: Term::Blank,
                    added: Term::Blank,
                };
                self.timed(&t, rel)
            }
            Clause::Timed(src, t) => {
                // Read where it lies: a source of a million tuples is not copied per clause.
                let empty = Relation::default();
                let input = self.sources.get(&self.source_of(*src)).unwrap_or(&empty);
                let p = &t.p;
                let terms = vec![
                    p.e.clone(),
                    attr_term(&p.a),
                    p.v.clone(),
                    t.tx.clone(),
                    t.added.clone(),
                ];
                let read = crate::query::inputs::read_terms(&terms);
                rel.join(
                    &match_source_terms(input, read, &self.budget)?,
                    &self.budget,
                )
            }
            Clause::Pattern(src, p) => {
                // Read where it lies: a source of a million tuples is not copied per clause.
                let empty = Relation::default();
                let input = self.sources.get(&self.source_of(*src)).unwrap_or(&empty);
                let terms = vec![p.e.clone(), attr_term(&p.a), p.v.clone()];
                let read = crate::query::inputs::read_terms(&terms);
                rel.join(
                    &match_source_terms(input, read, &self.budget)?,
                    &self.budget,
                )
            }
        }
    }

    /// Calls a predicate or function (built-in, database-aware, or user-registered);
    /// `None` is nil.
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Option<Value>, QueryError> {
        match name {
            "get-else" | "get-some" | "missing?" => return self.db_fn(name, args).map(Some),
            "tx-ids" | "tx-data" => return self.log_fn(name, args).map(Some),
            "fulltext" => return self.fulltext_fn(args).map(Some),
            _ => {}
        }
        if let Some(f) = self.functions.get(name) {
            self.budget.user_call()?;
            return f(args).map(Some).map_err(|m| QueryError::BadArguments {
                name: name.to_string(),
                message: m,
            });
        }
        builtins::call(name, args)
    }

    /// The built-in a function clause named `name` calls on every row, resolved once: `None`
    /// when the name is one of the functions that read the database, the log or the
    /// full-text index, or a user's function (those go through [`Self::call`]).
    pub(super) fn builtin_callee(&self, name: &str) -> Option<builtins::Builtin> {
        if READING_CALLS.contains(&name) || self.functions.contains_key(name) {
            return None;
        }
        builtins::resolve_builtin(name)
    }

    /// Whether `row` passes test `c` (`row_test`): a predicate is true, a `not`'s clauses
    /// are not all true, one of an `or`'s branches is all true.
    pub(super) fn passes(
        &mut self,
        c: &Clause,
        vars: &[Var],
        row: &[Value],
    ) -> Result<bool, QueryError> {
        Ok(match c {
            Clause::Pred { name, args } => {
                // On the stack, borrowed where the test can answer so: it runs once per row.
                let refs: smallvec::SmallVec<[&Value; 4]> = args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => {
                            vars.iter().position(|x| x == v).map_or(&FALSE, |c| &row[c])
                        }
                        Term::Const(c) => c,
                        Term::Blank => &FALSE,
                    })
                    .collect();
                match builtins::holds(name, &refs) {
                    Some(b) if !self.functions.contains_key(name.as_str()) => b,
                    _ => {
                        let vals: smallvec::SmallVec<[Value; 4]> =
                            refs.into_iter().cloned().collect();
                        builtins::truthy(self.call(name, &vals)?.as_ref())
                    }
                }
            }
            Clause::Not { clauses, .. } => {
                for c in clauses {
                    if !self.passes(c, vars, row)? {
                        return Ok(true);
                    }
                }
                false
            }
            Clause::Or { branches, .. } => {
                for b in branches {
                    let mut all = true;
                    for c in b {
                        if !self.passes(c, vars, row)? {
                            all = false;
                            break;
                        }
                    }
                    if all {
                        return Ok(true);
                    }
                }
                false
            }
            _ => unreachable!("row_test admits only predicates, not and or"),
        })
    }

    pub(super) fn attr_arg(&self, name: &str, v: &Value) -> Result<AttrId, QueryError> {
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

    /// The values of `a` on `e` (none for `None`, an ident naming nothing) the active
    /// database shows: its time view's (a history view
    /// shows every value the attribute ever had or lost there, smallest first, as Datomic's
    /// EAVT index gives them).
    fn view_values(&self, e: Option<EntityId>, a: AttrId) -> Result<Vec<Value>, QueryError> {
        // An ident that names nothing holds nothing.
        let Some(e) = e else {
            return Ok(Vec::new());
        };
        if self.time.is_current() {
            return Ok(self.r.values(e, a)?);
        }
        let mut out: Vec<Value> = self
            .r
            .timed_values(&self.time, e, Some(a))?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        if self.time.history {
            out.sort();
            out.dedup();
        }
        Ok(out)
    }

    pub(super) fn db_fn(&self, name: &str, args: &[Value]) -> Result<Value, QueryError> {
        // Arguments arrive without the `$` source (dropped when the query is lowered).
        // The entity: an id, or an ident bound while the query runs (constants were resolved
        // when it was lowered); an ident that names nothing is an entity without datoms,
        // as in Datomic (`get-else` gives its default).
        let entity = |v: &Value| -> Result<Option<Option<EntityId>>, QueryError> {
            Ok(match v {
                Value::Ref(e) => Some(Some(*e)),
                Value::Long(n) if *n >= 0 => Some(Some(*n as u64)),
                Value::Keyword(k) => Some(match self.schema.by_ident(k) {
                    Some(a) => Some(u64::from(a.id)),
                    None => crate::store::load::entity_of_ident(&self.r, k)?,
                }),
                // A lookup ref an input gave that names nothing (`entities` resolved those
                // that name an entity).
                Value::Tuple(items)
                    if matches!(items.as_slice(), [Some(Value::Keyword(_)), Some(_)]) =>
                {
                    Some(None)
                }
                _ => None,
            })
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
                let e = entity(e)?.ok_or_else(|| bad("not an entity"))?;
                // An attribute the schema lacks is missing from every entity (Datomic).
                if let Value::Keyword(k) = a {
                    if self.schema.by_ident(k).is_none() {
                        return Ok(Value::Boolean(true));
                    }
                }
                let a = self.attr_arg(name, a)?;
                Ok(Value::Boolean(self.view_values(e, a)?.is_empty()))
            }
            "get-else" => {
                let [e, a, default] = args else {
                    return Err(bad("takes $ ?e :attr default"));
                };
                let e = entity(e)?.ok_or_else(|| bad("not an entity"))?;
                let a = self.attr_arg(name, a)?;
                if self.is_many(a) {
                    return Err(bad("cardinality-many attributes are not supported"));
                }
                Ok(self
                    .view_values(e, a)?
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| default.clone()))
            }
            _ => {
                let [e, rest @ ..] = args else {
                    return Err(bad("takes $ ?e :attr..."));
                };
                let e = entity(e)?.ok_or_else(|| bad("not an entity"))?;
                for a in rest {
                    let a = self.attr_arg(name, a)?;
                    if let Some(v) = self.view_values(e, a)?.into_iter().next() {
                        // The attribute as its entity (Datomic): `[?a :db/ident ?name]` names it.
                        let attr = Value::Ref(u64::from(a));
                        return Ok(Value::Tuple(vec![Some(attr), Some(v)]));
                    }
                }
                Err(bad("no value"))
            }
        }
    }
}

pub(super) fn resolve_args(args: &[Term], vars: &[Var], row: &[Value]) -> Vec<Value> {
    args.iter().map(|t| resolve_arg(t, vars, row)).collect()
}

/// What an unbound variable or a blank passes to a function.
static FALSE: Value = Value::Boolean(false);

/// One argument's value in `row` (an unbound variable or a blank is false).
fn resolve_arg(t: &Term, vars: &[Var], row: &[Value]) -> Value {
    match t {
        Term::Var(v) => vars
            .iter()
            .position(|x| x == v)
            .map(|c| row[c].clone())
            .unwrap_or(Value::Boolean(false)),
        Term::Const(c) => c.clone(),
        Term::Blank => Value::Boolean(false),
    }
}

/// The bindings a function result makes.
/// Equal values, an entity id given as a number being the entity (an input `?tx` or `?e`
/// is often a long).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Ref(x), Value::Long(y)) | (Value::Long(y), Value::Ref(x)) => {
            u64::try_from(*y).is_ok_and(|y| y == *x)
        }
        _ => a == b,
    }
}

/// The elements a binding takes from a function's result (`elements::all`), one by one.
fn elements(v: Value) -> std::vec::IntoIter<Value> {
    super::elements::all(v).into_iter()
}

pub(super) fn destructure(binding: &Binding, v: Value) -> Vec<Vec<(Var, Value)>> {
    // A constant in the binding (an input bound before the query ran) must equal its value:
    // such a row binds nothing and is dropped, as a variable bound to another value would be.
    let bind = |terms: &mut dyn Iterator<Item = (&Term, Value)>| -> Option<Vec<(Var, Value)>> {
        let mut out = Vec::new();
        for (t, v) in terms {
            match t {
                Term::Var(x) => out.push((*x, v)),
                Term::Const(c) if !same_value(c, &v) => return None,
                _ => {}
            }
        }
        Some(out)
    };
    let items = |v: Value| -> Vec<Value> { elements(v).collect() };
    match binding {
        Binding::Scalar(t) => bind(&mut std::iter::once((t, v))).into_iter().collect(),
        Binding::Tuple(ts) => {
            let vals = items(v);
            if vals.len() < ts.len() {
                return Vec::new();
            }
            bind(&mut ts.iter().zip(vals)).into_iter().collect()
        }
        Binding::Collection(t) => items(v)
            .into_iter()
            .filter_map(|x| bind(&mut std::iter::once((t, x))))
            .collect(),
        Binding::Relation(ts) => items(v)
            .into_iter()
            .filter_map(|row| {
                let vals = items(row);
                if vals.len() < ts.len() {
                    return None;
                }
                bind(&mut ts.iter().zip(vals))
            })
            .collect(),
    }
}

/// Whether `c` is a test that can run row by row on `rel`: a predicate (not one that reads a
/// database) of variables `rel` binds, or a `not` or `or` of such tests only.
fn row_test(c: &Clause, rel: &Relation) -> bool {
    is_row_test(c, &|v| rel.binds(v))
}

/// [`row_test`] on rows that bind the variables `bound` accepts.
pub(super) fn is_row_test(c: &Clause, bound: &dyn Fn(Var) -> bool) -> bool {
    match c {
        Clause::Pred { name, args } => {
            !matches!(
                name.as_str(),
                "get-else" | "get-some" | "missing?" | "fulltext"
            ) && args.iter().all(|t| match t {
                Term::Var(v) => bound(*v),
                Term::Const(_) => true,
                Term::Blank => false,
            })
        }
        Clause::Not { clauses, .. } => clauses.iter().all(|c| is_row_test(c, bound)),
        Clause::Or { branches, .. } => branches
            .iter()
            .all(|b| b.iter().all(|c| is_row_test(c, bound))),
        _ => false,
    }
}
