//! Bulk load (`init_db` / `fill_db`) against the transaction pipeline, case by case: loading
//! datoms must leave exactly the datoms, statistics and lookups that transacting the same
//! `[:db/add e a v]` would, into an empty database or one that already holds some of them.

use datalith::codec::{Keyword, Value};
use datalith::raw::USER_PARTITION_START as BASE;
use datalith::raw::{Components, Index};
use datalith::store::EntityId;
use datalith::tx::{EntityMap, EntityRef, TxData, TxError, TxOp, TxValue};
use datalith::{Database, Db, DbOptions};

type Datoms = Vec<(EntityId, Keyword, Value)>;

fn kw(s: &str) -> Keyword {
    Keyword::parse(s)
}

fn attr(ident: &str, ty: &str, card: &str) -> EntityMap {
    let k = |s: &str| TxValue::Value(Value::Keyword(kw(s)));
    EntityMap::default()
        .set(kw(":db/ident"), k(ident))
        .set(kw(":db/valueType"), k(ty))
        .set(kw(":db/cardinality"), k(card))
}

/// Many-valued attributes, so loading a value next to an existing one keeps both either way.
fn open() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let many = ":db.cardinality/many";
    db.transact(
        TxData::default()
            .map(attr(":x/s", ":db.type/string", many))
            .map(attr(":x/l", ":db.type/long", many))
            .map(attr(":x/k", ":db.type/keyword", many))
            .map(attr(":x/made", ":db.type/boolean", ":db.cardinality/one")),
    )
    .unwrap();
    (dir, db)
}

/// Makes every user entity id up to `last` (a transaction asserts only about entities that
/// exist, as in Datomic; a bulk load takes any id): tempids in one transaction take ids in
/// order, and their datoms are retracted again.
fn make_ids(db: &Database, last: EntityId) {
    let n = last + 1 - BASE;
    let mut data = TxData::default();
    for i in 0..n {
        data = data.op(TxOp::Add {
            e: EntityRef::Temp(datalith::tx::Tempid::Named(format!("m{i}").into())),
            a: kw(":x/made"),
            v: TxValue::Value(Value::Boolean(true)),
        });
    }
    let report = db.transact(data).unwrap();
    assert_eq!(
        report.tempid("m0"),
        Some(BASE),
        "ids start at the partition's first"
    );
    let mut retract = TxData::default();
    for e in BASE..=last {
        retract = retract.op(TxOp::Retract {
            e: EntityRef::Id(e),
            a: kw(":x/made"),
            v: Some(TxValue::Value(Value::Boolean(true))),
        });
    }
    db.transact(retract).unwrap();
}

fn transact(db: &Database, datoms: &[(EntityId, Keyword, Value)]) {
    for chunk in datoms.chunks(5000) {
        let mut data = TxData::default();
        for (e, a, v) in chunk {
            data = data.op(TxOp::Add {
                e: EntityRef::Id(*e),
                a: a.clone(),
                v: TxValue::Value(v.clone()),
            });
        }
        db.transact(data).unwrap();
    }
}

/// Every user datom, and the statistics of each attribute.
fn contents(snap: &Db) -> (Vec<(EntityId, String, Value)>, Vec<(String, u64, u64)>) {
    let mut datoms: Vec<(EntityId, String, Value)> = snap
        .datoms(Index::Eav, &Components::default())
        .unwrap()
        .into_iter()
        .filter(|d| d.e >= BASE && d.e < datalith::raw::TX_PARTITION_START)
        .map(|d| (d.e, snap.schema().get(d.a).unwrap().ident.to_string(), d.v))
        .collect();
    datoms.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let stats = [":x/s", ":x/l", ":x/k"]
        .iter()
        .map(|a| {
            let id = snap.attr(&kw(a)).unwrap().id;
            let st = snap.reader().stats(id).unwrap();
            (a.to_string(), st.datoms, st.distinct)
        })
        .collect();
    (datoms, stats)
}

fn long_string(i: u64) -> Value {
    // Past the 491-byte inline limit: stored as a giant.
    Value::String(format!("{i:>600}").into())
}

