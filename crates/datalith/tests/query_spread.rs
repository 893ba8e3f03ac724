//! A query spread over threads (`exec::spread`: from a large step on, the rest of the
//! conjunction runs in parts, one a thread) answers what it answers on one thread: a table of
//! queries run both ways, spread from the first step of two rows on so that these small
//! databases spread too; a function that notes its threads shows the parts ran on several;
//! errors, timeouts and cancellation reach the caller from any part.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use datalith::codec::Value;
use datalith::edn::{read_one, Edn};
use datalith::query::{QueryError, QueryOptions};
use datalith::{Database, DbOptions, TxData};

const PARTS: i64 = 60;
const LINES: i64 = 900;

fn database() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let schema = r#"[{:db/ident :part/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :part/brand :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
        {:db/ident :part/size :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :part/tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
        {:db/ident :line/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :line/part :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
        {:db/ident :line/qty :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :line/price :db/valueType :db.type/double :db/cardinality :db.cardinality/one}]"#;
    db.transact(TxData::from_edn(&read_one(schema).unwrap()).unwrap())
        .unwrap();
    let mut tx = String::from("[");
    for p in 0..PARTS {
        tx.push_str(&format!(
            "{{:db/id \"p{p}\" :part/no {p} :part/brand \"B{}\" :part/size {} :part/tag [:t{} :t{}]}}",
            p % 7,
            (p * 7) % 13,
            p % 3,
            p % 5
        ));
    }
    for l in 0..LINES {
        tx.push_str(&format!(
            "{{:line/no {l} :line/part \"p{}\" :line/qty {} :line/price {}.25}}",
            (l * 13) % PARTS,
            (l * 31) % 11,
            l % 17
        ));
    }
    tx.push(']');
    db.transact(TxData::from_edn(&read_one(&tx).unwrap()).unwrap())
        .unwrap();
    (dir, db)
}

/// Spread from the first step of two rows on, over three threads.
fn spread() -> QueryOptions<'static> {
    QueryOptions::default().threads(3).spread_from_rows(2)
}

/// A result with its rows in order: without `:order-by`, the order of a set's or a
/// collection's items is the engine's, not part of the answer (Datomic's too).
fn sorted(e: Edn, query: &str) -> Edn {
    match e {
        Edn::Set(mut rows) => {
            rows.sort_by_key(datalith::edn::to_edn_string);
            Edn::Set(rows)
        }
        Edn::Vector(mut rows) if !query.contains(":order-by") => {
            rows.sort_by_key(datalith::edn::to_edn_string);
            Edn::Vector(rows)
        }
        other => other,
    }
}

const RULES: &str = "[[(small ?l) [?l :line/qty ?q] [(< ?q 3)]]
                      [(branded ?l ?b) [?l :line/part ?p] [?p :part/brand ?b]]]";

