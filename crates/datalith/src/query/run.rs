//! Running a query: parse (cached by text), lower, resolve constants, execute, shape.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::error::QueryError;
use super::exec::{Ctx, DbSource, Step, UserFn};
use super::find::{shape, UserAggregate};
use super::ir::{
    AttrTerm, Binding, Clause, FindElem, InBinding, Pattern, Query, RuleBody, Term, Var,
};
use super::lower::{lower, sections, InputKind, Sections};
use super::relation::Relation;
use crate::api::Db;
use crate::codec::Value;
use crate::edn::{read_one, value_from_edn, Edn};
use crate::store::reader::IndexReader;
use crate::store::schema::{builtin, Schema};

/// Parsed queries, by text. Parsing does not depend on the schema, so entries never go stale.
#[derive(Default)]
pub struct QueryCache {
    parsed: Mutex<HashMap<String, Arc<Sections>>>,
}

/// Entries kept before the cache is cleared (queries built by string concatenation would
/// otherwise grow it without bound).
const QUERY_CACHE_ENTRIES: usize = 4096;

impl QueryCache {
    /// The parsed form of `text`.
    pub fn parse(&self, text: &str) -> Result<Arc<Sections>, QueryError> {
        if let Some(s) = self
            .parsed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(text)
        {
            return Ok(s.clone());
        }
        let form = read_one(text).map_err(|e| QueryError::Parse(e.to_string()))?;
        let s = Arc::new(sections(&form)?);
        let mut cache = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= QUERY_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(text.to_string(), s.clone());
        Ok(s)
    }
}

/// User functions and aggregates callable from queries.
#[derive(Default, Clone)]
pub struct Registry {
    /// Functions and predicates.
    pub functions: HashMap<String, Arc<UserFn>>,
    /// Aggregates.
    pub aggregates: HashMap<String, Arc<UserAggregate>>,
}

/// A query's result and, when asked, its plan.
pub struct Outcome {
    /// The result.
    pub result: Edn,
    /// Executed steps with estimated and actual sizes.
    pub steps: Vec<Step>,
}

