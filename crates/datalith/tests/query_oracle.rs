//! The optimizer must never change an answer: random queries on random databases, run by the
//! engine (in random clause orders) and by a naive nested-loop evaluator, must agree.

use std::collections::{BTreeMap, BTreeSet};

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::kv::Durability;
use datalith::{Database, DbOptions};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum T {
    Var(u8),
    Const(i64),
}

#[derive(Debug, Clone)]
struct Pat {
    e: u8,
    attr: &'static str,
    v: T,
}

fn show(t: &T) -> String {
    match t {
        T::Var(v) => format!("?v{v}"),
        T::Const(c) => c.to_string(),
    }
}

fn pat() -> impl Strategy<Value = Pat> {
    (
        0u8..3,
        prop_oneof![Just("a"), Just("b"), Just("r")],
        prop_oneof![(0u8..3).prop_map(T::Var), (0i64..4).prop_map(T::Const)],
    )
        .prop_map(|(e, attr, v)| Pat { e, attr, v })
}

type Triple = (i64, &'static str, i64);

/// Nested loops over every datom: obviously right, hopelessly slow.
fn naive(
    triples: &[Triple],
    pats: &[Pat],
    pred: Option<(u8, i64)>,
    find: &[u8],
) -> BTreeSet<Vec<i64>> {
    let mut rows: Vec<BTreeMap<u8, i64>> = vec![BTreeMap::new()];
    for p in pats {
        let mut next = Vec::new();
        for row in &rows {
            for (e, a, v) in triples {
                if *a != p.attr {
                    continue;
                }
                let mut r = row.clone();
                let mut ok = match r.get(&p.e) {
                    Some(x) => x == e,
                    None => {
                        r.insert(p.e, *e);
                        true
                    }
                };
                ok &= match &p.v {
                    T::Const(c) => c == v,
                    T::Var(x) => match r.get(x) {
                        Some(y) => y == v,
                        None => {
                            r.insert(*x, *v);
                            true
                        }
                    },
                };
                if ok {
                    next.push(r);
                }
            }
        }
        rows = next;
    }
    rows.into_iter()
        .filter(|r| pred.is_none_or(|(x, c)| r.get(&x).is_some_and(|v| *v < c)))
        .map(|r| find.iter().map(|f| r[f]).collect())
        .collect()
}

fn result_set(e: &Edn) -> BTreeSet<Vec<i64>> {
    let Edn::Set(rows) = e else {
        panic!("not a set: {}", to_edn_string(e))
    };
    rows.iter()
        .map(|r| match r {
            Edn::Vector(items) => items
                .iter()
                .map(|i| match i {
                    Edn::Long(n) => *n,
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("{other:?}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
    #[test]
    fn engine_agrees_with_naive_evaluation(
        facts in proptest::collection::vec((0usize..12, prop_oneof![Just("a"), Just("b"), Just("r")], 0i64..4), 0..60),
        pats in proptest::collection::vec(pat(), 1..4),
        pred in proptest::option::of((0u8..3, 0i64..5)),
        order in any::<u64>(),
        find_mask in any::<u8>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
        let tx = |s: &str| datalith::tx::edn::tx_data_from_edn(&read_one(s).unwrap()).unwrap();
        db.transact(tx("[{:db/ident :a :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
                        {:db/ident :b :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
                        {:db/ident :r :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]")).unwrap();
        // Twelve entities; values 0..4, refs to entities 0..4 (by index).
        let mut seed = String::from("[");
        for i in 0..12 { seed.push_str(&format!("{{:db/id \"e{i}\" :a 100}}")); }
        seed.push(']');
        let r = db.transact(tx(&seed)).unwrap();
        let ids: Vec<i64> = (0..12).map(|i| r.tempid(&format!("e{i}")).unwrap() as i64).collect();
        let mut text = String::from("[");
        let mut triples: Vec<Triple> = ids.iter().map(|e| (*e, "a", 100)).collect();
        for (e, a, v) in &facts {
            let v = if *a == "r" { ids[*v as usize] } else { *v };
            text.push_str(&format!("[:db/add {} :{a} {v}]", ids[*e]));
            triples.push((ids[*e], a, v));
        }
        text.push(']');
        db.transact(tx(&text)).unwrap();
        triples.sort();
        triples.dedup();
        // Constants on :r name entities.
        let pats: Vec<Pat> = pats.into_iter().map(|mut p| { if let (T::Const(c), "r") = (&p.v, p.attr) { p.v = T::Const(ids[*c as usize]); } p }).collect();
        let mut vars: BTreeSet<u8> = BTreeSet::new();
        for p in &pats { vars.insert(p.e); if let T::Var(v) = p.v { vars.insert(v); } }
        let pred = pred.filter(|(x, _)| vars.contains(x));
        // Some of the variables (all when the mask picks none): projections and semijoins.
        let mut find: Vec<u8> = vars.iter().copied().filter(|v| find_mask & (1 << v) != 0).collect();
        if find.is_empty() {
            find = vars.iter().copied().collect();
        }
        let expected = naive(&triples, &pats, pred, &find);
        // The same query in two clause orders.
        let mut orders = vec![pats.clone()];
        let mut shuffled = pats.clone();
        let n = shuffled.len();
        for i in 0..n { shuffled.swap(i, (order as usize >> (i * 4)) % n); }
        orders.push(shuffled);
        let snap = db.db().unwrap();
        for ps in orders {
            let mut q = String::from("[:find");
            for f in &find { q.push_str(&format!(" ?v{f}")); }
            q.push_str(" :where");
            for p in &ps { q.push_str(&format!(" [?v{} :{} {}]", p.e, p.attr, show(&p.v))); }
            if let Some((x, c)) = pred { q.push_str(&format!(" [(< ?v{x} {c})]")); }
            q.push(']');
            let got = result_set(&snap.q(&q, &[]).unwrap());
            prop_assert_eq!(&got, &expected, "{}", q);
        }
    }
}
