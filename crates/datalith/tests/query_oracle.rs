//! The optimizer must never change an answer: random queries on random databases, run by the
//! engine (in random clause orders, spread over threads, handed on a part at a time, a test
//! also written as a function's collection) and by a naive nested-loop evaluator, must agree. The naive
//! evaluator is Datomic's model: the result is the set of the find variables' bindings (blanks
//! bind nothing), and `(count ?x)` counts the distinct `?x` of each group of that set.

use std::collections::{BTreeMap, BTreeSet};

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::kv::Durability;
use datalith::query::QueryOptions;
use datalith::{Database, DbOptions};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum T {
    Var(u8),
    Const(i64),
    Blank,
}

#[derive(Debug, Clone)]
struct Pat {
    /// The entity variable, or `_` when `None`.
    e: Option<u8>,
    attr: &'static str,
    v: T,
}

fn show(t: &T) -> String {
    match t {
        T::Var(v) => format!("?v{v}"),
        T::Const(c) => c.to_string(),
        T::Blank => "_".to_string(),
    }
}

fn pat() -> impl Strategy<Value = Pat> {
    (
        prop_oneof![4 => (0u8..3).prop_map(Some), 1 => Just(None)],
        prop_oneof![Just("a"), Just("b"), Just("r")],
        prop_oneof![
            3 => (0u8..3).prop_map(T::Var),
            3 => (0i64..4).prop_map(T::Const),
            1 => Just(T::Blank)
        ],
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
                let mut ok = match p.e.map(|x| (x, r.get(&x))) {
                    None => true,
                    Some((_, Some(x))) => x == e,
                    Some((x, None)) => {
                        r.insert(x, *e);
                        true
                    }
                };
                ok &= match &p.v {
                    T::Blank => true,
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

/// `(count ?last)` grouped by the other columns, over the set of rows.
fn naive_count(rows: &BTreeSet<Vec<i64>>) -> BTreeSet<Vec<i64>> {
    let mut groups: BTreeMap<Vec<i64>, i64> = BTreeMap::new();
    for r in rows {
        *groups.entry(r[..r.len() - 1].to_vec()).or_default() += 1;
    }
    groups
        .into_iter()
        .map(|(mut k, n)| {
            k.push(n);
            k
        })
        .collect()
}

/// The rows of a result, which must be a set with no member twice.
fn result_set(e: &Edn) -> BTreeSet<Vec<i64>> {
    let Edn::Set(rows) = e else {
        panic!("not a set: {}", to_edn_string(e))
    };
    let set: BTreeSet<Vec<i64>> = rows
        .iter()
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
        .collect();
    assert_eq!(
        set.len(),
        rows.len(),
        "a member twice: {}",
        to_edn_string(e)
    );
    set
}

/// The rows `q_each` hands on, reading in parts of one datom (or one element), each row
/// once (the result is a set: a row handed twice fails).
fn handed(snap: &datalith::Db, q: &str) -> BTreeSet<Vec<i64>> {
    struct Rows(Vec<Edn>);
    impl datalith::query::ItemSink for Rows {
        fn begin(&mut self, _set: bool) -> Result<(), datalith::query::QueryError> {
            Ok(())
        }
        fn item(&mut self, item: &Edn) -> Result<(), datalith::query::QueryError> {
            self.0.push(item.clone());
            Ok(())
        }
    }
    let mut rows = Rows(Vec::new());
    let options = QueryOptions::default().part_rows(1);
    let whole = snap.q_each(q, &[], &options, &mut rows).unwrap();
    assert!(whole.is_none(), "{q}: a relation is handed on");
    let set = result_set(&Edn::Set(rows.0.clone()));
    assert_eq!(set.len(), rows.0.len(), "{q}: a row handed twice");
    set
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
        declared in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        // With AVE only for declared attributes, `:a` and `:b` are read through
        // `attr_entities` and EAV (`store::value_index`); `:r`, a ref, through AVE.
        let mut options = DbOptions::with_durability(Durability::NoSync);
        if declared {
            options.value_index = datalith::ValueIndex::Declared;
        }
        let db = Database::open(dir.path(), options).unwrap();
        let tx = |s: &str| datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap();
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
        for p in &pats { vars.extend(p.e); if let T::Var(v) = p.v { vars.insert(v); } }
        // Nothing to find when every position is blank or constant.
        prop_assume!(!vars.is_empty());
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
            let mut clauses = String::new();
            for p in &ps {
                let e = p.e.map_or("_".to_string(), |e| format!("?v{e}"));
                clauses.push_str(&format!(" [{e} :{} {}]", p.attr, show(&p.v)));
            }
            if let Some((x, c)) = pred { clauses.push_str(&format!(" [(< ?v{x} {c})]")); }
            q.push_str(&clauses);
            q.push(']');
            let got = result_set(&snap.q(&q, &[]).unwrap());
            prop_assert_eq!(&got, &expected, "{}", q);
            // Spread over threads from the first step of two rows on (`exec::spread`).
            let spread = QueryOptions::default().threads(3).spread_from_rows(2);
            let got = result_set(&snap.q_with(&q, &[], &spread).unwrap().result);
            prop_assert_eq!(&got, &expected, "spread: {}", q);
            // Handed on a part at a time (`exec::parts`), parts of one datom: the same set,
            // no item twice.
            prop_assert_eq!(&handed(&snap, &q), &expected, "in parts: {}", q);
            // The test written as a function's collection (`exec::elements`): values are
            // never negative, so `[(range 0 c) [?x ...]]` keeps what `[(< ?x c)]` keeps.
            if let Some((x, c)) = pred {
                let ranged = q.replace(
                    &format!("[(< ?v{x} {c})]"),
                    &format!("[(range 0 {c}) [?v{x} ...]]"),
                );
                let got = result_set(&snap.q(&ranged, &[]).unwrap());
                prop_assert_eq!(&got, &expected, "{}", ranged);
                prop_assert_eq!(&handed(&snap, &ranged), &expected, "in parts: {}", ranged);
            }
            // The last find variable counted per group of the others.
            let (last, rest) = find.split_last().expect("a find variable");
            let mut cq = String::from("[:find");
            for f in rest { cq.push_str(&format!(" ?v{f}")); }
            cq.push_str(&format!(" (count ?v{last}) :where{clauses}]"));
            let got = result_set(&snap.q(&cq, &[]).unwrap());
            prop_assert_eq!(&got, &naive_count(&expected), "{}", cq);
            let got = result_set(&snap.q_with(&cq, &[], &spread).unwrap().result);
            prop_assert_eq!(&got, &naive_count(&expected), "spread: {}", cq);
        }
        let report = snap.check().unwrap();
        prop_assert!(report.is_ok(), "{:?}", report.problems);
    }
}