/// (name, datoms already in the database, datoms loaded).
fn cases() -> Vec<(&'static str, Datoms, Datoms)> {
    let s = |x: &str| Value::String(x.into());
    let many = |n: u64, stride: u64| -> Datoms {
        (0..n)
            .flat_map(|i| {
                let e = BASE + i * stride;
                [
                    (e, kw(":x/l"), Value::Long((i % 97) as i64)),
                    (e, kw(":x/s"), s(&format!("v{}", i % 1013))),
                    (
                        e,
                        kw(":x/k"),
                        Value::Keyword(kw(if i % 2 == 0 { ":even" } else { ":odd" })),
                    ),
                ]
            })
            .collect()
    };
    let mut shuffled = many(3000, 1);
    shuffled.reverse();
    let mut with_dups = many(500, 1);
    with_dups.extend(many(200, 1));
    vec![
        (
            "empty db, one datom",
            vec![],
            vec![(BASE, kw(":x/l"), Value::Long(1))],
        ),
        ("empty db, sorted entities", vec![], many(3000, 1)),
        ("empty db, reverse order", vec![], shuffled),
        ("empty db, datoms given twice", vec![], with_dups),
        ("empty db, parallel prepare", vec![], many(30_000, 1)),
        (
            "empty db, several values per key",
            vec![],
            (0..200)
                .flat_map(|i| {
                    (0..5).map(move |j| (BASE + i, kw(":x/l"), Value::Long(j * 3 + i as i64 % 2)))
                })
                .collect(),
        ),
        (
            "giants, some equal, one existing",
            vec![(BASE + 1, kw(":x/s"), long_string(1))],
            (0..50)
                .map(|i| (BASE + i, kw(":x/s"), long_string(i % 10)))
                .collect(),
        ),
        (
            "fill: new entities after the existing ones",
            many(1000, 1),
            many(2000, 1).split_off(3000),
        ),
        (
            "fill: interleaved entities, shared values",
            many(1000, 2),
            (0..1000)
                .flat_map(|i| {
                    let e = BASE + 2 * i + 1;
                    [
                        (e, kw(":x/l"), Value::Long((i % 97) as i64)),
                        (e, kw(":x/s"), s("v3")),
                    ]
                })
                .collect(),
        ),
        (
            "fill: datoms already present and new values on existing entities",
            many(1000, 1),
            many(1000, 1)
                .into_iter()
                .enumerate()
                .map(|(i, (e, a, v))| {
                    if i % 3 == 0 {
                        (e, kw(":x/l"), Value::Long(1000 + i as i64))
                    } else {
                        (e, a, v)
                    }
                })
                .collect(),
        ),
        (
            "fill: values before and after the existing ones",
            vec![
                (BASE + 10, kw(":x/l"), Value::Long(50)),
                (BASE + 10, kw(":x/s"), s("m")),
            ],
            vec![
                (BASE + 10, kw(":x/l"), Value::Long(10)),
                (BASE + 10, kw(":x/l"), Value::Long(90)),
                (BASE + 10, kw(":x/s"), s("a")),
                (BASE + 10, kw(":x/s"), s("z")),
                (BASE + 5, kw(":x/s"), s("m")),
                (BASE + 20, kw(":x/s"), s("m")),
            ],
        ),
    ]
}

