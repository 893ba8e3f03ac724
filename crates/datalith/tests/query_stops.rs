//! Queries that stop: a timeout, a cancel or a memory limit ends every kind of loop the
//! executor runs (scans, joins, cross products, rule recursion, `not`/`or`, aggregation,
//! filters calling functions) promptly, with a typed error, and the process lives on.
//!
//! The bounds on elapsed time are generous (they catch a query that runs on, not a slow
//! machine); the real figures are printed (`cargo test -- --nocapture`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use datalith::edn::{read_one, Edn};
use datalith::query::{QueryError, QueryOptions};
use datalith::{Database, DbOptions};

/// Entities in the test database: a 3-way cross product of them is 2.7e10 rows.
const PEOPLE: usize = 3000;

/// How long after its start a query is cancelled.
const CANCEL_AFTER: Duration = Duration::from_millis(100);

/// A query that must have stopped by then did not stop (a hang, not slowness).
const GENEROUS: Duration = Duration::from_secs(5);

const SCHEMA: &str = r#"[
  {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :group :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]"#;

/// `PEOPLE` entities, all in group 1, each pointing to the next (a chain).
fn people() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
    db.transact(tx(SCHEMA)).unwrap();
    let mut data = String::from("[");
    for i in 0..PEOPLE {
        let next = if i + 1 < PEOPLE {
            format!(":next \"p{}\"", i + 1)
        } else {
            String::new()
        };
        data.push_str(&format!(
            "{{:db/id \"p{i}\" :name \"person {i}\" :group 1 {next}}}"
        ));
    }
    data.push(']');
    db.transact(tx(&data)).unwrap();
    // A predicate and an aggregate that take 5 ms a call (3000 calls: 15 s).
    db.register_query_fn("slow-true", |_| {
        std::thread::sleep(Duration::from_millis(5));
        Ok(datalith::codec::Value::Boolean(true))
    });
    db.register_aggregate("slow-count", |vals| {
        std::thread::sleep(Duration::from_millis(5));
        Ok(datalith::codec::Value::Long(vals.len() as i64))
    });
    (dir, db)
}

const REACH: &str = "[[(reach ?a ?b) [?a :next ?b]]
                      [(reach ?a ?b) [?a :next ?c] (reach ?c ?b)]]";

#[test]
fn every_kind_of_loop_stops_soon_after_a_cancel() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    // (loop kind, query, inputs): each would run for seconds to hours.
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "cross product",
            "[:find ?a ?b ?c :where [?a :name] [?b :name] [?c :name]]",
            &[],
        ),
        (
            "join on a shared value",
            "[:find ?a ?b ?c :where [?a :group ?g] [?b :group ?g] [?c :group ?g]]",
            &[],
        ),
        (
            "join with a bound value",
            "[:find ?a ?b ?c :in $ ?g :where [?a :group ?g] [?b :group ?g] [?c :group ?g]]",
            &["1"],
        ),
        (
            "rule recursion",
            "[:find ?a ?b :in $ % :where (reach ?a ?b)]",
            &[REACH],
        ),
        (
            "not",
            "[:find ?a :where [?a :name]
                     (not-join [?a] [?b :group ?g] [?c :group ?g] [(= ?a ?b ?c)])]",
            &[],
        ),
        (
            "or",
            "[:find ?a :where [?a :name]
                     (or-join [?a] (and [?b :group ?g] [?c :group ?g] [(= ?a ?b ?c)])
                                   [?a :next 0])]",
            &[],
        ),
        (
            "aggregate",
            "[:find ?a (slow-count ?n) :where [?a :name ?n]]",
            &[],
        ),
        (
            "function-heavy filter",
            "[:find ?a :where [?a :name ?n] [(slow-true ?n)]]",
            &[],
        ),
        (
            "function binding on a product",
            "[:find ?s :where [?a :group ?x] [?b :group ?y] [(+ ?a ?b) ?s]]",
            &[],
        ),
        (
            "pull in find",
            "[:find (pull ?a [*]) (pull ?b [*]) :where [?a :name] [?b :name]]",
            &[],
        ),
    ];
    for (kind, query, inputs) in cases {
        let inputs: Vec<Edn> = inputs.iter().map(|i| read_one(i).unwrap()).collect();
        let cancel = AtomicBool::new(false);
        let start = Instant::now();
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(CANCEL_AFTER);
                cancel.store(true, Ordering::Relaxed);
            });
            snapshot.q_cancellable(query, &inputs, &cancel)
        });
        let elapsed = start.elapsed();
        println!(
            "{kind}: stopped {} ms after the cancel",
            elapsed.saturating_sub(CANCEL_AFTER).as_millis()
        );
        assert!(
            matches!(result, Err(QueryError::Cancelled)),
            "{kind}: {result:?}"
        );
        assert!(elapsed < GENEROUS, "{kind}: ran {elapsed:?}");
    }
}