#[test]
fn spread_queries_answer_as_on_one_thread() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    let rules = read_one(RULES).unwrap();
    let brands = read_one(r#"["B1" "B3" "B9"]"#).unwrap();
    // (query, inputs after `$`)
    let cases: Vec<(&str, Vec<Edn>)> = vec![
        // A join whose answer drops the line: parts' rows meet in one row.
        ("[:find ?b :where [?l :line/part ?p] [?p :part/brand ?b]]", vec![]),
        // Every line kept (no deduplication needed across parts).
        ("[:find ?n ?b :where [?l :line/no ?n] [?l :line/part ?p] [?p :part/brand ?b]]", vec![]),
        ("[:find ?b (sum ?q) (count ?l) :with ?l :where [?l :line/part ?p] [?l :line/qty ?q] [?p :part/brand ?b]]", vec![]),
        ("[:find ?b (sum ?x) (avg ?x) (min ?x) (max ?x) :with ?l :where [?l :line/part ?p] [?l :line/price ?pr] [?l :line/qty ?q] [(* ?pr ?q) ?x] [?p :part/brand ?b]]", vec![]),
        ("[:find ?b (median ?q) (distinct ?q) (variance ?pr) (count-distinct ?p) :with ?l :where [?l :line/part ?p] [?l :line/qty ?q] [?l :line/price ?pr] [?p :part/brand ?b]]", vec![]),
        ("[:find ?n (count ?l) :where [?l :line/no ?n]]", vec![]),
        ("[:find (count-distinct ?q) . :where [?l :line/qty ?q] [?l :line/part ?p] [?p :part/size ?s] [(> ?s 4)]]", vec![]),
        ("[:find ?n :where [?l :line/no ?n] [?l :line/part ?p] (not [?p :part/size 7])]", vec![]),
        ("[:find ?n :where [?l :line/no ?n] [?l :line/qty ?q] (not-join [?l] [?l :line/part ?p] [?p :part/tag :t2])]", vec![]),
        ("[:find ?n :where [?l :line/no ?n] [?l :line/part ?p] [?p :part/size ?s] (or-join [?p ?s] [(< ?s 2)] [?p :part/tag :t4])]", vec![]),
        ("[:find ?t (count ?l) :where [?l :line/part ?p] [?p :part/tag ?t]]", vec![]),
        ("[:find ?n :in $ % :where [?l :line/no ?n] (small ?l) (branded ?l \"B2\")]", vec![rules.clone()]),
        ("[:find ?n :in $ [?b ...] :where [?p :part/brand ?b] [?l :line/part ?p] [?l :line/no ?n]]", vec![brands]),
        ("[:find ?n ?m :in $ $2 :where [?l :line/qty 3] [?l :line/no ?n] [$2 ?k :line/qty 4] [$2 ?k :line/no ?m] [(- ?m ?n) ?d] [(< ?d 20)] [(> ?d 0)]]", vec![Edn::Symbol(datalith::Keyword::parse("$"))]),
        ("[:find (pull ?p [:part/no :part/brand]) ?q :where [?l :line/part ?p] [?l :line/qty ?q] [(= ?q 5)]]", vec![]),
        ("[:find [?n ...] :where [?l :line/no ?n] [?l :line/qty ?q] [(odd? ?q)]]", vec![]),
        ("[:find ?n ?q :where [?l :line/no ?n] [?l :line/qty ?q] :order-by [?q :desc ?n] :limit 7]", vec![]),
        // Few rows whose lines are then looked up one by one (sparse lookups: the rows are cut
        // by entity, sorted first; the lines of one part arrive out of entity order).
        ("[:find ?n ?q ?pr :where [?l :line/no ?n] [(< ?n 20)] [?l :line/qty ?q] [?l :line/price ?pr]]", vec![]),
        ("[:find ?m ?q :where [?p :part/no ?pn] [(< ?pn 1)] [?l :line/part ?p] [?l :line/qty ?q] [?l :line/no ?m]]", vec![]),
        // Rows whose values are looked up in AVE one by one (the lines of each part): cut by
        // the value, sorted first.
        ("[:find ?pn ?m :where [?p :part/no ?pn] [(< ?pn 10)] [?p :part/size ?s] [?l :line/part ?p] [?l :line/no ?m]]", vec![]),
        // A `not` in each part (the first ten parts but the one line 5 points to).
        ("[:find ?pn :where [?p :part/no ?pn] [(< ?pn 10)] [?p :part/size ?s] (not-join [?p] [?l :line/part ?p] [?l :line/no 5])]", vec![]),
    ];
    for (query, inputs) in &cases {
        let run = |options: &QueryOptions<'_>| -> Edn {
            // `$2` (a symbol in the table) is a second value of the database.
            let out = if inputs.iter().any(|i| matches!(i, Edn::Symbol(_))) {
                datalith::q_with(
                    query,
                    &[
                        datalith::Input::Db(snapshot.clone()),
                        datalith::Input::Db(db.db().unwrap()),
                    ],
                    options,
                )
                .unwrap_or_else(|e| panic!("{query}: {e}"))
            } else {
                snapshot
                    .q_with(query, inputs, options)
                    .unwrap_or_else(|e| panic!("{query}: {e}"))
            };
            sorted(out.result, query)
        };
        let one = run(&QueryOptions::default().threads(1));
        let many = run(&spread());
        assert_eq!(many, one, "{query}");
        assert_ne!(one, Edn::Set(vec![]), "{query}: the case answers something");
    }
}

/// The threads a query function ran on, for a query run with `options`.
fn threads_used(options: &QueryOptions<'_>) -> usize {
    let (_dir, db) = database();
    let seen: Arc<Mutex<HashSet<std::thread::ThreadId>>> = Arc::default();
    let noted = seen.clone();
    db.register_query_fn("note-thread", move |args| {
        noted.lock().unwrap().insert(std::thread::current().id());
        Ok(args[0].clone())
    });
    let snapshot = db.db().unwrap();
    let out = snapshot
        .q_with(
            "[:find (count ?l) . :where [?l :line/qty ?q] [(note-thread ?q) ?x] [?l :line/part ?p]]",
            &[],
            options,
        )
        .unwrap();
    assert_eq!(out.result, Edn::Long(LINES));
    let n = seen.lock().unwrap().len();
    n
}

#[test]
fn the_parts_run_on_several_threads() {
    assert_eq!(threads_used(&QueryOptions::default().threads(1)), 1);
    assert_eq!(threads_used(&spread()), 3);
    // Below the threshold (the default's) the query stays on one thread.
    assert_eq!(threads_used(&QueryOptions::default().threads(3)), 1);
}

#[test]
fn an_error_in_any_part_is_the_answer() {
    let (_dir, db) = database();
    // Fails on the last lines only, which the last part holds.
    db.register_query_fn("fail-late", |args| match &args[0] {
        Value::Long(n) if *n > LINES - 20 => Err(format!("line {n} refused")),
        other => Ok(other.clone()),
    });
    let snapshot = db.db().unwrap();
    let query = "[:find ?x :where [?l :line/no ?n] [(fail-late ?n) ?x] [?l :line/part ?p]]";
    let one = snapshot.q_with(query, &[], &QueryOptions::default().threads(1));
    let many = snapshot.q_with(query, &[], &spread());
    let (Err(a), Err(b)) = (one, many) else {
        panic!("both fail")
    };
    assert!(b.to_string().contains("refused"), "{b}");
    assert_eq!(a.category(), b.category());
}

#[test]
fn spread_queries_stop_on_time_and_on_cancel() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // Lines by lines by parts: far more than a millisecond of work.
    let query = "[:find (count ?x) . :where [?a :line/qty ?q] [?b :line/qty ?q] [?p :part/size ?s] [(+ ?q ?s) ?x]]";
    let timed = spread().timeout_ms(1);
    match snapshot.q_with(query, &[], &timed) {
        Err(QueryError::Timeout { .. }) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    let flag = AtomicBool::new(true);
    let cancelled = spread().cancel(&flag);
    match snapshot.q_with(query, &[], &cancelled) {
        Err(QueryError::Cancelled) => {}
        other => panic!("expected a cancel, got {other:?}"),
    }
}
