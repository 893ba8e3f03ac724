//! Random transactions against the store and a simple in-memory model: the datoms and the
//! statistics must agree after every run, whatever the batching.

use std::collections::{BTreeMap, BTreeSet};

use datalith::codec::{Keyword, Value};
use datalith::kv::Durability;
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxOp, TxValue};
use datalith::{Database, DbOptions};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// `:one` (cardinality one) on entity i.
    SetOne(usize, i64),
    /// `:many` add.
    AddMany(usize, i64),
    /// `:many` retract.
    RetractMany(usize, i64),
    /// Retract every `:one`.
    RetractOne(usize),
    /// Retract the entity.
    RetractEntity(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let e = 0usize..5;
    let v = 0i64..4;
    prop_oneof![
        (e.clone(), v.clone()).prop_map(|(e, v)| Op::SetOne(e, v)),
        (e.clone(), v.clone()).prop_map(|(e, v)| Op::AddMany(e, v)),
        (e.clone(), v).prop_map(|(e, v)| Op::RetractMany(e, v)),
        e.clone().prop_map(Op::RetractOne),
        e.prop_map(Op::RetractEntity),
    ]
}

type Model = BTreeMap<(u64, &'static str), BTreeSet<i64>>;

fn kw(n: &str) -> Keyword {
    Keyword::new(None, n)
}

fn apply(model: &mut Model, ids: &[u64], ops: &[Op]) {
    for o in ops {
        match o {
            Op::SetOne(e, v) => {
                let s = model.entry((ids[*e], "one")).or_default();
                s.clear();
                s.insert(*v);
            }
            Op::AddMany(e, v) => {
                model.entry((ids[*e], "many")).or_default().insert(*v);
            }
            Op::RetractMany(e, v) => {
                model.entry((ids[*e], "many")).or_default().remove(v);
            }
            Op::RetractOne(e) => {
                model.remove(&(ids[*e], "one"));
            }
            Op::RetractEntity(e) => {
                model.retain(|(x, a), _| *x != ids[*e] || *a == "name");
                model.remove(&(ids[*e], "name"));
            }
        }
    }
    model.retain(|_, s| !s.is_empty());
}

fn tx_of(ids: &[u64], ops: &[Op]) -> TxData {
    let mut d = TxData::default();
    for o in ops {
        let id = |e: &usize| EntityRef::Id(ids[*e]);
        d = d.op(match o {
            Op::SetOne(e, v) => TxOp::Add {
                e: id(e),
                a: kw("one"),
                v: TxValue::Value(Value::Long(*v)),
            },
            Op::AddMany(e, v) => TxOp::Add {
                e: id(e),
                a: kw("many"),
                v: TxValue::Value(Value::Long(*v)),
            },
            Op::RetractMany(e, v) => TxOp::Retract {
                e: id(e),
                a: kw("many"),
                v: Some(TxValue::Value(Value::Long(*v))),
            },
            Op::RetractOne(e) => TxOp::Retract {
                e: id(e),
                a: kw("one"),
                v: None,
            },
            Op::RetractEntity(e) => TxOp::RetractEntity { e: id(e) },
        });
    }
    d
}

/// A database with `:one` and `:many` (longs), and `n` entities seeded with `attr` values
/// `base + i`; returns the database, the entities' ids and the model of the seed.
fn seeded(
    dir: &std::path::Path,
    n: i64,
    attr: &'static str,
    base: i64,
) -> (Database, Vec<u64>, Model) {
    let db = Database::open(dir, DbOptions::with_durability(Durability::NoSync)).unwrap();
    let def = |name: &str, card: &str| {
        EntityMap::default()
            .set(
                Keyword::parse(":db/ident"),
                TxValue::Value(Value::Keyword(kw(name))),
            )
            .set(
                Keyword::parse(":db/valueType"),
                TxValue::Value(Value::keyword(":db.type/long")),
            )
            .set(
                Keyword::parse(":db/cardinality"),
                TxValue::Value(Value::keyword(card)),
            )
    };
    db.transact(
        TxData::default()
            .map(def("one", ":db.cardinality/one"))
            .map(def("many", ":db.cardinality/many")),
    )
    .unwrap();
    let mut seed = TxData::default();
    for i in 0..n {
        seed = seed.map(
            EntityMap::with_id(EntityRef::Temp(Tempid::Negative(-1 - i)))
                .set(kw(attr), TxValue::Value(Value::Long(base + i))),
        );
    }
    let r = db.transact(seed).unwrap();
    let ids: Vec<u64> = (0..n).map(|i| r.tempid_neg(-1 - i).unwrap()).collect();
    let mut model: Model = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        model
            .entry((*id, attr))
            .or_default()
            .insert(base + i as i64);
    }
    (db, ids, model)
}

