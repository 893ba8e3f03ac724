//! Datomic conformance: every case of `tests/conformance/cases/` runs on Datalith and its
//! answer is compared with the real Datomic peer's, recorded in
//! `tests/conformance/datomic-answers.edn` by `bench/peers/datomic/conformance.clj` (see
//! bench/peers/README.md, "Conformance answers"), so no JVM is needed here.
//!
//! A case expecting an error passes when Datalith refuses too (the category is not compared
//! yet). `tests/conformance/pending.edn` lists the cases known to fail, with why: the test
//! fails when any other case fails, and when a pending case passes (take it off the list).
//!
//! `cargo test -p datalith --test conformance -- --nocapture` prints the per-group table and
//! every failing case with Datomic's answer and Datalith's; `CONFORMANCE_FILTER=pull/` runs
//! only the cases whose id contains the text.

#[path = "conformance/cases.rs"]
mod cases;
#[path = "conformance/compare.rs"]
mod compare;

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cases::{get, Action, Answer, Case, Dataset};
use compare::{find_shape, same_answer, without_db_id, Ordered, Shape};
use datalith::edn::{to_edn_string, Edn};
use datalith::{Database, Db, DbOptions, Input};

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
    Ok(Loaded { db, _dir: dir })
}

fn transact(db: &Database, tx: &Edn) -> Result<(), String> {
    refused_tx(db, tx).map_err(|(message, _)| message)
}

/// A transaction's refusal with its category code.
fn refused_tx(db: &Database, tx: &Edn) -> Result<(), (String, Option<&'static str>)> {
    let data =
        datalith::TxData::from_edn(tx).map_err(|e| (e.to_string(), Some(e.category().code)))?;
    db.transact(data)
        .map(|_| ())
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

/// The entity a pull case names. `Db::pull` takes an entity id, so a lookup ref is looked up
/// here by a query; cases about lookup-ref errors therefore go through query inputs instead.
fn entity_of(db: &Db, eid: &Edn) -> Result<Option<u64>, String> {
    let found = match eid {
        Edn::Keyword(k) => return db.ident_entity(k).map_err(|e| e.to_string()),
        Edn::Vector(lookup) if lookup.len() == 2 => db
            .q(
                &format!(
                    "[:find ?e . :in $ ?v :where [?e {} ?v]]",
                    to_edn_string(&lookup[0])
                ),
                std::slice::from_ref(&lookup[1]),
            )
            .map_err(|e| e.to_string())?,
        other => return Err(format!("cannot resolve :eid {}", to_edn_string(other))),
    };
    match found {
        Edn::Long(e) => Ok(Some(e as u64)),
        _ => Ok(None),
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
        Action::Tx { .. } => {
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
            match entity_of(&db, eid) {
                Ok(Some(e)) => match db.pull(&to_edn_string(pattern), e) {
                    Ok(v) => Got::Value(v),
                    Err(e) => Got::Error(e.to_string(), Some(e.category().code)),
                },
                Ok(None) => Got::Error(format!("no entity {}", to_edn_string(eid)), None),
                Err(e) => Got::Error(e, None),
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
    }));
    outcome.unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Got::Unsupported(format!("panicked: {msg}"))
    })
}

fn shape_of(case: &Case) -> Shape {
    match &case.action {
        Action::Query { query, .. } => find_shape(query),
        Action::Tx { then, .. } => find_shape(then),
        Action::Pull { .. } => Shape::Value,
    }
}

/// Whether Datalith's outcome is Datomic's answer; otherwise a line saying what differs.
fn verdict(case: &Case, want: &Answer, got: &Got, ordered: &Ordered) -> Result<(), String> {
    match (want, got) {
        (_, Got::Unsupported(why)) => Err(format!("not run: {why}")),
        // Where Datomic names its error and Datalith's category is one of Datomic's codes,
        // they must be the same code (a `:datalith.error/...` category is ours, for errors
        // Datomic raises without a code or with a peer-internal one).
        (Answer::Error { db_error, .. }, Got::Error(e, code)) => match (db_error, code) {
            (Some(want), Some(got)) if got.starts_with(":db.error/") && got != want => {
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
    let cases: Vec<Case> = cases::cases()
        .into_iter()
        .filter(|c| c.id.contains(&filter))
        .collect();
    let answers = cases::answers();
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