#[test]
fn bulk_load_equals_transacting_the_same_datoms() {
    // Every case in one transaction and in chunks small enough to split keys between them.
    let chunked = cases()
        .into_iter()
        .map(|(name, before, load)| (name, before, load, 7));
    let whole = cases()
        .into_iter()
        .map(|(name, before, load)| (name, before, load, usize::MAX));
    for (name, before, load, chunk) in whole.chain(chunked) {
        let name = format!("{name} (chunks of {chunk})");
        let (_d1, bulk) = open();
        let (_d2, model) = open();
        let last = before
            .iter()
            .chain(&load)
            .map(|d| d.0)
            .max()
            .unwrap_or(BASE);
        make_ids(&bulk, last);
        make_ids(&model, last);
        transact(&bulk, &before);
        transact(&model, &before);
        let distinct: std::collections::BTreeSet<_> = load.iter().cloned().collect();
        let n = bulk.fill_db_in_chunks(&load, chunk).unwrap();
        assert_eq!(n, distinct.len() as u64, "{name}: datoms written");
        transact(&model, &load);
        let (got, want) = (bulk.db().unwrap(), model.db().unwrap());
        let (gd, gs) = contents(&got);
        let (wd, ws) = contents(&want);
        assert_eq!(gd.len(), wd.len(), "{name}: datom count");
        assert!(gd == wd, "{name}: datoms differ");
        assert_eq!(gs, ws, "{name}: statistics");
        let report = got.check().unwrap();
        assert!(report.is_ok(), "{name}: {:?}", report.problems);
        // AVE lookups find what was loaded.
        for (e, a, v) in load.iter().take(50) {
            let id = got.attr(a).unwrap().id;
            let c = Components {
                a: Some(id),
                v: Some(v.clone()),
                ..Components::default()
            };
            let es: Vec<EntityId> = got
                .datoms(Index::Ave, &c)
                .unwrap()
                .iter()
                .map(|d| d.e)
                .collect();
            assert!(es.contains(e), "{name}: AVE lookup of {a} {v:?}");
        }
    }
}

#[test]
fn init_db_creates_loads_and_later_ids_do_not_collide() {
    let dir = tempfile::tempdir().unwrap();
    let schema = TxData::default().map(attr(":x/l", ":db.type/long", ":db.cardinality/one"));
    let datoms: Datoms = (0..100)
        .map(|i| (BASE + 2 * i, kw(":x/l"), Value::Long(i as i64)))
        .collect();
    let db = Database::init_db(dir.path(), DbOptions::default(), schema, &datoms).unwrap();
    let snap = db.db().unwrap();
    let n = snap
        .q("[:find (count ?e) . :where [?e :x/l _]]", &[])
        .unwrap();
    assert_eq!(n, datalith::edn::Edn::Long(100));
    drop(snap);
    let r = db
        .transact(
            TxData::default().map(
                EntityMap::with_id(EntityRef::Temp(datalith::tx::Tempid::Named("n".into())))
                    .set(kw(":x/l"), TxValue::Value(Value::Long(-1))),
            ),
        )
        .unwrap();
    assert!(r.tempid("n").unwrap() > BASE + 198);
    // A report keeps its snapshots, and so the environment, open.
    drop(r);
    drop(db);
    // Reopened: the loaded data is durable.
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    assert!(db.db().unwrap().check().unwrap().is_ok());
    assert_eq!(db.fill_db(&[]).unwrap(), 0);
}

/// A tuple value its attribute does not admit is refused by a load as by a transaction.
#[test]
fn bulk_load_checks_tuple_shapes_as_transactions_do() {
    let (_d, db) = open();
    let tuple = |ident: &str, types: &[&str]| {
        attr(ident, ":db.type/tuple", ":db.cardinality/one").set(
            kw(":db/tupleTypes"),
            TxValue::Value(Value::Tuple(
                types.iter().map(|t| Some(Value::Keyword(kw(t)))).collect(),
            )),
        )
    };
    db.transact(TxData::default().map(tuple(":x/pair", &[":db.type/long", ":db.type/string"])))
        .unwrap();
    let t = |elems: Vec<Option<Value>>| Value::Tuple(elems);
    // tuple, whether it is refused
    let cases = [
        (
            t(vec![Some(Value::Long(1)), Some(Value::string("a"))]),
            false,
        ),
        (t(vec![None, Some(Value::string("a"))]), false),
        (t(vec![Some(Value::Long(1))]), true),
        (
            t(vec![Some(Value::string("a")), Some(Value::Long(1))]),
            true,
        ),
    ];
    for (i, (v, refused)) in cases.into_iter().enumerate() {
        let datoms = vec![(BASE + i as u64, kw(":x/pair"), v.clone())];
        let loaded = db.fill_db(&datoms);
        let transacted = db.transact(TxData::default().op(TxOp::Add {
            e: EntityRef::Temp(datalith::tx::Tempid::Named("t".into())),
            a: kw(":x/pair"),
            v: TxValue::Value(v.clone()),
        }));
        assert_eq!(
            matches!(loaded, Err(TxError::InvalidTupleValue { .. })),
            refused,
            "load of {v}: {loaded:?}"
        );
        assert_eq!(
            matches!(transacted, Err(TxError::InvalidTupleValue { .. })),
            refused,
            "transaction of {v}"
        );
    }
}

