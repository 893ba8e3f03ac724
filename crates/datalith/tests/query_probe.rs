//! EXISTS and NOT EXISTS probed per row (`exec::probe`) must answer as the join they stand
//! for: on random orders and items, each group of clauses on an item is asked as an exists
//! (its variables left out of the `:find`), a not-join and a count, and the answers are
//! compared with the same group joined in full (the item in the `:find`, projected here).

use std::collections::BTreeSet;

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::kv::Durability;
use datalith::{Database, DbOptions};
use proptest::prelude::*;

/// Groups of clauses on an item `?l` of order `?o` (whose `:ord/k` is `?x`): the probe's
/// shapes (a star with tests, a bound variable, a test on the rows' variable, a constant on
/// a many-valued attribute, two patterns on one variable, a nested `not`, an `or`).
const GROUPS: &[&str] = &[
    "[?l :it/order ?o] [?l :it/p ?p] [?l :it/q ?q] [(< ?p ?q)]",
    "[?l :it/order ?o] [?l :it/p ?x]",
    "[?l :it/order ?o] [?l :it/p ?p] [(> ?p ?x)]",
    "[?l :it/order ?o] [?l :it/tag 2] [?l :it/q ?q] [(!= ?q 1)]",
    "[?l :it/order ?o] [?l :it/p ?p] [?l :it/q ?p]",
    "[?l :it/p ?x] [?l :it/order ?o]",
    "[?l :it/order ?o] [?l :it/q ?q] (not [(= ?q 3)])",
    "[?l :it/order ?o] [?l :it/q ?q] [?l :it/p ?p] (or-join [?q ?p ?x] [(< ?q 1)] [(> ?p ?x)])",
    "[?l :it/order ?o] [?l :it/tag ?x]",
];

const SCHEMA: &str =
    "[{:db/ident :ord/k :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :it/order :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :it/p :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :it/q :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :it/tag :db/valueType :db.type/long :db/cardinality :db.cardinality/many}]";

type Rows = BTreeSet<Vec<String>>;

/// The rows of a result as printed values, each row's first `width` columns.
fn rows(e: &Edn, width: usize) -> Rows {
    let items = match e {
        Edn::Set(items) | Edn::Vector(items) => items,
        other => panic!("not a relation: {}", to_edn_string(other)),
    };
    items
        .iter()
        .map(|r| match r {
            Edn::Vector(cols) => cols.iter().take(width).map(to_edn_string).collect(),
            other => panic!("not a row: {}", to_edn_string(other)),
        })
        .collect()
}

fn q(db: &datalith::Db, query: &str) -> Edn {
    db.q(query, &[]).unwrap_or_else(|e| panic!("{query}: {e}"))
}

/// An item: its order (index, or none), `:it/p`, `:it/q` (each maybe missing), tags.
type Item = (Option<usize>, Option<i64>, Option<i64>, Vec<i64>);

fn item() -> impl Strategy<Value = Item> {
    (
        proptest::option::weighted(0.9, 0usize..8),
        proptest::option::weighted(0.85, 0i64..4),
        proptest::option::weighted(0.85, 0i64..4),
        proptest::collection::vec(0i64..4, 0..3),
    )
}

fn load(orders: &[i64], items: &[Item]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    let tx = |s: &str| datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap();
    db.transact(tx(SCHEMA)).unwrap();
    let mut text = String::from("[");
    for (i, k) in orders.iter().enumerate() {
        text.push_str(&format!("{{:db/id \"o{i}\" :ord/k {k}}}"));
    }
    for (i, (o, p, q, tags)) in items.iter().enumerate() {
        let mut attrs = String::new();
        if let Some(o) = o.filter(|o| *o < orders.len()) {
            attrs.push_str(&format!(" :it/order \"o{o}\""));
        }
        if let Some(p) = p {
            attrs.push_str(&format!(" :it/p {p}"));
        }
        if let Some(q) = q {
            attrs.push_str(&format!(" :it/q {q}"));
        }
        if !tags.is_empty() {
            let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
            attrs.push_str(&format!(" :it/tag [{}]", tags.join(" ")));
        }
        // An item with no attribute is no entity.
        if !attrs.is_empty() {
            text.push_str(&format!("{{:db/id \"l{i}\"{attrs}}}"));
        }
    }
    text.push(']');
    db.transact(tx(&text)).unwrap();
    (dir, db)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn probes_answer_as_the_join(
        orders in proptest::collection::vec(0i64..4, 1..8),
        items in proptest::collection::vec(item(), 0..40),
    ) {
        let (_dir, db) = load(&orders, &items);
        let snap = db.db().unwrap();
        let all = rows(&q(&snap, "[:find ?o ?x :where [?o :ord/k ?x]]"), 2);
        for group in GROUPS {
            // The join in full, the item kept: the reference.
            let joined = rows(&q(&snap, &format!("[:find ?o ?x ?l :where [?o :ord/k ?x] {group}]")), 2);
            let exists = rows(&q(&snap, &format!("[:find ?o ?x :where [?o :ord/k ?x] {group}]")), 2);
            prop_assert_eq!(&exists, &joined, "exists: {}", group);
            let none = rows(&q(&snap, &format!("[:find ?o ?x :where [?o :ord/k ?x] (not-join [?o ?x] {group})]")), 2);
            let want: Rows = all.difference(&joined).cloned().collect();
            prop_assert_eq!(&none, &want, "not-join: {}", group);
            // Each order counted once per ?x, however many items witness it.
            let counted = q(&snap, &format!("[:find ?x (count ?o) :where [?o :ord/k ?x] {group}]"));
            let mut want_counts: std::collections::BTreeMap<String, usize> = Default::default();
            for r in &joined {
                *want_counts.entry(r[1].clone()).or_default() += 1;
            }
            let want_counts: Rows = want_counts.into_iter().map(|(x, n)| vec![x, n.to_string()]).collect();
            prop_assert_eq!(&rows(&counted, 2), &want_counts, "count: {}", group);
        }
    }
}

/// The probe runs where it should: `explain` shows the group as one `exists` step, and a
/// not-join of the same shape answers as the join would.
#[test]
fn explain_shows_the_exists_step() {
    let orders: Vec<i64> = (0..4).collect();
    let items: Vec<Item> = (0..200)
        .map(|i| {
            (
                Some(i % 4),
                Some((i % 3) as i64),
                Some((i % 5) as i64),
                vec![],
            )
        })
        .collect();
    let (_dir, db) = load(&orders, &items);
    let snap = db.db().unwrap();
    // query, the step that must appear, the rows
    let cases: &[(&str, &str, usize)] = &[
        (
            "[:find ?o :where [?o :ord/k ?x] [(< ?x 3)] [?l :it/order ?o] [?l :it/p ?p] [?l :it/q ?q] [(< ?p ?q)]]",
            "exists [?l :it/order ?o]",
            3,
        ),
        (
            "[:find ?o :where [?o :ord/k ?x] [?l :it/order ?o] [?l :it/p ?p] [(!= ?p 1)]]",
            "exists [?l :it/order ?o]",
            4,
        ),
    ];
    for (query, step, n) in cases {
        let (result, plan) = snap.explain(query, &[]).unwrap();
        let shown: Vec<String> = plan.steps.iter().map(|s| s.to_string()).collect();
        assert!(
            plan.steps.iter().any(|s| s.what.starts_with(step)),
            "{query}: no step {step:?} in {shown:#?}"
        );
        assert_eq!(rows(&result, 1).len(), *n, "{query}");
    }
}
