//! Datomic conformance: every case of `tests/conformance/cases/` runs on Datalith and its
//! answer is compared with the real Datomic peer's, recorded in
//! `tests/conformance/datomic-answers.edn` by `bench/peers/datomic/conformance.clj` (see
//! bench/peers/README.md, "Conformance answers"), so no JVM is needed here.
//!
//! A case expecting an error passes when Datalith refuses too, with Datomic's category where
//! Datomic names one (`:db.error/...`). `tests/conformance/pending.edn` lists the cases known to fail, with why: the test
//! fails when any other case fails, and when a pending case passes (take it off the list).
//!
//! The time group (`cases/time.edn`) runs on views of the database in time (as-of, since,
//! history) and on its log, through `tests/conformance/time_api.rs`; the cases of
//! `tests/conformance/documented-answers.edn` (group `time-doc`) are compared with answers
//! derived from Datomic's documentation, which the in-memory peer cannot give.
//!
//! `cargo test -p datalith --test conformance -- --nocapture` prints the per-group table and
//! every failing case with Datomic's answer and Datalith's; `CONFORMANCE_FILTER=pull/` runs
//! only the cases whose id contains the text.

#[path = "conformance/cases.rs"]
mod cases;
#[path = "conformance/compare.rs"]
mod compare;
#[path = "conformance/time_api.rs"]
mod time_api;

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cases::{get, Action, Answer, Case, Dataset, TimeBody};
use compare::{canon, find_shape, same_answer, without_db_id, Ordered, Shape};
use datalith::edn::{edn_from_value, to_edn_string, Edn};
use datalith::query::QueryOptions;
use datalith::raw::{Components, Index};
use datalith::{Database, Db, DbOptions, Eid, Input};
use time_api::{Point, Refused};

/// A query running longer than this is cancelled and fails its case.
const QUERY_TIME_LIMIT: Duration = Duration::from_secs(20);

/// What Datalith did with a case.
enum Got {
    Value(Edn),
    /// Datalith refused (query or transaction error): the message, and the error's category
    /// code (`:db.error/...` or `:datalith.error/...`) when it has one.
    Error(String, Option<&'static str>),
    /// The case cannot be put to Datalith's API at all.
    Unsupported(String),
}

/// A database holding a dataset; fields drop in order, so it closes before its directory goes.
struct Loaded {
    db: Database,
    /// The bases of a time case: the tx id of the state after the dataset's data, then of
    /// each of its `:txs`.
    points: Vec<u64>,
    _dir: tempfile::TempDir,
}

fn load(dataset: &Dataset) -> Result<Loaded, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let db = Database::open(dir.path(), DbOptions::default()).map_err(|e| e.to_string())?;
    for tx in [&dataset.schema, &dataset.data] {
        if tx.as_seq().is_some_and(|s| !s.is_empty()) {
            transact(&db, tx).map_err(|e| format!("loading the dataset: {e}"))?;
        }
    }
    let after_data = db
        .db()
        .map_err(|e| e.to_string())?
        .basis_t()
        .map_err(|e| e.to_string())?;
    let mut points = vec![after_data];
    for tx in &dataset.txs {
        let report = transact_report(&db, tx)
            .map_err(|(e, _)| format!("loading the dataset's :txs: {e}"))?;
        points.push(report.tx);
    }
    Ok(Loaded {
        db,
        points,
        _dir: dir,
    })
}

fn transact(db: &Database, tx: &Edn) -> Result<(), String> {
    refused_tx(db, tx).map_err(|(message, _)| message)
}

/// A transaction's refusal with its category code.
fn refused_tx(db: &Database, tx: &Edn) -> Result<(), (String, Option<&'static str>)> {
    transact_report(db, tx).map(|_| ())
}

/// Transacts `tx`: its report, or its refusal with the category code.
fn transact_report(
    db: &Database,
    tx: &Edn,
) -> Result<datalith::TxReport, (String, Option<&'static str>)> {
    let data =
        datalith::TxData::from_edn(tx).map_err(|e| (e.to_string(), Some(e.category().code)))?;
    db.transact(data)
        .map_err(|e| (e.to_string(), Some(e.category().code)))
}