#[test]
fn a_cross_product_stops_at_its_timeout_and_at_its_memory_limit() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    let product = "[?a :name] [?b :name] [?c :name]";
    // (how the limit is set, query, options, expected category)
    let hundred_mb = 100_000_000;
    let cases: Vec<(&str, String, QueryOptions<'_>, &str)> = vec![
        (
            ":timeout 500",
            format!("[:find ?a ?b ?c :timeout 500 :where {product}]"),
            QueryOptions::default(),
            ":datalith.error/timeout",
        ),
        (
            "QueryOptions::timeout_ms",
            format!("[:find ?a ?b ?c :where {product}]"),
            QueryOptions::default().timeout_ms(500),
            ":datalith.error/timeout",
        ),
        (
            ":memory-limit 100 MB",
            format!("[:find ?a ?b ?c :memory-limit {hundred_mb} :where {product}]"),
            QueryOptions::default(),
            ":datalith.error/resource-exhausted",
        ),
        (
            "QueryOptions::memory_limit",
            format!("[:find ?a ?b ?c :where {product}]"),
            QueryOptions::default().memory_limit(hundred_mb),
            ":datalith.error/resource-exhausted",
        ),
        (
            "the query's limit before the call's",
            format!("[:find ?a ?b ?c :memory-limit {hundred_mb} :where {product}]"),
            QueryOptions::default().memory_limit(u64::MAX),
            ":datalith.error/resource-exhausted",
        ),
    ];
    for (how, query, options, want) in cases {
        let start = Instant::now();
        let result = snapshot.q_with(&query, &[], &options);
        let elapsed = start.elapsed();
        let e = match result {
            Err(e) => e,
            Ok(_) => panic!("{how}: the product finished"),
        };
        println!("{how}: {} after {} ms", e, elapsed.as_millis());
        assert_eq!(e.category().code, want, "{how}: {e}");
        assert!(elapsed < GENEROUS, "{how}: ran {elapsed:?}");
        if let QueryError::ResourceExhausted { limit, used, .. } = e {
            assert_eq!(limit, hundred_mb, "{how}");
            assert!(used > limit, "{how}: {used}");
        }
    }
    // The process lives on, and a query under the default limit still answers.
    let count = snapshot
        .q("[:find (count ?a) . :where [?a :name]]", &[])
        .unwrap();
    assert_eq!(count, Edn::Long(PEOPLE as i64));
}

#[test]
fn the_database_sets_the_memory_limit_of_its_queries() {
    let (_dir, db) = people();
    let product = "[:find ?a ?b ?c :where [?a :name] [?b :name] [?c :name]]";
    let small = "[:find (count ?a) . :where [?a :name]]";
    db.set_query_memory_limit(Some(10_000_000));
    // (query, expected: the answer or the error category)
    let cases: &[(&str, Result<Edn, &str>)] = &[
        (product, Err(":datalith.error/resource-exhausted")),
        (small, Ok(Edn::Long(PEOPLE as i64))),
    ];
    for (query, want) in cases {
        let got = db
            .db()
            .unwrap()
            .q(query, &[])
            .map_err(|e| e.category().code);
        assert_eq!(&got, want, "{query}");
    }
    // Through `datalith::q` too, and as an option at open.
    let e = datalith::q(product, &[datalith::Input::from(db.db().unwrap())]).unwrap_err();
    assert_eq!(e.category().code, ":datalith.error/resource-exhausted");
    let dir = tempfile::tempdir().unwrap();
    let mut options = DbOptions::default();
    options.query_memory_limit = Some(1);
    let tiny = Database::open(dir.path(), options).unwrap();
    let e = tiny
        .db()
        .unwrap()
        .q("[:find ?x :in [?x ...]]", &[read_one("[1 2 3]").unwrap()])
        .unwrap_err();
    assert_eq!(e.category().code, ":datalith.error/resource-exhausted");
}
