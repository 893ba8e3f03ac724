//! When a merge scan's values are read: a TPC-H Q3 shape (orders before a day, their line
//! items shipped after it, the revenue per order with the order's key and priority).
//!
//! - The values no later clause reads (the order's key and priority, wanted only by `:find`)
//!   are read last, for the rows the rest let through (`exec::postpone`).
//! - The line item's price and discount wait until the ship-day test has run when a sample of
//!   the rows says the test passes few of them, although the attribute's values say most line
//!   items ship after the day (`exec::estimate`, the sampled share): here the two are
//!   correlated, as in TPC-H.
//!
//! The answer equals the one computed in Rust, on one thread and spread over three, and the
//! plan shows both choices.

use std::collections::BTreeMap;

use datalith::edn::Edn;
use datalith::query::QueryOptions;
use datalith::Database;

/// Orders, placed one a day (order `o` on day `o`), each with `ITEMS_PER_ORDER` line items
/// shipped 1 to 4 days later; every other order in segment 1.
const ORDERS: i64 = 8_000;
const ITEMS_PER_ORDER: i64 = 4;
/// The day of the query: 3,000 orders before it, 1,500 of them in segment 1, so that 6,000
/// line items reach the line items' values (past the sampling threshold of 4,096 rows); of
/// those only the ones of the last 4 days' orders ship after the day, where 62% of all line
/// items do.
const DAY: i64 = 3_000;

fn price(o: i64, k: i64) -> i64 {
    (o * 31 + k * 7) % 97 + 1
}
fn discount(o: i64, k: i64) -> i64 {
    (o + k) % 10
}
fn priority(o: i64) -> i64 {
    o % 3
}
fn segment(o: i64) -> i64 {
    o % 2
}

#[path = "common/open.rs"]
mod open;

const SCHEMA: &str = r#"[{:db/ident :order/key :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
    {:db/ident :order/day :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :order/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :order/segment :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :line/order :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
    {:db/ident :line/shipped :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :line/price :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :line/discount :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#;

/// The orders and their line items, 500 orders a transaction.
fn database() -> (tempfile::TempDir, Database) {
    let mut txs = vec![SCHEMA.to_string()];
    for chunk in (0..ORDERS).collect::<Vec<_>>().chunks(500) {
        let mut t = String::from("[");
        for &o in chunk {
            t.push_str(&format!(
                "{{:db/id \"o{o}\" :order/key {o} :order/day {o} :order/priority {} :order/segment {}}}",
                priority(o),
                segment(o)
            ));
            for k in 1..=ITEMS_PER_ORDER {
                t.push_str(&format!(
                    "{{:line/order \"o{o}\" :line/shipped {} :line/price {} :line/discount {}}}",
                    o + k,
                    price(o, k),
                    discount(o, k)
                ));
            }
        }
        t.push(']');
        txs.push(t);
    }
    let txs: Vec<&str> = txs.iter().map(String::as_str).collect();
    open::open_with(&txs)
}

const QUERY: &str = "[:find ?key (sum ?revenue) ?priority :with ?l :where
  [?o :order/segment 1] [?o :order/day ?day] [(< ?day $DAY)]
  [?l :line/order ?o]
  [?l :line/shipped ?shipped] [(> ?shipped $DAY)]
  [?l :line/price ?price] [?l :line/discount ?discount]
  [(- 100 ?discount) ?kept] [(* ?price ?kept) ?revenue]
  [?o :order/key ?key] [?o :order/priority ?priority]]";

/// The answer computed in Rust: `key -> (revenue, priority)`.
fn expected() -> BTreeMap<i64, (i64, i64)> {
    let mut out = BTreeMap::new();
    for o in (0..DAY).filter(|o| segment(*o) == 1) {
        for k in 1..=ITEMS_PER_ORDER {
            if o + k > DAY {
                let e = out.entry(o).or_insert((0, priority(o)));
                e.0 += price(o, k) * (100 - discount(o, k));
            }
        }
    }
    out
}

fn answer(result: &Edn) -> BTreeMap<i64, (i64, i64)> {
    let Edn::Set(rows) = result else {
        panic!("not a set: {result}")
    };
    rows.iter()
        .map(|row| match row {
            Edn::Vector(v) => match v.as_slice() {
                [Edn::Long(k), Edn::Long(r), Edn::Long(p)] => (*k, (*r, *p)),
                _ => panic!("row {row}"),
            },
            _ => panic!("row {row}"),
        })
        .collect()
}

#[test]
fn late_reads_answer_as_rust_does_and_the_plan_shows_them() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    let query = QUERY.replace("$DAY", &DAY.to_string());
    let want = expected();
    // Orders 2997 (one line item after the day) and 2999 (three).
    assert_eq!(want.len(), 2);
    for options in [
        QueryOptions::default().threads(1),
        QueryOptions::default().threads(3).spread_from_rows(2),
    ] {
        let got = snapshot.q_with(&query, &[], &options).unwrap();
        assert_eq!(answer(&got.result), want, "threads {options:?}");
    }
    let (_, plan) = snapshot.explain(&query, &[]).unwrap();
    let steps: Vec<&str> = plan
        .steps
        .iter()
        .map(|s| s.what.split("  (").next().unwrap())
        .collect();
    let at = |what: &str| {
        steps
            .iter()
            .position(|s| *s == what)
            .unwrap_or_else(|| panic!("no step {what} in\n{plan}"))
    };
    // The ship day alone, its test, then the values it let through; or the ship day read
    // first, as a filter of the join that finds the line items (`exec::prefilter`).
    let shipped = steps
        .iter()
        .position(|s| s.ends_with("+filter [?l :line/shipped ?shipped] [(> ?shipped 3000)]"))
        .unwrap_or_else(|| at("[?l :line/shipped ?shipped]"));
    let values = at("merge scan [?l :line/price ?price] [?l :line/discount ?discount]");
    assert!(shipped < values, "{plan}");
    // The order's key and priority last, for the 4 line items left.
    let last = plan.steps.last().unwrap();
    assert_eq!(
        last.what, "merge scan [?o :order/key ?key] [?o :order/priority ?priority]",
        "{plan}"
    );
    assert_eq!(last.actual, 4, "{plan}");
}