fn is_db_placeholder(e: &Edn) -> bool {
    get(e, ":conformance/db").is_some()
}

/// Runs a query whose inputs hold other databases, Datomic style: every `:in` input given
/// (the case's database first, then its inputs with each placeholder loaded).
fn query_with_databases(
    db: &Db,
    query: &Edn,
    inputs: &[Edn],
    datasets: &BTreeMap<String, Dataset>,
) -> Got {
    let mut loaded = Vec::new();
    let mut all = vec![Input::Db(db.clone())];
    for input in inputs {
        let Some(name) = get(input, ":conformance/db") else {
            all.push(Input::Value(input.clone()));
            continue;
        };
        let name = to_edn_string(name).trim_start_matches(':').to_string();
        let Some(dataset) = datasets.get(&name) else {
            return Got::Unsupported(format!("no dataset {name}"));
        };
        let other = match load(dataset) {
            Ok(l) => l,
            Err(e) => return Got::Unsupported(e),
        };
        match other.db.db() {
            Ok(d) => all.push(Input::Db(d)),
            Err(e) => return Got::Unsupported(e.to_string()),
        }
        loaded.push(other);
    }
    match datalith::q(&to_edn_string(query), &all) {
        Ok(v) => Got::Value(v),
        Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
    }
}

/// Runs a query, cancelling it after [`QUERY_TIME_LIMIT`].
fn query(db: &Db, query: &Edn, inputs: &[Edn]) -> Got {
    let text = to_edn_string(query);
    let cancel = AtomicBool::new(false);
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let cancel = &cancel;
    std::thread::scope(|s| {
        s.spawn(move || {
            if wait.recv_timeout(QUERY_TIME_LIMIT).is_err() {
                cancel.store(true, Ordering::Relaxed);
            }
        });
        let result = db.q_cancellable(&text, inputs, cancel);
        let _ = done.send(());
        match result {
            Ok(v) => Got::Value(v),
            Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
        }
    })
}

// --- the time group -------------------------------------------------------------------

fn time_refusal(Refused(message, code): Refused) -> Got {
    Got::Error(message, code)
}

/// The database `now` in the time view `spec` (`:now`, `:history`, or a vector of steps
/// `:as-of k`, `:since k`, `:as-of-instant inst`, `:since-instant inst`, `:history`), `k`
/// naming the basis `points[k]`.
fn time_view(now: &Db, spec: &Edn, points: &[u64]) -> Result<Db, Got> {
    let steps: Vec<Edn> = match spec {
        Edn::Keyword(k) if k.to_string() == ":now" => Vec::new(),
        Edn::Keyword(k) if k.to_string() == ":history" => vec![spec.clone()],
        Edn::Vector(steps) => steps.clone(),
        other => {
            return Err(Got::Unsupported(format!(
                "a time view is :now, :history or a vector of steps, not {}",
                to_edn_string(other)
            )))
        }
    };
    let basis = |arg: Option<&Edn>| match arg {
        Some(Edn::Long(k)) if *k >= 0 && (*k as usize) < points.len() => {
            Ok(Point::Tx(points[*k as usize]))
        }
        other => Err(Got::Unsupported(format!(
            "no basis {} (there are {})",
            other.map(to_edn_string).unwrap_or_default(),
            points.len()
        ))),
    };
    let instant = |arg: Option<&Edn>| match arg {
        Some(Edn::Inst(ms)) => Ok(Point::Instant(*ms)),
        other => Err(Got::Unsupported(format!(
            "not an instant: {}",
            other.map(to_edn_string).unwrap_or_default()
        ))),
    };
    let mut db = now.clone();
    let mut i = 0;
    while i < steps.len() {
        let op = to_edn_string(&steps[i]);
        let arg = steps.get(i + 1);
        i += 2;
        db = match op.as_str() {
            ":history" => {
                i -= 1;
                Ok(time_api::history(&db))
            }
            ":as-of" => time_api::as_of(&db, basis(arg)?),
            ":since" => time_api::since(&db, basis(arg)?),
            ":as-of-instant" => time_api::as_of(&db, instant(arg)?),
            ":since-instant" => time_api::since(&db, instant(arg)?),
            other => return Err(Got::Unsupported(format!("unknown time view step {other}"))),
        }
        .map_err(time_refusal)?;
    }
    Ok(db)
}