/// Checks the datoms of `entities` and both attributes' statistics against `model`.
fn check_against(
    db: &Database,
    entities: impl IntoIterator<Item = u64>,
    model: &Model,
) -> Result<(), TestCaseError> {
    let snap = db.db().unwrap();
    let schema = snap.schema().clone();
    let mut got: Model = BTreeMap::new();
    for id in entities {
        for (a, v) in snap.reader().entity(id).unwrap() {
            let name: &'static str = match schema.get(a).unwrap().ident.name() {
                "one" => "one",
                "many" => "many",
                other => panic!("{other}"),
            };
            let Value::Long(n) = v else { panic!("{v:?}") };
            got.entry((id, name)).or_default().insert(n);
        }
    }
    prop_assert_eq!(&got, model);
    // Statistics agree with the data.
    for name in ["one", "many"] {
        let a = schema.by_ident(&kw(name)).unwrap().id;
        let datoms: u64 = model
            .iter()
            .filter(|((_, n), _)| *n == name)
            .map(|(_, s)| s.len() as u64)
            .sum();
        let distinct: BTreeSet<i64> = model
            .iter()
            .filter(|((_, n), _)| *n == name)
            .flat_map(|(_, s)| s.iter().copied())
            .collect();
        let stats = snap.reader().stats(a).unwrap();
        prop_assert_eq!(stats.datoms, datoms, "datoms of {}", name);
        prop_assert_eq!(
            stats.distinct,
            distinct.len() as u64,
            "distinct of {}",
            name
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    // Up to 16 ops: small transactions write their ops in staged order, larger ones (from 16
    // staged writes) sorted through one cursor per table; both count distinct values.
    fn store_matches_model(txs in proptest::collection::vec(proptest::collection::vec(op(), 1..16), 1..12)) {
        let dir = tempfile::tempdir().unwrap();
        let (db, ids, mut model) = seeded(dir.path(), 5, "many", 100);
        // Half the transactions queued at once (shared batches), half one by one. A
        // transaction asserting two values of `:one` on one entity must fail alone.
        let mut handles = Vec::new();
        for (i, ops) in txs.iter().enumerate() {
            let conflict = ops.iter().any(|a| ops.iter().any(|b| matches!((a, b), (Op::SetOne(e1, v1), Op::SetOne(e2, v2)) if e1 == e2 && v1 != v2)));
            if !conflict {
                apply(&mut model, &ids, ops);
            }
            if i % 2 == 0 {
                handles.push((conflict, db.transact_async(tx_of(&ids, ops))));
            } else {
                for (c, h) in handles.drain(..) { prop_assert_eq!(h.wait().is_err(), c); }
                prop_assert_eq!(db.transact(tx_of(&ids, ops)).is_err(), conflict);
            }
        }
        for (c, h) in handles { prop_assert_eq!(h.wait().is_err(), c); }
        check_against(&db, ids.iter().copied(), &model)?;
    }
}

/// An entity of [`NewOp`]: one of the seeded ones, or a tempid of the transaction (a new
/// entity, unless the transaction only retracts on it).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ent {
    Old(usize),
    New(usize),
}

/// Ops of transactions that create entities: a map of both attributes, or one op.
#[derive(Debug, Clone)]
enum NewOp {
    Map(Ent, i64, i64),
    Set(Ent, i64),
    Add(Ent, i64),
    Retract(Ent, i64),
    RetractEntity(Ent),
}

fn ent() -> impl Strategy<Value = Ent> {
    prop_oneof![
        (0usize..3).prop_map(Ent::Old),
        (0usize..3).prop_map(Ent::New)
    ]
}

