//! Running a query: parse (cached by text), lower, resolve constants, execute, shape.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::budget::{default_memory_limit, Budget, Interrupt};
use super::entities::{add_resolved_column, resolve_constants, Readers, Shadows};
use super::error::QueryError;
use super::exec::{Ctx, DbSource, Spread, SPREAD_FROM_ROWS};
use super::find::shape;
use super::inputs::{bind_input, check_arity, drop_rejected_rows, tuples, InputTests};
use super::ir::{Clause, FindElem, InBinding, Query, RuleBody};
use super::lower::{lower, InputKind};
use super::parse::{parse, QueryAst};
use super::plan::Plan;
use super::relation::Relation;
use super::result_rows::{ItemSink, ResultRows};
use crate::db::Db;
use crate::edn::Edn;

/// Parsed queries, by text. Parsing does not depend on the schema, so entries never go stale.
#[derive(Default)]
pub struct QueryCache {
    parsed: Mutex<HashMap<String, Arc<QueryAst>>>,
}

/// Entries kept before the cache is cleared (queries built by string concatenation would
/// otherwise grow it without bound).
const QUERY_CACHE_ENTRIES: usize = 4096;

impl QueryCache {
    /// The parsed form of `text`.
    pub fn parse(&self, text: &str) -> Result<Arc<QueryAst>, QueryError> {
        if let Some(s) = self
            .parsed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(text)
        {
            return Ok(s.clone());
        }
        let s = Arc::new(parse(text)?);
        let mut cache = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= QUERY_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(text.to_string(), s.clone());
        Ok(s)
    }
}

/// A query parsed once (`Db::prepare`), to run many times without its text.
#[derive(Clone)]
pub struct PreparedQuery {
    ast: Arc<QueryAst>,
}

impl PreparedQuery {
    /// A prepared query of a parsed one.
    pub fn new(ast: Arc<QueryAst>) -> PreparedQuery {
        PreparedQuery { ast }
    }

    /// The parsed query.
    pub fn ast(&self) -> &QueryAst {
        &self.ast
    }
}

impl std::fmt::Debug for PreparedQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedQuery({})", self.ast)
    }
}

/// User functions and aggregates callable from queries.
pub use crate::db::QueryFunctions as Registry;

/// A query's result and, when asked, its plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The result.
    pub result: Edn,
    /// The plan as it ran, when asked for ([`QueryOptions::explain`]).
    pub plan: Option<Plan>,
}

/// A query's answer: whole, or (when asked for and the result is a collection of its rows)
/// its rows, each made into EDN as it is taken ([`crate::Db::q_rows`]).
#[derive(Debug)]
pub enum Answer {
    /// The whole result, and the plan when asked for.
    Whole(Outcome),
    /// The result's items, one a row of the engine's last relation.
    Rows(ResultRows),
}

/// What the caller of [`answer`] wants of a result that is a collection of its rows (other
/// results, and any result whose plan is asked for, come whole).
pub enum Want<'s> {
    /// The whole result.
    Whole,
    /// Its rows ([`Answer::Rows`]).
    Rows,
    /// Each item handed to the sink as it is made, the engine's rows made a part at a time
    /// where the plan allows (`exec::parts`; [`answer`] then returns `None`).
    Each(&'s mut dyn ItemSink),
}

impl Answer {
    /// The whole result (its rows made into it, when it came as rows).
    pub fn into_outcome(self) -> Result<Outcome, QueryError> {
        match self {
            Answer::Whole(outcome) => Ok(outcome),
            Answer::Rows(rows) => Ok(Outcome {
                result: rows.into_edn()?,
                plan: None,
            }),
        }
    }
}