/// The inputs of a time query: the view first, then each input with its placeholder
/// resolved. Databases loaded for `{:conformance/db name}` are kept in `loaded`.
fn time_inputs(
    view: Db,
    now: &Db,
    inputs: &[Edn],
    points: &[u64],
    datasets: &BTreeMap<String, Dataset>,
    loaded: &mut Vec<Loaded>,
) -> Result<Vec<Input>, Got> {
    let mut all = vec![Input::Db(view)];
    for input in inputs {
        let next = if let Some(name) = get(input, ":conformance/db") {
            let name = to_edn_string(name).trim_start_matches(':').to_string();
            let dataset = datasets
                .get(&name)
                .ok_or_else(|| Got::Unsupported(format!("no dataset {name}")))?;
            let other = load(dataset).map_err(Got::Unsupported)?;
            let db = other.db.db().map_err(|e| Got::Unsupported(e.to_string()))?;
            loaded.push(other);
            Input::Db(db)
        } else if let Some(spec) = get(input, ":conformance/time") {
            Input::Db(time_view(now, spec, points)?)
        } else if get(input, ":conformance/log").is_some() {
            time_api::log(now)
        } else if let Some(k) = get(input, ":conformance/tx")
            // The t of basis k (Datomic's fulltext binds a t as its ?tx): Datalith's t is the
            // transaction's id, so both placeholders give it.
            .or_else(|| get(input, ":conformance/t"))
        {
            match k {
                Edn::Long(k) if *k >= 0 && (*k as usize) < points.len() => {
                    Input::Value(Edn::Long(points[*k as usize] as i64))
                }
                other => {
                    return Err(Got::Unsupported(format!(
                        "no basis {} for :conformance/tx or :conformance/t",
                        to_edn_string(other)
                    )))
                }
            }
        } else {
            Input::Value(input.clone())
        };
        all.push(next);
    }
    Ok(all)
}

/// Runs a query on `inputs`, cancelling it after [`QUERY_TIME_LIMIT`].
fn query_inputs(query: &Edn, inputs: &[Input]) -> Got {
    let text = to_edn_string(query);
    let cancel = AtomicBool::new(false);
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let cancel = &cancel;
    std::thread::scope(|s| {
        s.spawn(move || {
            if wait.recv_timeout(QUERY_TIME_LIMIT).is_err() {
                cancel.store(true, Ordering::Relaxed);
            }
        });
        let result = datalith::q_with(&text, inputs, &QueryOptions::default().cancel(cancel));
        let _ = done.send(());
        match result {
            Ok(o) => Got::Value(o.result),
            Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
        }
    })
}

/// `d/datoms` of `view` as rows `[attribute value tx-position added]`.
fn datom_rows(view: &Db, spec: &[Edn], points: &[u64]) -> Got {
    let Some((index, components)) = spec.split_first() else {
        return Got::Unsupported(":datoms needs an index".into());
    };
    let name = to_edn_string(index);
    let Some(index) = Index::parse(&name) else {
        return Got::Unsupported(format!("no index {name}"));
    };
    let c = match Components::from_edn(view, index, components) {
        Ok(Some(c)) => c,
        // An entity the view does not know has no datoms.
        Ok(None) => return Got::Value(Edn::Vector(Vec::new())),
        Err(e) => return Got::Error(e.to_string(), Some(e.category().code)),
    };
    match view.datoms(index, &c) {
        Ok(datoms) => Got::Value(Edn::Vector(
            datoms
                .iter()
                .map(|d| {
                    let attr = match view.schema().get(d.a) {
                        Some(a) => Edn::Keyword(a.ident.clone()),
                        None => Edn::Long(i64::from(d.a)),
                    };
                    let position = points.iter().take_while(|p| **p < d.tx).count();
                    Edn::Vector(vec![
                        attr,
                        edn_from_value(&d.v),
                        Edn::Long(position as i64),
                        Edn::Bool(d.added),
                    ])
                })
                .collect(),
        )),
        Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
    }
}

