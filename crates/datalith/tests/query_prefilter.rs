//! A join on a value narrowed first by a later pattern that only tests the entities it finds
//! (`query::exec::prefilter`): TPC-H Q3's shape, orders and their items, the items' day
//! compared with a constant and read by nothing else. The answer must be the one of the
//! steps one by one: random data and bounds against a model computed here, and a table of
//! the cases the filter must leave alone or treat with care.

use std::collections::BTreeSet;

use datalith::edn::{to_edn_string, Edn};
use datalith::query::QueryOptions;
use datalith::Database;
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "common/open.rs"]
mod open;
use open::open_with_options;

const SCHEMA: &str = r#"[{:db/ident :o/k :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :i/order :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :i/day :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
  {:db/ident :i/price :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#;

/// An item: its order's key, its days (several: the attribute is many-valued), its price.
type Item = (i64, Vec<i64>, i64);

fn load(orders: i64, items: &[Item]) -> (tempfile::TempDir, Database) {
    load_in(datalith::ValueIndex::All, orders, items)
}

/// [`load`] into a database keeping AVE as `value_index` says (with the declared attributes
/// alone, every attribute here but the ref `:i/order` is read through `attr_entities`).
fn load_in(
    value_index: datalith::ValueIndex,
    orders: i64,
    items: &[Item],
) -> (tempfile::TempDir, Database) {
    let mut tx = String::from("[");
    for k in 0..orders {
        tx.push_str(&format!("{{:db/id \"o{k}\" :o/k {k}}}"));
    }
    for (o, days, price) in items {
        let days: Vec<String> = days.iter().map(|d| d.to_string()).collect();
        tx.push_str(&format!(
            "{{:i/order \"o{o}\" :i/price {price} :i/day [{}]}}",
            days.join(" ")
        ));
    }
    tx.push(']');
    let mut options = datalith::DbOptions::default();
    options.value_index = value_index;
    open_with_options(options, &[SCHEMA, &tx])
}

fn rows_of(result: &Edn) -> BTreeSet<String> {
    let Edn::Set(rows) = result else {
        panic!("not a set: {}", to_edn_string(result))
    };
    rows.iter().map(to_edn_string).collect()
}

/// The query: orders under `max_k`, their items with a day over `min_day`, each item's order
/// key and price (`:with ?i`, so two items of one price both count in a sum).
fn query(max_k: i64, min_day: i64) -> String {
    format!(
        "[:find ?k (sum ?p) :with ?i :where [?o :o/k ?k] [(< ?k {max_k})] [?i :i/order ?o]
          [?i :i/day ?d] [(> ?d {min_day})] [?i :i/price ?p]]"
    )
}

fn model(items: &[Item], max_k: i64, min_day: i64) -> BTreeSet<String> {
    let mut sums: std::collections::BTreeMap<i64, i64> = Default::default();
    for (o, days, price) in items {
        if *o < max_k && days.iter().any(|d| *d > min_day) {
            *sums.entry(*o).or_default() += price;
        }
    }
    sums.into_iter()
        .map(|(k, s)| format!("[{k} {s}]"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn a_join_narrowed_first_gives_the_answer_of_the_steps(
        items in proptest::collection::vec(
            (0i64..12, proptest::collection::vec(0i64..10, 1..3), 1i64..50), 0..80),
        max_k in 0i64..13,
        min_day in -1i64..10,
        declared in any::<bool>(),
    ) {
        let value_index = match declared {
            true => datalith::ValueIndex::Declared,
            false => datalith::ValueIndex::All,
        };
        let (_dir, db) = load_in(value_index, 12, &items);
        let q = query(max_k, min_day);
        let snap = db.db().unwrap();
        let want = model(&items, max_k, min_day);
        prop_assert_eq!(rows_of(&snap.q(&q, &[]).unwrap()), want.clone(), "{}", q);
        let threads = QueryOptions::default().threads(3).spread_from_rows(2);
        prop_assert_eq!(rows_of(&snap.q_with(&q, &[], &threads).unwrap().result), want, "spread: {}", q);
    }
}

/// (query, expected result, whether `explain` shows the filter).
#[test]
fn the_filter_answers_only_a_test_of_the_new_entity() {
    // Twelve orders, four items each; item n of order k: days {k+n, 20}, price 10*k + n.
    let mut items: Vec<Item> = Vec::new();
    for k in 0..12 {
        for n in 0..4 {
            items.push((k, vec![k + n, 20 + n], 10 * k + n));
        }
    }
    let (_dir, db) = load(12, &items);
    let snap = db.db().unwrap();
    let rows: &[(&str, &str, bool)] = &[
        // The shape: a day over 21 only item 2 and 3 of each order have (days 22, 23).
        (
            "[:find ?k (sum ?p) :with ?i :where [?o :o/k ?k] [(< ?k 2)] [?i :i/order ?o]
              [?i :i/day ?d] [(> ?d 21)] [?i :i/price ?p]]",
            "#{[0 5] [1 25]}",
            true,
        ),
        // A many-valued day: an item with two days in the range counts once.
        (
            "[:find ?k (count ?i) :where [?o :o/k ?k] [(< ?k 2)] [?i :i/order ?o]
              [?i :i/day ?d] [(> ?d 0)]]",
            "#{[0 4] [1 4]}",
            true,
        ),
        // The day is found: not a filter (each day is a row).
        (
            "[:find ?k ?d :where [?o :o/k ?k] [(< ?k 1)] [?i :i/order ?o]
              [?i :i/day ?d] [(> ?d 21)]]",
            "#{[0 22] [0 23]}",
            false,
        ),
        // The day is read by a function too: not a filter.
        (
            "[:find ?k ?e :where [?o :o/k ?k] [(< ?k 1)] [?i :i/order ?o]
              [?i :i/day ?d] [(> ?d 21)] [(inc ?d) ?e]]",
            "#{[0 23] [0 24]}",
            false,
        ),
    ];
    for (q, want, filtered) in rows {
        let got = snap.q(q, &[]).unwrap();
        let want = rows_of(&datalith::edn::read_one(want).unwrap());
        assert_eq!(rows_of(&got), want, "{q}");
        let traced = snap
            .q_with(q, &[], &QueryOptions::default().explain(true))
            .unwrap();
        assert_eq!(rows_of(&traced.result), want, "explain: {q}");
        let plan = traced.plan.unwrap().to_string();
        assert_eq!(plan.contains("+filter"), *filtered, "{q}\n{plan}");
    }
}