fn new_op() -> impl Strategy<Value = NewOp> {
    let v = 0i64..4;
    prop_oneof![
        3 => (ent(), v.clone(), v.clone()).prop_map(|(e, a, b)| NewOp::Map(e, a, b)),
        2 => (ent(), v.clone()).prop_map(|(e, a)| NewOp::Set(e, a)),
        2 => (ent(), v.clone()).prop_map(|(e, a)| NewOp::Add(e, a)),
        1 => (ent(), v).prop_map(|(e, a)| NewOp::Retract(e, a)),
        1 => ent().prop_map(NewOp::RetractEntity),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]
    /// Transactions of new entities take the datom builder's append-only path until a term
    /// leaves it (a second run of an entity, a repeated attribute, a retraction): the store
    /// must still match the model whatever the mix.
    #[test]
    fn new_entities_match_model(txs in proptest::collection::vec(proptest::collection::vec(new_op(), 1..10), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let (db, old, mut model) = seeded(dir.path(), 3, "one", 10);
        let mut every: BTreeSet<u64> = old.iter().copied().collect();
        let long = |n: i64| TxValue::Value(Value::Long(n));
        for ops in &txs {
            let r = |e: Ent| match e {
                Ent::Old(i) => EntityRef::Id(old[i]),
                Ent::New(i) => EntityRef::Temp(Tempid::Named(format!("n{i}").into())),
            };
            let mut data = TxData::default();
            for o in ops {
                data = match *o {
                    NewOp::Map(e, a, b) => data.map(EntityMap::with_id(r(e)).set(kw("one"), long(a)).set(kw("many"), long(b))),
                    NewOp::Set(e, a) => data.op(TxOp::Add { e: r(e), a: kw("one"), v: long(a) }),
                    NewOp::Add(e, a) => data.op(TxOp::Add { e: r(e), a: kw("many"), v: long(a) }),
                    NewOp::Retract(e, a) => data.op(TxOp::Retract { e: r(e), a: kw("many"), v: Some(long(a)) }),
                    NewOp::RetractEntity(e) => data.op(TxOp::RetractEntity { e: r(e) }),
                };
            }
            // Two different `:one` values for one entity in one transaction: it must fail.
            let ones: Vec<(Ent, i64)> = ops.iter().filter_map(|o| match *o {
                NewOp::Map(e, a, _) | NewOp::Set(e, a) => Some((e, a)),
                _ => None,
            }).collect();
            let conflict = ones.iter().any(|(e1, a1)| ones.iter().any(|(e2, a2)| e1 == e2 && a1 != a2));
            let result = db.transact(data);
            prop_assert_eq!(result.is_err(), conflict, "{:?}: {:?}", ops, result.as_ref().err());
            let Ok(report) = result else { continue };
            let id = |e: Ent| match e {
                Ent::Old(i) => old[i],
                Ent::New(i) => report.tempid(&format!("n{i}")).expect("every tempid resolves"),
            };
            for o in ops {
                match *o {
                    NewOp::Map(e, a, b) => {
                        let s = model.entry((id(e), "one")).or_default();
                        s.clear();
                        s.insert(a);
                        model.entry((id(e), "many")).or_default().insert(b);
                    }
                    NewOp::Set(e, a) => {
                        let s = model.entry((id(e), "one")).or_default();
                        s.clear();
                        s.insert(a);
                    }
                    NewOp::Add(e, a) => {
                        model.entry((id(e), "many")).or_default().insert(a);
                    }
                    NewOp::Retract(e, a) => {
                        model.entry((id(e), "many")).or_default().remove(&a);
                    }
                    NewOp::RetractEntity(e) => {
                        let x = id(e);
                        model.retain(|(y, _), _| *y != x);
                    }
                }
            }
            model.retain(|_, s| !s.is_empty());
            for o in ops {
                if let NewOp::Map(Ent::New(i), ..) | NewOp::Set(Ent::New(i), _) | NewOp::Add(Ent::New(i), _) | NewOp::Retract(Ent::New(i), _) | NewOp::RetractEntity(Ent::New(i)) = *o {
                    every.insert(id(Ent::New(i)));
                }
            }
        }
        check_against(&db, every, &model)?;
    }
}