/// A time case: its transactions after the dataset's, then its body on the view.
fn run_time(
    loaded: &Loaded,
    txs: &[Edn],
    spec: &Edn,
    body: &TimeBody,
    datasets: &BTreeMap<String, Dataset>,
) -> Got {
    let conn = &loaded.db;
    let mut points = loaded.points.clone();
    for tx in txs {
        match transact_report(conn, tx) {
            Ok(report) => points.push(report.tx),
            Err((message, code)) => return Got::Error(message, code),
        }
    }
    let now = match conn.db() {
        Ok(db) => db,
        Err(e) => return Got::Unsupported(e.to_string()),
    };
    let view = match time_view(&now, spec, &points) {
        Ok(v) => v,
        Err(got) => return got,
    };
    match body {
        TimeBody::Query { query, inputs } => {
            let mut others = Vec::new();
            match time_inputs(view, &now, inputs, &points, datasets, &mut others) {
                Ok(all) => query_inputs(query, &all),
                Err(got) => got,
            }
        }
        TimeBody::Pull { pattern, eid } => match Eid::from_edn(eid) {
            Ok(e) => match view.pull(&to_edn_string(pattern), e) {
                Ok(v) => Got::Value(v),
                Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
            },
            Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
        },
        TimeBody::Datoms { spec } => datom_rows(&view, spec, &points),
    }
}

fn run(
    case: &Case,
    datasets: &BTreeMap<String, Dataset>,
    shared: &mut HashMap<String, Loaded>,
) -> Got {
    let Some(dataset) = datasets.get(&case.dataset) else {
        return Got::Unsupported(format!("no dataset {}", case.dataset));
    };
    let fresh;
    let loaded = match &case.action {
        Action::Tx { .. } | Action::Time { .. } | Action::Report { .. } => {
            fresh = match load(dataset) {
                Ok(l) => l,
                Err(e) => return Got::Unsupported(e),
            };
            &fresh
        }
        _ => {
            if !shared.contains_key(&case.dataset) {
                match load(dataset) {
                    Ok(l) => shared.insert(case.dataset.clone(), l),
                    Err(e) => return Got::Unsupported(e),
                };
            }
            &shared[&case.dataset]
        }
    };
    let conn = &loaded.db;
    let db = || conn.db().map_err(|e| e.to_string());
    let outcome = catch_unwind(AssertUnwindSafe(|| match &case.action {
        Action::Query { query: q, inputs } => match db() {
            Ok(db) if inputs.iter().any(is_db_placeholder) => {
                query_with_databases(&db, q, inputs, datasets)
            }
            Ok(db) => query(&db, q, inputs),
            Err(e) => Got::Unsupported(e),
        },
        Action::Pull { pattern, eid } => {
            let db = match db() {
                Ok(db) => db,
                Err(e) => return Got::Unsupported(e),
            };
            // The library resolves the entity, as a caller's pull does (an ident or lookup
            // ref that names nothing pulls as nil).
            match Eid::from_edn(eid) {
                Ok(e) => match db.pull(&to_edn_string(pattern), e) {
                    Ok(v) => Got::Value(v),
                    Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
                },
                Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
            }
        }
        Action::Tx {
            txs,
            then,
            then_inputs,
        } => {
            for tx in txs {
                if let Err((message, code)) = refused_tx(conn, tx) {
                    return Got::Error(message, code);
                }
            }
            match db() {
                Ok(db) => query(&db, then, then_inputs),
                Err(e) => Got::Unsupported(e),
            }
        }
        Action::Time { txs, view, body } => run_time(loaded, txs, view, body, datasets),
        Action::Report { txs, report } => {
            for tx in txs {
                if let Err((message, code)) = refused_tx(conn, tx) {
                    return Got::Error(message, code);
                }
            }
            // The same transaction through `Db::with` first (speculative, a path of its own):
            // its report must be the committed one's.
            let with = match db() {
                Ok(db) => with_answer(&db, report),
                Err(e) => return Got::Unsupported(e),
            };
            let committed = match transact_report(conn, report) {
                Ok(r) => match db() {
                    Ok(db) => Got::Value(ids_as_placeholders(&db, report_answer(&db, &r))),
                    Err(e) => Got::Unsupported(e),
                },
                Err((message, code)) => Got::Error(message, code),
            };
            match (&with, &committed) {
                (Got::Value(w), Got::Value(c))
                    if canon(w, &Ordered::new()) != canon(c, &Ordered::new()) =>
                {
                    Got::Error(
                        format!(
                            "Db::with reported {} where transact reported {}",
                            to_edn_string(w),
                            to_edn_string(c)
                        ),
                        None,
                    )
                }
                (Got::Value(_), Got::Error(..)) | (Got::Error(..), Got::Value(_)) => Got::Error(
                    "Db::with and transact disagree on whether the transaction holds".into(),
                    None,
                ),
                _ => committed,
            }
        }
    }));
    let got = outcome.unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Got::Unsupported(format!("panicked: {msg}"))
    });
    match (got, case.ids_as_placeholders) {
        (Got::Value(v), true) => match db() {
            Ok(db) => Got::Value(ids_as_placeholders(&db, v)),
            Err(e) => Got::Unsupported(e),
        },
        (got, _) => got,
    }
}

