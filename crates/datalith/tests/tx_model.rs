//! Random transactions against the store and a simple in-memory model: the datoms and the
//! statistics must agree after every run, whatever the batching.

use std::collections::{BTreeMap, BTreeSet};

use datalith::codec::{Keyword, Value};
use datalith::kv::Durability;
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxOp, TxValue};
use datalith::{Database, DbOptions, ValueIndex};
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

/// Both layouts (`store::value_index`): every attribute in AVE, with exact distinct counts,
/// or the declared ones, the others' distinct values estimated.
fn layout(declared: bool) -> ValueIndex {
    if declared {
        ValueIndex::Declared
    } else {
        ValueIndex::All
    }
}

fn kw(n: &str) -> Keyword {
    Keyword::new(None, n)
}

/// The datom-level steps both models' ops reduce to, on entities `E`.
#[derive(Debug, Clone, Copy)]
enum Step {
    SetOne(u64, i64),
    AddMany(u64, i64),
    RetractMany(u64, i64),
    RetractOne(u64),
    RetractEntity(u64),
}

/// Runs one transaction's `steps` on `model` by Datomic's rules; returns false, leaving
/// `model` as it was, when the transaction must fail: two values of `:one` asserted for one
/// entity, or one datom both asserted and retracted (a `:db/retract` of `:one` without a
/// value, and `:db/retractEntity`, retract what the database held: Datomic expands both
/// against the database before the transaction, so what the transaction asserts stays).
fn simulate(model: &mut Model, steps: &[Step]) -> bool {
    let before = model.clone();
    let mut now = model.clone();
    let held_before =
        |e: u64, a: &'static str, v: i64| before.get(&(e, a)).is_some_and(|s| s.contains(&v));
    let mut asserted: BTreeSet<(u64, &'static str, i64)> = BTreeSet::new();
    let mut retracted: BTreeSet<(u64, &'static str, i64)> = BTreeSet::new();
    let mut one_asserted: BTreeMap<u64, i64> = BTreeMap::new();
    for step in steps {
        match *step {
            Step::SetOne(e, v) => {
                if one_asserted.insert(e, v).is_some_and(|w| w != v) {
                    return false;
                }
                let s = now.entry((e, "one")).or_default();
                s.clear();
                s.insert(v);
                asserted.insert((e, "one", v));
                if retracted.contains(&(e, "one", v)) {
                    return false;
                }
            }
            Step::AddMany(e, v) => {
                now.entry((e, "many")).or_default().insert(v);
                asserted.insert((e, "many", v));
                if retracted.contains(&(e, "many", v)) {
                    return false;
                }
            }
            Step::RetractMany(e, v) => {
                now.entry((e, "many")).or_default().remove(&v);
                retracted.insert((e, "many", v));
                if asserted.contains(&(e, "many", v)) {
                    return false;
                }
            }
            Step::RetractOne(e) => {
                let s = now.entry((e, "one")).or_default();
                let held: Vec<i64> = s
                    .iter()
                    .copied()
                    .filter(|v| held_before(e, "one", *v))
                    .collect();
                for v in held {
                    s.remove(&v);
                    retracted.insert((e, "one", v));
                    if asserted.contains(&(e, "one", v)) {
                        return false;
                    }
                }
            }
            Step::RetractEntity(e) => {
                for ((x, a), s) in now.iter_mut() {
                    if *x != e {
                        continue;
                    }
                    let held: Vec<i64> = s
                        .iter()
                        .copied()
                        .filter(|v| held_before(e, a, *v))
                        .collect();
                    for v in held {
                        s.remove(&v);
                        retracted.insert((e, a, v));
                        if asserted.contains(&(e, a, v)) {
                            return false;
                        }
                    }
                }
            }
        }
    }
    now.retain(|_, s| !s.is_empty());
    *model = now;
    true
}

/// [`simulate`] for [`Op`]s on the seeded entities `ids`.
fn apply(model: &mut Model, ids: &[u64], ops: &[Op]) -> bool {
    let steps: Vec<Step> = ops
        .iter()
        .map(|o| match *o {
            Op::SetOne(e, v) => Step::SetOne(ids[e], v),
            Op::AddMany(e, v) => Step::AddMany(ids[e], v),
            Op::RetractMany(e, v) => Step::RetractMany(ids[e], v),
            Op::RetractOne(e) => Step::RetractOne(ids[e]),
            Op::RetractEntity(e) => Step::RetractEntity(ids[e]),
        })
        .collect();
    simulate(model, &steps)
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

/// A database keeping AVE entries for `layout`'s attributes, with `:one` and `:many`
/// (longs), and `n` entities seeded with `attr` values `base + i`; returns the database, the
/// entities' ids and the model of the seed.
fn seeded(
    dir: &std::path::Path,
    layout: ValueIndex,
    n: i64,
    attr: &'static str,
    base: i64,
) -> (Database, Vec<u64>, Model) {
    let mut options = DbOptions::with_durability(Durability::NoSync);
    options.value_index = layout;
    let db = Database::open(dir, options).unwrap();
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
        if snap.reader().is_listed(a).unwrap() {
            // Estimated from a sketch of every value ever asserted (`store::sketch`), which
            // `check` verifies below: at least one while there are datoms, at most one each.
            prop_assert!(stats.distinct <= datoms && stats.distinct >= datoms.min(1));
        } else {
            prop_assert_eq!(
                stats.distinct,
                distinct.len() as u64,
                "distinct of {}",
                name
            );
        }
    }
    let report = snap.check().unwrap();
    prop_assert!(report.problems.is_empty(), "{:?}", report.problems);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    // Up to 16 ops: small transactions write their ops in staged order, larger ones (from 16
    // staged writes) sorted through one cursor per table; both count distinct values.
    fn store_matches_model(txs in proptest::collection::vec(proptest::collection::vec(op(), 1..16), 1..12), declared in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let (db, ids, mut model) = seeded(dir.path(), layout(declared), 5, "many", 100);
        // Half the transactions queued at once (shared batches), half one by one. A
        // transaction with conflicting datoms must fail alone.
        let mut handles = Vec::new();
        for (i, ops) in txs.iter().enumerate() {
            let conflict = !apply(&mut model, &ids, ops);
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
    fn new_entities_match_model(txs in proptest::collection::vec(proptest::collection::vec(new_op(), 1..10), 1..8), declared in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let (db, old, mut model) = seeded(dir.path(), layout(declared), 3, "one", 10);
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
            // New entities stand in the model under ids no real entity has until the
            // report names them.
            let stand_in = |e: Ent| match e {
                Ent::Old(i) => old[i],
                Ent::New(i) => u64::MAX - i as u64,
            };
            let steps: Vec<Step> = ops.iter().flat_map(|o| match *o {
                NewOp::Map(e, a, b) => vec![Step::SetOne(stand_in(e), a), Step::AddMany(stand_in(e), b)],
                NewOp::Set(e, a) => vec![Step::SetOne(stand_in(e), a)],
                NewOp::Add(e, a) => vec![Step::AddMany(stand_in(e), a)],
                NewOp::Retract(e, a) => vec![Step::RetractMany(stand_in(e), a)],
                NewOp::RetractEntity(e) => vec![Step::RetractEntity(stand_in(e))],
            }).collect();
            let mut next = model.clone();
            // Datomic refuses `:db/retractEntity` of a tempid (it names no existing entity).
            let retracts_new = ops.iter().any(|o| matches!(o, NewOp::RetractEntity(Ent::New(_))));
            let conflict = !simulate(&mut next, &steps) || retracts_new;
            let result = db.transact(data);
            prop_assert_eq!(result.is_err(), conflict, "{:?}: {:?}", ops, result.as_ref().err());
            let Ok(report) = result else { continue };
            let id = |e: Ent| match e {
                Ent::Old(i) => old[i],
                Ent::New(i) => report.tempid(&format!("n{i}")).expect("every tempid resolves"),
            };
            let real = |x: u64| (0..3).find(|i| stand_in(Ent::New(*i)) == x).map_or(x, |i| id(Ent::New(i)));
            model = next.into_iter().map(|((e, a), s)| ((real(e), a), s)).collect();
            for o in ops {
                if let NewOp::Map(Ent::New(i), ..) | NewOp::Set(Ent::New(i), _) | NewOp::Add(Ent::New(i), _) | NewOp::Retract(Ent::New(i), _) | NewOp::RetractEntity(Ent::New(i)) = *o {
                    every.insert(id(Ent::New(i)));
                }
            }
        }
        check_against(&db, every, &model)?;
    }
}