/// How to run one query: its limits and whether to record the plan. Limits written in the
/// query text (`:timeout`, `:memory-limit`) take precedence over these.
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct QueryOptions<'a> {
    /// Stop with [`QueryError::Timeout`] after this many milliseconds.
    pub timeout_ms: Option<u64>,
    /// Stop with [`QueryError::Cancelled`] once this flag is set (from another thread, such
    /// as the shell's Ctrl-C handler).
    pub cancel: Option<&'a AtomicBool>,
    /// Stop with [`QueryError::Cancelled`] once this answers yes (asked now and then on the
    /// query's own thread; see [`Interrupt`]).
    pub interrupt: Option<Interrupt<'a>>,
    /// Stop with [`QueryError::ResourceExhausted`] once the rows the query holds are
    /// estimated at more than this many bytes (default: the database's limit, else a quarter
    /// of physical memory; see `query::budget`).
    pub memory_limit: Option<u64>,
    /// Record the plan ([`Outcome::plan`]).
    pub explain: bool,
    /// The most threads the query runs on, its caller's included (default: the machine's
    /// cores, at most [`crate::limits::MAX_QUERY_THREADS`]; 1 keeps it on the caller's
    /// thread). From a step of many rows on, the rest of a conjunction runs in parts, one a
    /// thread (`exec::spread`); the answer is the same, though without `:order-by` the order
    /// of its rows (and so which rows a `:limit` keeps) may differ with the thread count.
    pub threads: Option<usize>,
    /// Rows of a step from which the rest is spread over the threads (default
    /// [`crate::query::exec::SPREAD_FROM_ROWS`]): for tests, which spread small queries.
    #[doc(hidden)]
    pub spread_from_rows: Option<usize>,
    /// Datoms of a first step read in one part when items are handed on (default
    /// [`crate::limits::QUERY_PART_ROWS`]): for tests, which read small queries in parts.
    #[doc(hidden)]
    pub part_rows: Option<usize>,
}