/// What `Db::with` on `db` reports for `tx`, as [`report_answer`] with entity placeholders
/// read from its `db_after` (its new entities exist nowhere else).
fn with_answer(db: &Db, tx: &Edn) -> Got {
    let outcome = datalith::TxData::from_edn(tx)
        .map_err(|e| (e.to_string(), Some(e.category().code)))
        .and_then(|data| {
            db.with(data)
                .map_err(|e| (e.to_string(), Some(e.category().code)))
        });
    match outcome {
        Ok(r) => match r.db_after() {
            Ok(after) => Got::Value(ids_as_placeholders(&after, report_answer(&after, &r))),
            Err(e) => Got::Unsupported(e.to_string()),
        },
        Err((message, code)) => Got::Error(message, code),
    }
}

/// A report as the harness answers it (`cases::Action::Report`): the tempid strings, sorted,
/// and each datom `[e attribute v added]` with the transaction entity `:conformance/tx` and
/// `:db/txInstant`'s value `:conformance/instant`.
fn report_answer(db: &Db, r: &datalith::TxReport) -> Edn {
    let mut tempids: Vec<String> = r
        .tempids_edn()
        .into_iter()
        .filter_map(|(k, _)| match k {
            Edn::String(s) => Some(s),
            _ => None,
        })
        .collect();
    tempids.sort();
    let schema = db.schema();
    let tx = || Edn::kw(":conformance/tx");
    let rows = r
        .tx_data
        .iter()
        .map(|d| {
            let attr = schema
                .get(d.a)
                .expect("a report's attribute is in the schema");
            let ident = Edn::Keyword(attr.ident.clone());
            let v = if to_edn_string(&ident) == ":db/txInstant" {
                Edn::kw(":conformance/instant")
            } else if attr.is_ref() && edn_from_value(&d.v) == Edn::Long(r.tx as i64) {
                tx()
            } else {
                edn_from_value(&d.v)
            };
            let e = if d.e == r.tx {
                tx()
            } else {
                Edn::Long(d.e as i64)
            };
            Edn::Vector(vec![e, ident, v, Edn::Bool(d.added)])
        })
        .collect();
    Edn::Map(vec![
        (
            Edn::kw(":tempids"),
            Edn::Vector(tempids.into_iter().map(Edn::String).collect()),
        ),
        (Edn::kw(":tx-data"), Edn::Vector(rows)),
    ])
}

