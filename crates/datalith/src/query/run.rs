//! Running a query: parse (cached by text), lower, resolve constants, execute, shape.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::error::QueryError;
use super::exec::{Ctx, Step, UserFn};
use super::find::{shape, UserAggregate};
use super::ir::{AttrTerm, Binding, Clause, InBinding, Pattern, Query, Term};
use super::lower::{lower, sections, Sections};
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

/// Runs `sections` on `db` with `inputs` (values for `:in` after the database).
pub fn run(
    db: &Db,
    s: &Sections,
    inputs: &[Edn],
    registry: &Registry,
    explain: bool,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Outcome, QueryError> {
    let schema = db.schema().clone();
    let (q, bindings) = lower(s, &schema, inputs)?;
    let r = db.reader();
    let clauses = resolve_constants(&r, &schema, &q.clauses)?;
    let rules: BTreeMap<_, _> = q
        .rules
        .iter()
        .map(|(k, bodies)| {
            let bodies = bodies
                .iter()
                .map(|b| {
                    Ok(super::ir::RuleBody {
                        clauses: resolve_constants(&r, &schema, &b.clauses)?,
                        ..b.clone()
                    })
                })
                .collect::<Result<Vec<_>, QueryError>>()?;
            Ok((k.clone(), bodies))
        })
        .collect::<Result<_, QueryError>>()?;
    let mut ctx = Ctx {
        row_spare: super::exec::ROW_SPARE,
        r,
        schema: &schema,
        sources: Default::default(),
        rules: &rules,
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
    // Input relations: `$x` sources and binding forms.
    let mut input = Relation::unit();
    let mut src_no = 1;
    for (b, value) in &bindings {
        match b {
            InBinding::Source => {
                ctx.sources.insert(src_no, tuples(value)?);
                src_no += 1;
            }
            InBinding::Bind(b) => input = input.join(&bind_input(b, value)?),
            InBinding::Rules => {}
        }
    }
    let keep: Vec<usize> = {
        let mut k: Vec<usize> = q.find.iter().map(super::ir::FindElem::var).collect();
        k.extend(&q.with);
        k
    };
    let rel = ctx.conj(&clauses, input, &keep)?;
    let steps = ctx.trace.take().unwrap_or_default();
    let result = shape(db, &q, rel, &registry.aggregates)?;
    Ok(Outcome { result, steps })
}

fn tuples(value: &Edn) -> Result<Relation, QueryError> {
    let Some(rows) = value.as_seq().or(match value {
        Edn::Set(s) => Some(s.as_slice()),
        _ => None,
    }) else {
        return Err(QueryError::Inputs(
            "a source is a collection of tuples".into(),
        ));
    };
    let mut out = Relation::empty(Vec::new());
    for r in rows {
        let items = r
            .as_seq()
            .ok_or_else(|| QueryError::Inputs("a source row is a vector".into()))?;
        out.rows.push(
            items
                .iter()
                .map(|i| {
                    value_from_edn(i)
                        .ok_or_else(|| QueryError::Inputs(format!("bad source value {i}")))
                })
                .collect::<Result<_, _>>()?,
        );
    }
    Ok(out)
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

/// Entity constants (idents, lookup refs `[attr value]`, numbers) become entity ids; value
/// constants of ref attributes too. An ident or lookup ref that names no entity is an error,
/// as in Datomic (an entity id that names none matches nothing).
fn resolve_constants(
    r: &IndexReader<'_>,
    schema: &Schema,
    clauses: &[Clause],
) -> Result<Vec<Clause>, QueryError> {
    let unresolved = |v: &Value| QueryError::UnresolvedKey {
        key: crate::edn::to_edn_string(&crate::edn::edn_from_value(v)),
    };
    let entity = |v: &Value| -> Result<Value, QueryError> {
        Ok(match v {
            Value::Long(n) if *n >= 0 => Value::Ref(*n as u64),
            Value::Keyword(k) => match schema.by_ident(k) {
                Some(a) => Value::Ref(a.id as u64),
                None => match r.first_entity_with(builtin::IDENT, v)? {
                    Some(e) => Value::Ref(e),
                    None => return Err(unresolved(v)),
                },
            },
            Value::Tuple(items) if items.len() == 2 => match (&items[0], &items[1]) {
                (Some(Value::Keyword(k)), Some(val)) => match schema.by_ident(k) {
                    Some(a) if a.unique.is_some() => {
                        let val = super::exec::coerce(schema, a.id, val);
                        match r.first_entity_with(a.id, &val)? {
                            Some(e) => Value::Ref(e),
                            None => return Err(unresolved(v)),
                        }
                    }
                    Some(_) => {
                        return Err(QueryError::LookupRefNotUnique {
                            attr: k.to_string(),
                            lookup_ref: crate::edn::to_edn_string(&crate::edn::edn_from_value(v)),
                        })
                    }
                    None => {
                        return Err(QueryError::UnknownAttribute {
                            attr: k.to_string(),
                            clause: crate::edn::to_edn_string(&crate::edn::edn_from_value(v)),
                        })
                    }
                },
                _ => v.clone(),
            },
            other => other.clone(),
        })
    };
    clauses
        .iter()
        .map(|c| {
            Ok(match c {
                Clause::Pattern(0, p) => {
                    let e = match &p.e {
                        Term::Const(v) => Term::Const(entity(v)?),
                        t => t.clone(),
                    };
                    let is_ref = matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref()));
                    let v = match &p.v {
                        Term::Const(v) if is_ref => Term::Const(entity(v)?),
                        t => t.clone(),
                    };
                    Clause::Pattern(0, Pattern { e, a: p.a.clone(), v })
                }
                Clause::Or { vars, required, branches } => Clause::Or {
                    vars: vars.clone(),
                    required: required.clone(),
                    branches: branches.iter().map(|b| resolve_constants(r, schema, b)).collect::<Result<_, _>>()?,
                },
                Clause::Not { vars, clauses } => Clause::Not { vars: vars.clone(), clauses: resolve_constants(r, schema, clauses)? },
                other => other.clone(),
            })
        })
        .collect()
}

/// Keeps `Query` reachable for documentation links.
pub type Lowered = Query;