impl<'a> QueryOptions<'a> {
    /// Options with a timeout in milliseconds.
    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Options with a cancellation flag.
    pub fn cancel(mut self, flag: &'a AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Options with an interrupt question.
    pub fn interrupt(mut self, ask: &'a (dyn Fn() -> bool + Sync)) -> Self {
        self.interrupt = Some(Interrupt(ask));
        self
    }

    /// Options with a memory limit in bytes.
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Options that record the plan.
    pub fn explain(mut self, explain: bool) -> Self {
        self.explain = explain;
        self
    }

    /// Options that run the query on at most `n` threads (see [`QueryOptions::threads`]).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Options that read a first step in parts of `rows` datoms when items are handed on
    /// (tests).
    #[doc(hidden)]
    pub fn part_rows(mut self, rows: usize) -> Self {
        self.part_rows = Some(rows);
        self
    }

    /// Options that spread the rest of a conjunction from a step of `rows` rows on (tests).
    #[doc(hidden)]
    pub fn spread_from_rows(mut self, rows: usize) -> Self {
        self.spread_from_rows = Some(rows);
        self
    }
}

/// One query input as the engine reads it: a database or a value.
#[derive(Clone, Copy)]
pub enum InputRef<'a> {
    /// A database (a data source).
    Db(&'a Db),
    /// A value: a scalar, a collection, a relation (also usable as a data source), or rules.
    Value(&'a Edn),
    /// A database's transaction log, bound to a variable as [`LOG_MARKER`] (for `tx-ids`
    /// and `tx-data`).
    Log(&'a Db),
}

/// The value a log input's variable holds: the query reads the log itself from its context.
pub const LOG_MARKER: &str = ":datalith/log";

/// Runs `s` on `inputs`, one for each `:in` form; `implicit` is `$` when `:in` does not name
/// it (the receiver of [`Db::q`]). A result that is a collection of its rows (see
/// [`ResultRows::fit`]), no plan asked for, comes back as `want` says: `None` when its items
/// were handed to the sink.
pub fn answer(
    s: &QueryAst,
    inputs: &[InputRef<'_>],
    implicit: Option<&Db>,
    registry: &Registry,
    options: &QueryOptions<'_>,
    want: Want<'_>,
) -> Result<Option<Answer>, QueryError> {
    let marker = Edn::Keyword(crate::codec::Keyword::parse(LOG_MARKER));
    let kinds: Vec<InputKind<'_>> = inputs
        .iter()
        .map(|i| match i {
            InputRef::Db(d) => InputKind::Db(d.schema()),
            InputRef::Value(v) => InputKind::Value(v),
            InputRef::Log(_) => InputKind::Value(&marker),
        })
        .collect();
    let log = inputs.iter().find_map(|i| match i {
        InputRef::Log(d) => Some(d.reader()),
        _ => None,
    });
    let (mut q, bindings) = lower(s, &kinds, implicit.map(|d| &**d.schema()))?;
    // First in, last out: every relation of the run is dropped while the scope knows whether
    // the run stopped (see `budget::FreeAfterStop`).
    let _scope = super::budget::RunScope::enter();
    let budget = Budget::new(
        q.timeout_ms.or(options.timeout_ms),
        options.cancel,
        q.memory_limit
            .or(options.memory_limit)
            .unwrap_or_else(default_memory_limit),
    )
    .with_interrupt(options.interrupt);
    // A flag set before the query starts stops it before any work (the loops look only
    // every `CHECK_EVERY` steps, and a small query may not take that many).
    budget.check()?;
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
                InputRef::Log(_) => {
                    return Err(QueryError::Inputs(format!(
                        "{} is bound to a log, which is not a data source: bind it to a variable (?log) for tx-ids and tx-data",
                        q.source_names[*n]
                    )))
                }
            }
        }
    }
    if let (false, Some(d)) = (dbs.contains_key(&0) || relations.contains_key(&0), implicit) {
        dbs.insert(0, d);
    }
    // A query of the log alone (`:in ?log`) runs on the log's database.
    if dbs.is_empty() && !relations.contains_key(&0) {
        if let Some(d) = inputs.iter().find_map(|i| match i {
            InputRef::Log(d) => Some(*d),
            _ => None,
        }) {
            dbs.insert(0, d);
        }
    }
    let home_src = pull_source(&q, &dbs)?;
    let home = dbs[&home_src];
    let readers: Readers<'_> = dbs
        .iter()
        .map(|(n, d)| (*n, (d.reader(), &**d.schema())))
        .collect();
    let times: BTreeMap<usize, crate::store::TimeFilter> =
        dbs.iter().map(|(n, d)| (*n, d.time_filter())).collect();
    let clauses = resolve_constants(&readers, 0, &q.clauses)?;
    let all_rules = resolve_rules(&q, &readers)?;
    for (n, rules) in &all_rules {
        for b in rules.values().flatten() {
            check_arity(&b.clauses, *n, &relations, &q.source_names, &[])?;
        }
    }
    check_arity(&clauses, 0, &relations, &q.source_names, &q.var_names)?;
    // Binding forms.
    let tests = InputTests::new(&clauses, |n| registry.functions.contains_key(n));
    let mut input = Relation::unit();
    for (b, pos) in &bindings {
        let value = match inputs[*pos] {
            InputRef::Value(v) => Some(v),
            InputRef::Log(_) => Some(&marker),
            InputRef::Db(_) => None,
        };
        if let (InBinding::Bind(b), Some(value)) = (b, value) {
            let form = crate::edn::to_edn_string(&s.inputs[*pos].form.edn);
            let bound = bind_input(&form, b, value, &tests, &budget)?;
            // The first binding is the relation (a join with the unit relation would copy
            // every row of a large input).
            input = if input.vars.is_empty() && input.rows.len() == 1 {
                bound
            } else {
                input.join(&bound, &budget)?
            };
        }
    }
    // Tests on the inputs alone first, so that deduplication and entity resolution see only
    // the rows that can reach the answer.
    drop_rejected_rows(&mut input, &tests, &budget)?;
    input.dedup(&budget)?;
    // Inputs used as entities read their entity id there, and keep their own value.
    let mut clauses = clauses;
    let input_vars = input.vars.clone();
    let shadows =
        Shadows::new(&readers, &all_rules, &input_vars, q.var_names.len()).rewrite(&mut clauses)?;
    for (v, src, lenient, shadow) in &shadows {
        q.var_names
            .push(format!("{}@{}", q.var_names[*v], q.source_names[*src]));
        input = add_resolved_column(input, *v, *shadow, *lenient, &readers[src])?;
    }
    // A pulled input variable is pulled as the entity it names.
    for f in &mut q.find {
        if let FindElem::Pull { var, .. } = f {
            if input.binds(*var) {
                let shadow = q.var_names.len();
                q.var_names.push(format!("{}@pull", q.var_names[*var]));
                input = add_resolved_column(input, *var, shadow, false, &readers[&home_src])?;
                *var = shadow;
            }
        }
    }
    let no_rules = BTreeMap::new();
    let mut ctx = Ctx {
        row_spare: super::exec::ROW_SPARE,
        r: readers[&home_src].0,
        schema: readers[&home_src].1,
        time: times[&home_src],
        log,
        sources: Default::default(),
        dbs: readers
            .iter()
            .map(|(n, (r, schema))| (*n, DbSource::new(*r, schema, times[n])))
            .collect(),
        dollar: 0,
        active: home_src,
        rules: all_rules.get(&0).unwrap_or(&no_rules),
        source_rules: &all_rules,
        functions: &registry.functions,
        budget,
        trace: options.explain.then(Vec::new),
        var_names: q.var_names.clone().into(),
        rule_memo: Default::default(),
        ave_lists: Default::default(),
        depth: 0,
        spread: Some(Spread {
            dbs: dbs.iter().map(|(n, d)| (*n, *d)).collect(),
            threads: options.threads.unwrap_or_else(crate::limits::query_threads),
            from_rows: options.spread_from_rows.unwrap_or(SPREAD_FROM_ROWS),
        }),
        part: None,
    };
    ctx.sources.extend(relations);
    let keep: Vec<usize> = {
        let mut k: Vec<usize> = q.find.iter().map(super::ir::FindElem::var).collect();
        k.extend(&q.with);
        k
    };
    let rows = ctx.trace.is_none() && ResultRows::fit(&q);
    let wants_rows = matches!(want, Want::Rows);
    if let (Want::Each(sink), true) = (want, rows) {
        sink.begin(ResultRows::is_set_of(&q))?;
        let rows_per_part = options.part_rows.unwrap_or(crate::limits::QUERY_PART_ROWS);
        ctx.conj_in_parts(&clauses, input, &keep, rows_per_part, &mut |rel| {
            ResultRows::new(home, &q, rel).hand_to(sink)
        })?;
        return Ok(None);
    }
    let rel = ctx.conj(&clauses, input, &keep)?;
    let steps = ctx.trace.take();
    if rows && wants_rows {
        return Ok(Some(Answer::Rows(ResultRows::new(home, &q, rel))));
    }
    let result = shape(home, &q, rel, &registry.aggregates, &ctx.budget)?;
    let plan = steps.map(|steps| Plan::new(s, steps, &result));
    Ok(Some(Answer::Whole(Outcome { result, plan })))
}

/// The database the result's pulls read: the one they name (`$` by default); with no pull,
/// `$` or the first one (the engine runs on one).
fn pull_source(q: &Query, dbs: &BTreeMap<usize, &Db>) -> Result<usize, QueryError> {
    let pulled: std::collections::BTreeSet<usize> = q
        .find
        .iter()
        .filter_map(|f| match f {
            FindElem::Pull { src, .. } => Some(*src),
            _ => None,
        })
        .collect();
    match pulled.iter().collect::<Vec<_>>().as_slice() {
        [] => dbs.keys().next().copied().ok_or(QueryError::NoDatabase),
        [src] if dbs.contains_key(src) => Ok(**src),
        [src] => Err(QueryError::UnknownSource {
            name: q.source_names[**src].clone(),
            clause: "(pull ...)".to_string(),
        }),
        _ => Err(QueryError::Inputs(
            "pulls from several databases in one :find are not supported".to_string(),
        )),
    }
}

/// The query's rules with their constants resolved, by the source they were lowered for
/// (their `$`).
fn resolve_rules(
    q: &Query,
    readers: &Readers<'_>,
) -> Result<BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>, QueryError> {
    let mut all = BTreeMap::new();
    // Rules never called with `$` are not resolved against it (a constant they name might
    // exist only in the database they are called with).
    let with_dollar = calls_rules(&q.clauses).then_some((0, &q.rules));
    let lowered = with_dollar
        .into_iter()
        .chain(q.source_rules.iter().map(|(n, r)| (*n, r)));
    for (n, rules) in lowered {
        let mut resolved = BTreeMap::new();
        for (name, bodies) in rules {
            let bodies = bodies
                .iter()
                .map(|b| {
                    Ok(RuleBody {
                        clauses: resolve_constants(readers, n, &b.clauses)?,
                        ..b.clone()
                    })
                })
                .collect::<Result<Vec<_>, QueryError>>()?;
            resolved.insert(name.clone(), bodies);
        }
        all.insert(n, resolved);
    }
    Ok(all)
}

/// Whether a clause calls a rule with the query's own `$`.
fn calls_rules(clauses: &[Clause]) -> bool {
    clauses.iter().any(|c| match c {
        Clause::Rule { src, .. } => *src == 0,
        Clause::Or { branches, .. } => branches.iter().any(|b| calls_rules(b)),
        Clause::Not { clauses, .. } => calls_rules(clauses),
        _ => false,
    })
}