/// `answer` with every number that is an entity of `db` (1000 or more, with datoms now or in
/// the past) replaced by `:conformance/id`, as the harness does to Datomic's answer.
fn ids_as_placeholders(db: &Db, answer: Edn) -> Edn {
    let history = db.history();
    let is_entity = |n: i64| {
        n >= 1000
            && history
                .datoms(
                    Index::Eav,
                    &Components {
                        e: Some(n as u64),
                        ..Default::default()
                    },
                )
                .is_ok_and(|d| !d.is_empty())
    };
    replace_ids(&is_entity, answer)
}

fn replace_ids(is_entity: &dyn Fn(i64) -> bool, answer: Edn) -> Edn {
    let all = |items: Vec<Edn>| -> Vec<Edn> {
        items
            .into_iter()
            .map(|i| replace_ids(is_entity, i))
            .collect()
    };
    match answer {
        Edn::Long(n) if is_entity(n) => Edn::kw(":conformance/id"),
        Edn::Vector(items) => Edn::Vector(all(items)),
        Edn::List(items) => Edn::List(all(items)),
        Edn::Set(items) => Edn::Set(all(items)),
        Edn::Map(pairs) => Edn::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (replace_ids(is_entity, k), replace_ids(is_entity, v)))
                .collect(),
        ),
        other => other,
    }
}

fn shape_of(case: &Case) -> Shape {
    match &case.action {
        Action::Query { query, .. } => find_shape(query),
        Action::Tx { then, .. } => find_shape(then),
        Action::Pull { .. } | Action::Report { .. } => Shape::Value,
        Action::Time { body, .. } => match body {
            TimeBody::Query { query, .. } => find_shape(query),
            TimeBody::Pull { .. } => Shape::Value,
            // Rows in index order; compared as a multiset (entity ids, which differ between
            // systems, order them).
            TimeBody::Datoms { .. } => Shape::Relation,
        },
    }
}