/// A load is a group of the write-ahead log like a transaction, left to the LMDB writer, and
/// read at once through the unapplied groups with its statistics right; one too large to wait
/// for the LMDB writer (here: a log of 1 MiB, whose largest record is half of it) goes into
/// the data file on the committer and is made durable by a checkpoint, not logged. Either
/// way a reopen finds it whole and `check` agrees.
#[test]
fn a_bulk_load_is_logged_and_applied_later_unless_too_large_then_checkpointed() {
    use datalith::kv::Durability;
    // Rows: durability, the log's largest length -> whether the load is a log record.
    let cases = [
        (Durability::Durable, None, true),
        (Durability::NoSync, None, true),
        (Durability::Durable, Some(1 << 20), false),
        (Durability::NoSync, Some(1 << 20), false),
    ];
    for (durability, log_bytes, logged) in cases {
        let what = format!("{durability:?}, log {log_bytes:?}");
        let dir = tempfile::tempdir().unwrap();
        let options = || {
            let mut o = DbOptions::with_durability(durability);
            // The distinct values below are those AVE's tallies count.
            o.value_index = datalith::ValueIndex::All;
            if let Some(b) = log_bytes {
                o.env.log_file_bytes = b;
            }
            o
        };
        let db = Database::open(dir.path(), options()).unwrap();
        db.transact(
            TxData::default()
                .map(attr(":x/l", ":db.type/long", ":db.cardinality/one"))
                .map(attr(":x/s", ":db.type/string", ":db.cardinality/one")),
        )
        .unwrap();
        let before = db.env().commit_counters();
        // 20,000 entities, 5,000 distinct strings.
        let datoms: Datoms = (0..20_000)
            .flat_map(|i| {
                [
                    (BASE + i, kw(":x/l"), Value::Long(i as i64)),
                    (
                        BASE + i,
                        kw(":x/s"),
                        Value::string(&format!("s{}", i % 5000)),
                    ),
                ]
            })
            .collect();
        assert_eq!(db.fill_db(&datoms).unwrap(), 40_000, "{what}");
        let records = db.env().commit_counters().log_records - before.log_records;
        assert_eq!(records > 0, logged, "{what}: {records} records");
        // Read at once, whether or not LMDB holds it yet.
        let snap = db.db().unwrap();
        let stats = |a: &str| {
            let s = snap.reader().stats(snap.attr(&kw(a)).unwrap().id).unwrap();
            (s.datoms, s.distinct)
        };
        assert_eq!(stats(":x/l"), (20_000, 20_000), "{what}");
        assert_eq!(stats(":x/s"), (20_000, 5_000), "{what}");
        drop(snap);
        let report = db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{what}: {:?}", report.problems);
        db.transact(
            TxData::default().map(
                EntityMap::with_id(EntityRef::Temp(datalith::tx::Tempid::Named("n".into())))
                    .set(kw(":x/l"), TxValue::Value(Value::Long(-1))),
            ),
        )
        .unwrap();
        drop(db);
        let db = Database::open(dir.path(), options()).unwrap();
        let snap = db.db().unwrap();
        let n = snap
            .q("[:find (count ?e) . :where [?e :x/l _]]", &[])
            .unwrap();
        assert_eq!(n, datalith::edn::Edn::Long(20_001), "{what}");
        let report = snap.check().unwrap();
        assert!(report.is_ok(), "{what}: {:?}", report.problems);
    }
}