/// One query input as the engine reads it: a database or a value.
#[derive(Clone, Copy)]
pub enum InputRef<'a> {
    /// A database (a data source).
    Db(&'a Db),
    /// A value: a scalar, a collection, a relation (also usable as a data source), or rules.
    Value(&'a Edn),
}

/// The databases a query reads, by source number, with their readers and schemas.
type Readers<'a> = BTreeMap<usize, (IndexReader<'a>, &'a Schema)>;

/// Runs `s` on `inputs`, one for each `:in` form; `implicit` is `$` when `:in` does not name
/// it (the receiver of [`Db::q`]).
pub fn run(
    s: &Sections,
    inputs: &[InputRef<'_>],
    implicit: Option<&Db>,
    registry: &Registry,
    explain: bool,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Outcome, QueryError> {
    let kinds: Vec<InputKind<'_>> = inputs
        .iter()
        .map(|i| match i {
            InputRef::Db(d) => InputKind::Db(d.schema()),
            InputRef::Value(v) => InputKind::Value(v),
        })
        .collect();
    let (mut q, bindings) = lower(s, &kinds, implicit.map(|d| &**d.schema()))?;
    // Data sources: databases and relations, by source number.
    let mut dbs: BTreeMap<usize, &Db> = BTreeMap::new();
    let mut relations: HashMap<usize, Relation> = HashMap::new();
    for (b, pos) in &bindings {
        if let InBinding::Source(n) = b {
            match inputs[*pos] {
                InputRef::Db(d) => {
                    dbs.insert(*n, d);
                }
                InputRef::Value(v) => {
                    relations.insert(*n, tuples(&q.source_names[*n], v)?);
                }
            }
        }
    }
    if let (false, Some(d)) = (dbs.contains_key(&0) || relations.contains_key(&0), implicit) {
        dbs.insert(0, d);
    }
    // The database the result's pulls read: the one they name (`$` by default); with no
    // pull, `$` or the first one (the engine runs on one).
    let pulled: std::collections::BTreeSet<usize> = q
        .find
        .iter()
        .filter_map(|f| match f {
            FindElem::Pull { src, .. } => Some(*src),
            _ => None,
        })
        .collect();
    let home_src = match pulled.iter().collect::<Vec<_>>().as_slice() {
        [] => *dbs.keys().next().ok_or(QueryError::NoDatabase)?,
        [src] if dbs.contains_key(src) => **src,
        [src] => {
            return Err(QueryError::UnknownSource {
                name: q.source_names[**src].clone(),
                clause: "(pull ...)".to_string(),
            })
        }
        _ => {
            return Err(QueryError::Inputs(
                "pulls from several databases in one :find are not supported".to_string(),
            ))
        }
    };
    let home = dbs[&home_src];
    let readers: Readers<'_> = dbs
        .iter()
        .map(|(n, d)| (*n, (d.reader(), &**d.schema())))
        .collect();
    let clauses = resolve_constants(&readers, 0, &q.clauses)?;
    // Rules, by the source they were lowered for (their `$`).
    let mut all_rules: BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>> = BTreeMap::new();
    for (n, rules) in
        std::iter::once((0, &q.rules)).chain(q.source_rules.iter().map(|(n, r)| (*n, r)))
    {
        let resolved = rules
            .iter()
            .map(|(k, bodies)| {
                let bodies = bodies
                    .iter()
                    .map(|b| {
                        Ok(RuleBody {
                            clauses: resolve_constants(&readers, n, &b.clauses)?,
                            ..b.clone()
                        })
                    })
                    .collect::<Result<Vec<_>, QueryError>>()?;
                Ok((k.clone(), bodies))
            })
            .collect::<Result<_, QueryError>>()?;
        all_rules.insert(n, resolved);
    }
    for (n, rules) in &all_rules {
        for b in rules.values().flatten() {
            check_arity(&b.clauses, *n, &relations, &q.source_names, &[])?;
        }
    }
    check_arity(&clauses, 0, &relations, &q.source_names, &q.var_names)?;
    // Binding forms.
    let mut input = Relation::unit();
    for (b, pos) in &bindings {
        if let (InBinding::Bind(b), InputRef::Value(value)) = (b, inputs[*pos]) {
            input = input.join(&bind_input(b, value)?);
        }
    }
    // Inputs used as entities read their entity id there, and keep their own value.
    let mut clauses = clauses;
    let input_vars = input.vars.clone();
    let shadows = {
        let mut sh = Shadows {
            readers: &readers,
            rules: &all_rules,
            input_vars: &input_vars,
            next_var: q.var_names.len(),
            made: Vec::new(),
        };
        sh.clauses(&mut clauses, 0)?;
        sh.made
    };
    for (v, src, shadow) in &shadows {
        q.var_names
            .push(format!("{}@{}", q.var_names[*v], q.source_names[*src]));
        input = add_resolved_column(input, *v, *shadow, &readers[src])?;
    }
    // A pulled input variable is pulled as the entity it names.
    for f in &mut q.find {
        if let FindElem::Pull { var, .. } = f {
            if input.binds(*var) {
                let shadow = q.var_names.len();
                q.var_names.push(format!("{}@pull", q.var_names[*var]));
                input = add_resolved_column(input, *var, shadow, &readers[&home_src])?;
                *var = shadow;
            }
        }
    }
    let no_rules = BTreeMap::new();
    let mut ctx = Ctx {
        row_spare: super::exec::ROW_SPARE,
        r: readers[&home_src].0,
        schema: readers[&home_src].1,
        sources: Default::default(),
        dbs: readers
            .iter()
            .map(|(n, (r, schema))| (*n, DbSource::new(*r, schema)))
            .collect(),
        dollar: 0,
        active: home_src,
        rules: all_rules.get(&0).unwrap_or(&no_rules),
        source_rules: &all_rules,
        functions: &registry.functions,
        deadline: q
            .timeout_ms
            .map(|ms| (Instant::now() + Duration::from_millis(ms), ms)),
        trace: explain.then(Vec::new),
        var_names: q.var_names.clone().into(),
        rule_memo: Default::default(),
        ave_lists: Default::default(),
        depth: 0,
        cancel,
    };
    ctx.sources.extend(relations);
    let keep: Vec<usize> = {
        let mut k: Vec<usize> = q.find.iter().map(super::ir::FindElem::var).collect();
        k.extend(&q.with);
        k
    };
    let rel = ctx.conj(&clauses, input, &keep)?;
    let steps = ctx.trace.take().unwrap_or_default();
    let result = shape(home, &q, rel, &registry.aggregates)?;
    Ok(Outcome { result, steps })
}

/// A relation source's tuples.
fn tuples(name: &str, value: &Edn) -> Result<Relation, QueryError> {
    let bad = |got: &Edn| QueryError::InputKind {
        input: name.to_string(),
        expected: "a database or a collection of tuples".to_string(),
        got: crate::edn::to_edn_string(got),
    };
    let rows = match value {
        Edn::Vector(rows) | Edn::List(rows) | Edn::Set(rows) => rows,
        other => return Err(bad(other)),
    };
    let mut out = Relation::empty(Vec::new());
    for r in rows {
        let items = match r {
            Edn::Vector(items) | Edn::List(items) => items,
            other => return Err(bad(other)),
        };
        out.rows
            .push(items.iter().map(scalar).collect::<Result<_, _>>()?);
    }
    Ok(out)
}

/// Fails when a clause on a relation source has more terms than one of its tuples has values
/// (a shorter clause matches each tuple's prefix). `dollar` is the source `$` stands for.
fn check_arity(
    clauses: &[Clause],
    dollar: usize,
    relations: &HashMap<usize, Relation>,
    names: &[String],
    var_names: &[String],
) -> Result<(), QueryError> {
    for c in clauses {
        match c {
            Clause::Source { src, terms } => {
                let src = if *src == 0 { dollar } else { *src };
                let Some(rel) = relations.get(&src) else {
                    continue;
                };
                if let Some(short) = rel.rows.iter().find(|r| r.len() < terms.len()) {
                    let edn = |v: &Value| crate::edn::edn_from_value(v);
                    let show_terms: Vec<Edn> = terms
                        .iter()
                        .map(|t| match t {
                            Term::Const(v) => edn(v),
                            Term::Var(v) => Edn::Symbol(crate::codec::Keyword::new(
                                None,
                                &var_names
                                    .get(*v)
                                    .cloned()
                                    .unwrap_or_else(|| format!("?{v}")),
                            )),
                            Term::Blank => Edn::Symbol(crate::codec::Keyword::new(None, "_")),
                        })
                        .collect();
                    return Err(QueryError::SourceArity {
                        source_name: names.get(src).cloned().unwrap_or_else(|| "$".into()),
                        clause: crate::edn::to_edn_string(&Edn::Vector(show_terms)),
                        terms: terms.len(),
                        tuple: crate::edn::to_edn_string(&Edn::Vector(
                            short.iter().map(edn).collect(),
                        )),
                        width: short.len(),
                    });
                }
            }
            Clause::Or { branches, .. } => {
                for b in branches {
                    check_arity(b, dollar, relations, names, var_names)?;
                }
            }
            Clause::Not { clauses, .. } => {
                check_arity(clauses, dollar, relations, names, var_names)?
            }
            _ => {}
        }
    }
    Ok(())
}

fn scalar(e: &Edn) -> Result<Value, QueryError> {
    value_from_edn(e).ok_or_else(|| {
        QueryError::Inputs(format!("{} is not a value", crate::edn::to_edn_string(e)))
    })
}

fn bind_input(b: &Binding, value: &Edn) -> Result<Relation, QueryError> {
    let seq = |e: &Edn| -> Result<Vec<Edn>, QueryError> {
        match e {
            Edn::Vector(v) | Edn::List(v) | Edn::Set(v) => Ok(v.clone()),
            other => Err(QueryError::Inputs(format!(
                "expected a collection, got {}",
                crate::edn::to_edn_string(other)
            ))),
        }
    };
    let rows: Vec<Vec<Edn>> = match b {
        Binding::Scalar(_) => vec![vec![value.clone()]],
        Binding::Tuple(_) => vec![seq(value)?],
        Binding::Collection(_) => seq(value)?.into_iter().map(|x| vec![x]).collect(),
        Binding::Relation(_) => seq(value)?.iter().map(seq).collect::<Result<_, _>>()?,
    };
    let terms: Vec<Term> = match b {
        Binding::Scalar(t) | Binding::Collection(t) => vec![t.clone()],
        Binding::Tuple(ts) | Binding::Relation(ts) => ts.clone(),
    };
    let raw = Relation {
        vars: (0..terms.len()).map(|i| usize::MAX - i).collect(),
        rows: rows
            .iter()
            .map(|r| {
                r.iter()
                    .take(terms.len())
                    .map(scalar)
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(super::exec::match_terms(&raw, &terms))
}

/// The entity `v` names in a database: an entity id (a ref or a non-negative number), an
/// ident, or a lookup ref `[unique-attr value]`; `Ref(u64::MAX)` (no entity) when it names
/// none. Other values stay as they are.
fn entity(r: &IndexReader<'_>, schema: &Schema, v: &Value) -> Result<Value, QueryError> {
    Ok(match v {
        Value::Long(n) if *n >= 0 => Value::Ref(*n as u64),
        Value::Keyword(k) => match schema.by_ident(k) {
            Some(a) => Value::Ref(a.id as u64),
            None => match r.first_entity_with(builtin::IDENT, v)? {
                Some(e) => Value::Ref(e),
                None => Value::Ref(u64::MAX),
            },
        },
        Value::Tuple(items) if items.len() == 2 => match (&items[0], &items[1]) {
            (Some(Value::Keyword(k)), Some(val)) => match schema.by_ident(k) {
                Some(a) if a.unique.is_some() => {
                    let val = super::exec::coerce(schema, a.id, val);
                    match r.first_entity_with(a.id, &val)? {
                        Some(e) => Value::Ref(e),
                        None => Value::Ref(u64::MAX),
                    }
                }
                _ => Value::Ref(u64::MAX),
            },
            _ => v.clone(),
        },
        other => other.clone(),
    })
}

/// An entity constant written in the query itself: as [`entity`], but an ident or lookup ref
/// that names no entity, a lookup ref on an attribute that is not unique or that does not
/// exist, is an error naming it, as in Datomic (an entity id that names none matches nothing).
fn constant_entity(r: &IndexReader<'_>, schema: &Schema, v: &Value) -> Result<Value, QueryError> {
    let shown = || crate::edn::to_edn_string(&crate::edn::edn_from_value(v));
    if let Value::Tuple(items) = v {
        if let [Some(Value::Keyword(k)), Some(_)] = items.as_slice() {
            match schema.by_ident(k) {
                None => {
                    return Err(QueryError::UnknownAttribute {
                        attr: k.to_string(),
                        clause: shown(),
                    })
                }
                Some(a) if a.unique.is_none() => {
                    return Err(QueryError::LookupRefNotUnique {
                        attr: k.to_string(),
                        lookup_ref: shown(),
                    })
                }
                Some(_) => {}
            }
        }
    }
    let e = entity(r, schema, v)?;
    let names_one = matches!(v, Value::Keyword(_) | Value::Tuple(_));
    if names_one && e == Value::Ref(u64::MAX) {
        return Err(QueryError::UnresolvedKey { key: shown() });
    }
    Ok(e)
}

/// `input` with column `shadow`: column `v`'s values resolved to entity ids in one database.
fn add_resolved_column(
    mut input: Relation,
    v: Var,
    shadow: Var,
    (r, schema): &(IndexReader<'_>, &Schema),
) -> Result<Relation, QueryError> {
    let c = input.col(v).expect("an input variable");
    for row in &mut input.rows {
        let e = entity(r, schema, &row[c])?;
        row.push(e);
    }
    input.vars.push(shadow);
    Ok(input)
}

/// Rewrites the clauses so that variables bound by inputs read, where a clause uses them as
/// an entity (entity or attribute position, the value of a ref attribute, a rule argument
/// the rule uses so), a shadow variable holding the entity id the input names in that
/// clause's database. The variable itself keeps the input (Datomic returns a lookup ref
/// given as input as the lookup ref).
struct Shadows<'r, 'a> {
    readers: &'r Readers<'a>,
    rules: &'r BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>,
    input_vars: &'r [Var],
    next_var: Var,
    /// (input variable, source, shadow variable).
    made: Vec<(Var, usize, Var)>,
}

impl Shadows<'_, '_> {
    fn shadow(&mut self, v: Var, src: usize) -> Var {
        if let Some((_, _, s)) = self.made.iter().find(|(x, y, _)| *x == v && *y == src) {
            return *s;
        }
        let s = self.next_var;
        self.next_var += 1;
        self.made.push((v, src, s));
        s
    }

    fn term(&mut self, t: &mut Term, src: usize) {
        if let Term::Var(v) = t {
            if self.input_vars.contains(v) {
                *v = self.shadow(*v, src);
            }
        }
    }

    /// `dollar`: the source `$` stands for at top level (the clauses are the query's).
    fn clauses(&mut self, clauses: &mut [Clause], dollar: usize) -> Result<(), QueryError> {
        for c in clauses {
            match c {
                Clause::Pattern(src, p) => {
                    let src = if *src == 0 { dollar } else { *src };
                    let Some((_, schema)) = self.readers.get(&src) else {
                        continue;
                    };
                    let is_ref = matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref()));
                    self.term(&mut p.e, src);
                    if let AttrTerm::Var(v) = &mut p.a {
                        let mut t = Term::Var(*v);
                        self.term(&mut t, src);
                        p.a = AttrTerm::Var(t.var().expect("a variable"));
                    }
                    if is_ref {
                        self.term(&mut p.v, src);
                    }
                }
                Clause::Rule { name, args, src } => {
                    let src = if *src == 0 { dollar } else { *src };
                    let Some((r, schema)) = self.readers.get(&src) else {
                        continue;
                    };
                    let Some(bodies) = self.rules.get(&src).and_then(|r| r.get(name.as_str()))
                    else {
                        continue;
                    };
                    for (i, a) in args.iter_mut().enumerate() {
                        let entity_arg = bodies.iter().any(|b| {
                            b.head
                                .get(i)
                                .is_some_and(|h| uses_as_entity(&b.clauses, *h, schema))
                        });
                        if entity_arg {
                            // A constant argument (a scalar input) names its entity too.
                            if let Term::Const(c) = a {
                                *c = entity(r, schema, c)?;
                            }
                            self.term(a, src);
                        }
                    }
                }
                Clause::Or {
                    vars,
                    required,
                    branches,
                } => {
                    for b in branches.iter_mut() {
                        self.clauses(b, dollar)?;
                    }
                    let inner: Vec<Var> =
                        branches.iter().flatten().flat_map(Clause::vars).collect();
                    self.share(vars, Some(required), &inner);
                }
                Clause::Not { vars, clauses } => {
                    self.clauses(clauses, dollar)?;
                    let inner: Vec<Var> = clauses.iter().flat_map(Clause::vars).collect();
                    self.share(vars, None, &inner);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An `or`/`not` shares the shadows of the variables it shares, when its clauses use them.
    fn share(&self, vars: &mut Vec<Var>, required: Option<&mut Vec<Var>>, inner: &[Var]) {
        let mut req = required;
        for (v, _, s) in &self.made {
            if vars.contains(v) && inner.contains(s) && !vars.contains(s) {
                vars.push(*s);
                if let Some(r) = req.as_deref_mut() {
                    if r.contains(v) {
                        r.push(*s);
                    }
                }
            }
        }
    }
}

/// Whether `v` is an entity in one of `clauses` (directly, or in `or`/`not`).
fn uses_as_entity(clauses: &[Clause], v: Var, schema: &Schema) -> bool {
    clauses.iter().any(|c| match c {
        Clause::Pattern(0, p) => {
            p.e == Term::Var(v)
                || p.a == AttrTerm::Var(v)
                || (p.v == Term::Var(v)
                    && matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref())))
        }
        Clause::Or { branches, .. } => branches.iter().any(|b| uses_as_entity(b, v, schema)),
        Clause::Not { clauses, .. } => uses_as_entity(clauses, v, schema),
        _ => false,
    })
}

/// Entity constants (idents, lookup refs `[attr value]`, numbers) become entity ids in the
/// database of their clause; value constants of ref attributes too. A constant that names no
/// entity matches nothing. `dollar` is the source `$` stands for.
fn resolve_constants(
    readers: &Readers<'_>,
    dollar: usize,
    clauses: &[Clause],
) -> Result<Vec<Clause>, QueryError> {
    clauses
        .iter()
        .map(|c| {
            Ok(match c {
                Clause::Pattern(src, p) => {
                    let Some((r, schema)) = readers.get(&if *src == 0 { dollar } else { *src }) else {
                        return Ok(c.clone());
                    };
                    let e = match &p.e {
                        Term::Const(v) => Term::Const(constant_entity(r, schema, v)?),
                        t => t.clone(),
                    };
                    let is_ref = matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref()));
                    let v = match &p.v {
                        Term::Const(v) if is_ref => Term::Const(constant_entity(r, schema, v)?),
                        t => t.clone(),
                    };
                    Clause::Pattern(*src, Pattern { e, a: p.a.clone(), v })
                }
                Clause::Or { vars, required, branches } => Clause::Or {
                    vars: vars.clone(),
                    required: required.clone(),
                    branches: branches.iter().map(|b| resolve_constants(readers, dollar, b)).collect::<Result<_, _>>()?,
                },
                Clause::Not { vars, clauses } => Clause::Not { vars: vars.clone(), clauses: resolve_constants(readers, dollar, clauses)? },
                other => other.clone(),
            })
        })
        .collect()
}

/// Keeps `Query` reachable for documentation links.
pub type Lowered = Query;