/// Whether Datalith's outcome is Datomic's answer; otherwise a line saying what differs.
fn verdict(case: &Case, want: &Answer, got: &Got, ordered: &Ordered) -> Result<(), String> {
    match (want, got) {
        (_, Got::Unsupported(why)) => Err(format!("not run: {why}")),
        // Where Datomic names its error, Datalith's category must be the same code (a
        // `:datalith.error/...` category is ours, for errors Datomic raises without a code).
        (Answer::Error { db_error, .. }, Got::Error(e, code)) => match (db_error, code) {
            (Some(want), Some(got)) if got != want => {
                Err(format!("want error {want}\n        got  error {got}: {e}"))
            }
            _ => Ok(()),
        },
        (Answer::Error { db_error, message }, Got::Value(v)) => Err(format!(
            "want error {} ({message})\n        got  {}",
            db_error.as_deref().unwrap_or("(no :db/error)"),
            to_edn_string(v)
        )),
        (Answer::Result(w), Got::Error(e, _)) => {
            Err(format!("want {}\n        got error: {e}", to_edn_string(w)))
        }
        (Answer::Result(w), Got::Value(v)) => {
            let (w, v) = if case.without_db_id {
                (without_db_id(w), without_db_id(v))
            } else {
                (w.clone(), v.clone())
            };
            if same_answer(shape_of(case), &w, &v, ordered) {
                Ok(())
            } else {
                Err(format!(
                    "want {}\n        got  {}",
                    to_edn_string(&w),
                    to_edn_string(&v)
                ))
            }
        }
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    pass: usize,
    fail: usize,
    pending: usize,
}

#[test]
fn datalith_answers_as_datomic_does() {
    let datasets = cases::datasets();
    // CONFORMANCE_FILTER=pull/ (any part of an id) runs only the matching cases.
    let filter = std::env::var("CONFORMANCE_FILTER").unwrap_or_default();
    let mut answers = cases::answers();
    let mut all = cases::cases();
    // The documented answers (not from the peer) join Datomic's, each under its own id.
    for (case, answer) in cases::documented() {
        assert!(
            answers.insert(case.id.clone(), answer).is_none(),
            "documented case {} is also in datomic-answers.edn",
            case.id
        );
        all.push(case);
    }
    let cases: Vec<Case> = all.into_iter().filter(|c| c.id.contains(&filter)).collect();
    let pending = cases::pending();
    let mut shared = HashMap::new();
    let ordered = cases::tuple_attributes(&datasets);
    // CONFORMANCE_ERRORS=1 also lists the refusals that pass, Datomic's :db/error beside
    // Datalith's message (for checking error categories by eye until they are compared).
    let show_errors = std::env::var_os("CONFORMANCE_ERRORS").is_some();
    let mut refusals = Vec::new();

    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut unexpected_failures = Vec::new();
    let mut unexpected_passes = Vec::new();
    let mut unanswered = Vec::new();
    for case in &cases {
        let Some(want) = answers.get(&case.id) else {
            unanswered.push(case.id.clone());
            continue;
        };
        let got = run(case, &datasets, &mut shared);
        if let (true, Answer::Error { db_error, .. }, Got::Error(e, _)) = (show_errors, want, &got)
        {
            refusals.push(format!(
                ":{} Datomic {} / Datalith: {e}",
                case.id,
                db_error.as_deref().unwrap_or("(no :db/error)")
            ));
        }
        let verdict = verdict(case, want, &got, &ordered);
        let tally = groups.entry(case.group.clone()).or_default();
        tally.cases += 1;
        let is_pending = pending.contains_key(&case.id);
        if is_pending {
            tally.pending += 1;
        }
        match verdict {
            Ok(()) => {
                tally.pass += 1;
                if is_pending {
                    unexpected_passes.push(case.id.clone());
                }
            }
            Err(diff) => {
                tally.fail += 1;
                let mark = if is_pending { "pending" } else { "NEW" };
                failures.push(format!("[{mark}] :{}\n        {diff}", case.id));
                if !is_pending {
                    unexpected_failures.push(case.id.clone());
                }
            }
        }
    }

    println!(
        "\n{:<14} {:>6} {:>6} {:>6} {:>8}",
        "group", "cases", "pass", "fail", "pending"
    );
    let mut total = Tally::default();
    for (group, t) in &groups {
        println!(
            "{group:<14} {:>6} {:>6} {:>6} {:>8}",
            t.cases, t.pass, t.fail, t.pending
        );
        total.cases += t.cases;
        total.pass += t.pass;
        total.fail += t.fail;
        total.pending += t.pending;
    }
    println!(
        "{:<14} {:>6} {:>6} {:>6} {:>8}\n",
        "total", total.cases, total.pass, total.fail, total.pending
    );
    for f in &failures {
        println!("{f}");
    }
    for r in &refusals {
        println!("[refused] {r}");
    }

    let known: std::collections::BTreeSet<&String> = cases.iter().map(|c| &c.id).collect();
    let stale_pending: Vec<&String> = pending
        .keys()
        .filter(|id| filter.is_empty() && !known.contains(id))
        .collect();
    assert!(
        unanswered.is_empty(),
        "cases without a recorded Datomic answer (run bench/peers/run.sh datomic conformance): {unanswered:?}"
    );
    assert!(
        stale_pending.is_empty(),
        "pending.edn names no such case: {stale_pending:?}"
    );
    assert!(
        unexpected_failures.is_empty(),
        "cases failing that pending.edn does not list: {unexpected_failures:?}"
    );
    assert!(
        unexpected_passes.is_empty(),
        "cases in pending.edn that pass now (take them off the list): {unexpected_passes:?}"
    );
}