/// Where nothing but functions follows (they keep every row: TPC-H Q1), a star's values are
/// read together, in one step.
#[test]
fn a_star_followed_only_by_functions_reads_its_values_together() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    let query = "[:find ?price (sum ?kept) :with ?l :where [?l :line/shipped ?s] [(< ?s 10)]
                  [?l :line/price ?price] [?l :line/discount ?d] [(- 100 ?d) ?kept]]";
    let mut want: BTreeMap<i64, i64> = BTreeMap::new();
    for o in 0..ORDERS {
        for k in 1..=ITEMS_PER_ORDER {
            if o + k < 10 {
                *want.entry(price(o, k)).or_default() += 100 - discount(o, k);
            }
        }
    }
    let Edn::Set(rows) = snapshot.q(query, &[]).unwrap() else {
        panic!()
    };
    let got: BTreeMap<i64, i64> = rows
        .iter()
        .map(|row| match row {
            Edn::Vector(v) => match v.as_slice() {
                [Edn::Long(p), Edn::Long(s)] => (*p, *s),
                _ => panic!("row {row}"),
            },
            _ => panic!("row {row}"),
        })
        .collect();
    assert_eq!(got, want);
    let (_, plan) = snapshot.explain(query, &[]).unwrap();
    assert!(
        plan.steps.iter().any(|s| s.what.starts_with("merge scan")
            && s.what.contains(":line/price")
            && s.what.contains(":line/discount")),
        "{plan}"
    );
}

/// Below the sampling threshold, and where no clause follows, the plan reads a star's values
/// together as before: the order's values for its line items, in one step.
#[test]
fn a_star_with_nothing_after_it_reads_its_values_together() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    let query = "[:find ?key ?priority ?price :where [?l :line/shipped 5] [?l :line/order ?o]
                  [?l :line/price ?price] [?o :order/key ?key] [?o :order/priority ?priority]]";
    let got = snapshot.q(query, &[]).unwrap();
    let want: std::collections::BTreeSet<String> = (1..=ITEMS_PER_ORDER)
        .map(|k| 5 - k)
        .filter(|o| *o >= 0)
        .map(|o| format!("[{o} {} {}]", priority(o), price(o, 5 - o)))
        .collect();
    let Edn::Set(rows) = got else { panic!() };
    let rows: std::collections::BTreeSet<String> = rows.iter().map(|r| r.to_string()).collect();
    assert_eq!(rows, want);
    let (_, plan) = snapshot.explain(query, &[]).unwrap();
    assert!(
        plan.steps
            .iter()
            .any(|s| s.what == "merge scan [?o :order/key ?key] [?o :order/priority ?priority]"),
        "{plan}"
    );
}

/// The same query on given orders (as a part of it spread over threads receives them): the
/// day's test reads the day alone, and the key and priority, which neither join nor test,
/// wait for the line items' test instead of being read for every order before it.
#[test]
fn values_that_only_extend_rows_wait_for_the_tests_on_given_entities() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    let orders = snapshot
        .q("[:find [?o ...] :where [?o :order/segment 1]]", &[])
        .unwrap();
    let query = QUERY
        .replace("$DAY", &DAY.to_string())
        .replace(":where\n  [?o :order/segment 1]", ":in $ [?o ...] :where");
    assert!(query.contains(":in $ [?o ...]"), "{query}");
    let got = snapshot
        .q_with(
            &query,
            std::slice::from_ref(&orders),
            &QueryOptions::default().threads(1),
        )
        .unwrap();
    assert_eq!(answer(&got.result), expected());
    let (_, plan) = snapshot
        .explain(&query, std::slice::from_ref(&orders))
        .unwrap();
    let last = plan.steps.last().unwrap();
    assert_eq!(
        last.what, "merge scan [?o@$ :order/key ?key] [?o@$ :order/priority ?priority]",
        "{plan}"
    );
    assert_eq!(last.actual, 4, "{plan}");
}
