//! Transaction semantics, table by table: each case is tx data and the datoms (or error) it
//! must produce.

use datalith::codec::{Keyword, Value};
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxError, TxOp, TxValue};
use datalith::{Database, DbOptions};

fn kw(s: &str) -> Keyword {
    let s = s.trim_start_matches(':');
    match s.split_once('/') {
        Some((ns, name)) => Keyword::new(Some(ns), name),
        None => Keyword::new(None, s),
    }
}

fn s(v: &str) -> TxValue {
    TxValue::Value(Value::String(v.into()))
}

fn k(v: &str) -> TxValue {
    TxValue::Value(Value::Keyword(kw(v)))
}

fn l(v: i64) -> TxValue {
    TxValue::Value(Value::Long(v))
}

fn temp(name: &str) -> EntityRef {
    EntityRef::Temp(Tempid::Named(name.into()))
}

fn attr(ident: &str, ty: &str, card: &str, unique: Option<&str>, component: bool) -> EntityMap {
    let mut m = EntityMap::default()
        .set(kw(":db/ident"), k(ident))
        .set(kw(":db/valueType"), k(ty))
        .set(kw(":db/cardinality"), k(card));
    if let Some(u) = unique {
        m = m.set(kw(":db/unique"), k(u));
    }
    if component {
        m = m.set(kw(":db/isComponent"), TxValue::Value(Value::Boolean(true)));
    }
    m
}

/// A database with a small person schema.
fn people() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let one = ":db.cardinality/one";
    let many = ":db.cardinality/many";
    db.transact(
        TxData::default()
            .map(attr(":person/name", ":db.type/string", one, None, false))
            .map(attr(
                ":person/email",
                ":db.type/string",
                one,
                Some(":db.unique/identity"),
                false,
            ))
            .map(attr(
                ":person/ssn",
                ":db.type/string",
                one,
                Some(":db.unique/value"),
                false,
            ))
            .map(attr(":person/age", ":db.type/long", one, None, false))
            .map(attr(":person/friend", ":db.type/ref", many, None, false))
            .map(attr(":person/tags", ":db.type/keyword", many, None, false))
            .map(attr(":person/address", ":db.type/ref", one, None, true))
            .map(attr(":address/city", ":db.type/string", one, None, false)),
    )
    .unwrap();
    (dir, db)
}

/// [`people`] after transacting `data`, with its report.
fn people_after(data: TxData) -> (tempfile::TempDir, Database, datalith::tx::TxReport) {
    let (dir, db) = people();
    let report = db.transact(data).unwrap();
    (dir, db, report)
}

/// The user-visible datoms of entity `e` as `(attr ident, value)`, sorted.
fn facts(db: &Database, e: u64) -> Vec<(String, Value)> {
    let snap = db.db().unwrap();
    let mut out: Vec<_> = snap
        .reader()
        .entity(e)
        .unwrap()
        .into_iter()
        .map(|(a, v)| (snap.schema().get(a).unwrap().ident.to_string(), v))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn maps_tempids_and_cardinality() {
    let (_d, db, r) = people_after(
        TxData::default()
            .map(
                EntityMap::with_id(temp("ann"))
                    .set(kw(":person/name"), s("Ann"))
                    .set(kw(":person/age"), l(30))
                    .set(kw(":person/tags"), TxValue::Many(vec![k(":a"), k(":b")]))
                    .set(kw(":person/friend"), s("bob")),
            )
            .map(EntityMap::with_id(temp("bob")).set(kw(":person/name"), s("Bob"))),
    );
    let ann = r.tempid("ann").unwrap();
    let bob = r.tempid("bob").unwrap();
    assert_ne!(ann, bob);
    assert_eq!(
        facts(&db, ann),
        vec![
            (":person/age".into(), Value::Long(30)),
            (":person/friend".into(), Value::Ref(bob)),
            (":person/name".into(), Value::String("Ann".into())),
            (":person/tags".into(), Value::Keyword(kw(":a"))),
            (":person/tags".into(), Value::Keyword(kw(":b"))),
        ]
    );
    // Cardinality one replaces; many adds; a redundant assertion is dropped.
    let r2 = db
        .transact(
            TxData::default()
                .op(TxOp::Add {
                    e: EntityRef::Id(ann),
                    a: kw(":person/age"),
                    v: l(31),
                })
                .op(TxOp::Add {
                    e: EntityRef::Id(ann),
                    a: kw(":person/tags"),
                    v: k(":c"),
                })
                .op(TxOp::Add {
                    e: EntityRef::Id(ann),
                    a: kw(":person/name"),
                    v: s("Ann"),
                }),
        )
        .unwrap();
    let changes: Vec<_> = r2
        .tx_data
        .iter()
        .filter(|d| d.e == ann)
        .map(|d| (d.v.clone(), d.added))
        .collect();
    assert_eq!(
        changes,
        vec![
            (Value::Long(30), false),
            (Value::Long(31), true),
            (Value::Keyword(kw(":c")), true)
        ]
    );
}

#[test]
fn upsert_through_identity_and_lookup_refs() {
    let (_d, db, r) = people_after(
        TxData::default().map(
            EntityMap::with_id(temp("x"))
                .set(kw(":person/email"), s("a@x"))
                .set(kw(":person/name"), s("A")),
        ),
    );
    let a = r.tempid("x").unwrap();
    // A new tempid with the same identity value resolves to the same entity.
    let r = db
        .transact(
            TxData::default().map(
                EntityMap::with_id(temp("y"))
                    .set(kw(":person/email"), s("a@x"))
                    .set(kw(":person/age"), l(5)),
            ),
        )
        .unwrap();
    assert_eq!(r.tempid("y"), Some(a));
    // Two tempids sharing an identity value in one transaction become one entity.
    let r = db
        .transact(
            TxData::default()
                .map(EntityMap::with_id(temp("p")).set(kw(":person/email"), s("n@x")))
                .map(
                    EntityMap::with_id(temp("q"))
                        .set(kw(":person/email"), s("n@x"))
                        .set(kw(":person/age"), l(1)),
                ),
        )
        .unwrap();
    assert_eq!(r.tempid("p"), r.tempid("q"));
    // Lookup refs in entity and value position.
    let lookup = EntityRef::Lookup(kw(":person/email"), Value::String("a@x".into()));
    db.transact(TxData::default().op(TxOp::Add {
        e: lookup.clone(),
        a: kw(":person/friend"),
        v: TxValue::Entity(EntityRef::Lookup(
            kw(":person/email"),
            Value::String("n@x".into()),
        )),
    }))
    .unwrap();
    let n = r.tempid("p").unwrap();
    assert!(facts(&db, a).contains(&(":person/friend".into(), Value::Ref(n))));
    assert_eq!(
        facts(&db, a)
            .iter()
            .filter(|(k, _)| k == ":person/age")
            .count(),
        1
    );
}

#[test]
fn errors_name_the_problem_and_change_nothing() {
    let (_d, db) = people();
    db.transact(
        TxData::default().map(
            EntityMap::with_id(temp("a"))
                .set(kw(":person/ssn"), s("123"))
                .set(kw(":person/name"), s("A")),
        ),
    )
    .unwrap();
    let before = eav_entries(&db);
    let cases: Vec<(TxData, fn(&TxError) -> bool)> = vec![
        (
            TxData::default().map(EntityMap::with_id(temp("z")).set(kw(":person/nope"), s("x"))),
            |e| matches!(e, TxError::UnknownAttribute { attr, .. } if attr == ":person/nope"),
        ),
        (
            TxData::default().map(EntityMap::with_id(temp("z")).set(kw(":person/age"), s("old"))),
            |e| matches!(e, TxError::WrongType { attr, .. } if attr == ":person/age"),
        ),
        (
            TxData::default().op(TxOp::Add {
                e: EntityRef::Lookup(kw(":person/email"), Value::String("none@x".into())),
                a: kw(":person/age"),
                v: l(1),
            }),
            |e| matches!(e, TxError::LookupNotFound { .. }),
        ),
        (
            TxData::default().map(EntityMap::with_id(temp("z")).set(kw(":person/ssn"), s("123"))),
            |e| matches!(e, TxError::UniqueConflict { attr, .. } if attr == ":person/ssn"),
        ),
        (
            TxData::default().op(TxOp::Cas {
                e: EntityRef::Lookup(kw(":person/ssn"), Value::String("123".into())),
                a: kw(":person/name"),
                old: Some(s("B")),
                new: s("C"),
            }),
            |e| matches!(e, TxError::CasFailed { .. }),
        ),
        (
            TxData::default()
                .map(
                    EntityMap::with_id(temp("z"))
                        .set(kw(":person/name"), s("x"))
                        .set(kw(":person/age"), l(1)),
                )
                .op(TxOp::Add {
                    e: temp("z"),
                    a: kw(":person/age"),
                    v: l(2),
                }),
            |e| matches!(e, TxError::DatomConflict { .. }),
        ),
        (
            TxData::default().op(TxOp::Add {
                e: EntityRef::Ident(kw(":no/such")),
                a: kw(":person/age"),
                v: l(1),
            }),
            |e| matches!(e, TxError::IdentNotFound { .. }),
        ),
    ];
    for (i, (data, check)) in cases.into_iter().enumerate() {
        // Each bad transaction travels with a good one in the same group commit.
        let bad = db.transact_async(data);
        let good = db.transact_async(
            TxData::default()
                .map(EntityMap::with_id(temp("ok")).set(kw(":person/name"), s(&format!("ok{i}")))),
        );
        let err = bad.wait().unwrap_err();
        assert!(check(&err), "case {i}: unexpected {err:?}");
        assert!(err.is_user_error());
        good.wait().unwrap();
    }
    let after = eav_entries(&db);
    // Only the good transactions wrote: 7 names and 7 tx instants.
    assert_eq!(after - before, 14);
}

#[test]
fn retract_entity_takes_components_and_incoming_refs() {
    let (_d, db, r) = people_after(
        TxData::default()
            .map(
                EntityMap::with_id(temp("a"))
                    .set(kw(":person/name"), s("A"))
                    .set(
                        kw(":person/address"),
                        TxValue::Map(Box::new(
                            EntityMap::default().set(kw(":address/city"), s("Oslo")),
                        )),
                    ),
            )
            .map(
                EntityMap::with_id(temp("b"))
                    .set(kw(":person/name"), s("B"))
                    .set(kw(":person/friend"), s("a")),
            ),
    );
    let a = r.tempid("a").unwrap();
    let b = r.tempid("b").unwrap();
    let addr = match facts(&db, a)
        .into_iter()
        .find(|(k, _)| k == ":person/address")
    {
        Some((_, Value::Ref(x))) => x,
        other => panic!("no address: {other:?}"),
    };
    assert_eq!(
        facts(&db, addr),
        vec![(":address/city".into(), Value::String("Oslo".into()))]
    );
    db.transact(TxData::default().op(TxOp::RetractEntity {
        e: EntityRef::Id(a),
    }))
    .unwrap();
    assert!(facts(&db, a).is_empty());
    assert!(
        facts(&db, addr).is_empty(),
        "component retracted with its owner"
    );
    assert_eq!(
        facts(&db, b),
        vec![(":person/name".into(), Value::String("B".into()))]
    );
}

#[test]
fn reverse_attributes_and_retract() {
    let (_d, db, r) = people_after(
        TxData::default()
            .map(
                EntityMap::with_id(temp("a"))
                    .set(kw(":person/name"), s("A"))
                    .set(kw(":person/_friend"), TxValue::Entity(temp("b"))),
            )
            .map(EntityMap::with_id(temp("b")).set(kw(":person/name"), s("B"))),
    );
    let (a, b) = (r.tempid("a").unwrap(), r.tempid("b").unwrap());
    assert!(facts(&db, b).contains(&(":person/friend".into(), Value::Ref(a))));
    db.transact(TxData::default().op(TxOp::Retract {
        e: EntityRef::Id(b),
        a: kw(":person/friend"),
        v: None,
    }))
    .unwrap();
    assert!(!facts(&db, b).iter().any(|(k, _)| k == ":person/friend"));
}

#[test]
fn schema_changes_that_data_forbids_are_refused() {
    let (_d, db) = people();
    db.transact(
        TxData::default().map(EntityMap::with_id(temp("a")).set(kw(":person/name"), s("Same"))),
    )
    .unwrap();
    db.transact(
        TxData::default().map(EntityMap::with_id(temp("b")).set(kw(":person/name"), s("Same"))),
    )
    .unwrap();
    let name = EntityRef::Ident(kw(":person/name"));
    let err = db
        .transact(TxData::default().op(TxOp::Add {
            e: name.clone(),
            a: kw(":db/valueType"),
            v: k(":db.type/long"),
        }))
        .unwrap_err();
    assert!(matches!(err, TxError::SchemaChange { .. }), "{err:?}");
    let err = db
        .transact(TxData::default().op(TxOp::Add {
            e: name,
            a: kw(":db/unique"),
            v: k(":db.unique/value"),
        }))
        .unwrap_err();
    assert!(matches!(err, TxError::SchemaChange { .. }), "{err:?}");
    // Allowed: a doc string.
    db.transact(TxData::default().op(TxOp::Add {
        e: EntityRef::Ident(kw(":person/name")),
        a: kw(":db/doc"),
        v: s("A person's name"),
    }))
    .unwrap();
    let snap = db.db().unwrap();
    assert_eq!(
        snap.attr(&kw(":person/name")).unwrap().doc.as_deref(),
        Some("A person's name")
    );
}

#[test]
fn concurrent_requests_keep_their_own_tempids() {
    let (_d, db) = people();
    let handles: Vec<_> = (0..300)
        .map(|i| {
            db.transact_async(
                TxData::default().map(
                    EntityMap::with_id(temp("me"))
                        .set(kw(":person/email"), s(&format!("u{}@x", i % 150)))
                        .set(kw(":person/age"), l(i)),
                ),
            )
        })
        .collect();
    let mut ids = std::collections::HashMap::new();
    for (i, h) in handles.into_iter().enumerate() {
        let r = h.wait().unwrap();
        let id = r.tempid("me").unwrap();
        // Requests i and i+150 upsert onto the same entity; all others differ.
        if let Some(prev) = ids.insert(i % 150, id) {
            assert_eq!(prev, id);
        }
    }
    let distinct: std::collections::HashSet<_> = ids.values().collect();
    assert_eq!(distinct.len(), 150);
    assert!(db.env().commit_counters().largest_batch > 1);
}

#[test]
fn bulk_load_writes_indexes_statistics_and_counters() {
    let (_d, db) = people();
    let base = datalith::raw::USER_PARTITION_START;
    let mut datoms = Vec::new();
    for i in 0..1000u64 {
        datoms.push((
            base + i,
            kw(":person/email"),
            Value::String(format!("u{i}@x").into()),
        ));
        datoms.push((base + i, kw(":person/age"), Value::Long((i % 7) as i64)));
    }
    assert_eq!(db.fill_db(&datoms).unwrap(), 2000);
    let snap = db.db().unwrap();
    let age = snap.attr(&kw(":person/age")).unwrap().id;
    let stats = snap.reader().stats(age).unwrap();
    assert_eq!(stats.datoms, 1000);
    // `:person/age` has no AVE entries (no `:db/index`): its 7 values are estimated from its
    // sketch, where two of so few values share a register about one time in four.
    assert!(snap.reader().is_listed(age).unwrap());
    assert!((6..=8).contains(&stats.distinct), "{stats:?}");
    let n = snap
        .q("[:find (count ?e) . :where [?e :person/age 3]]", &[])
        .unwrap();
    assert_eq!(n, datalith::edn::Edn::Long(143));
    drop(snap);
    // Ids handed out afterwards never collide with loaded ones.
    let r = db
        .transact(
            TxData::default().map(EntityMap::with_id(temp("new")).set(kw(":person/name"), s("N"))),
        )
        .unwrap();
    assert!(r.tempid("new").unwrap() >= base + 1000);
    // Upserts find bulk-loaded entities.
    let r = db
        .transact(
            TxData::default().map(
                EntityMap::with_id(temp("u"))
                    .set(kw(":person/email"), s("u5@x"))
                    .set(kw(":person/age"), l(99)),
            ),
        )
        .unwrap();
    assert_eq!(r.tempid("u"), Some(base + 5));
    // Bad input is refused before anything is written.
    let err = db
        .fill_db(&[(base + 5000, kw(":person/age"), Value::String("x".into()))])
        .unwrap_err();
    assert!(matches!(err, TxError::WrongType { .. }), "{err:?}");
    let err = db
        .fill_db(&[(7, kw(":person/age"), Value::Long(1))])
        .unwrap_err();
    assert!(matches!(err, TxError::Malformed { .. }), "{err:?}");
}

#[test]
fn schema_map_at_open_datalevin_style() {
    let dir = tempfile::tempdir().unwrap();
    let schema = datalith::edn::read_one(
        "{:user/name {:db/valueType :db.type/string :db/unique :db.unique/identity}
          :user/tags {:db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}}",
    )
    .unwrap();
    let mut opts = DbOptions::default();
    opts.schema = Some(schema.clone());
    let db = Database::open(dir.path(), opts.clone()).unwrap();
    let snap = db.db().unwrap();
    let name = snap.attr(&kw(":user/name")).unwrap();
    assert_eq!(name.unique, Some(datalith::store::Unique::Identity));
    assert!(snap.attr(&kw(":user/tags")).unwrap().is_many());
    let version = snap.schema().version;
    drop(snap);
    drop(db);
    // Reopening with the same map changes nothing.
    let db = Database::open(dir.path(), opts).unwrap();
    assert_eq!(db.db().unwrap().schema().version, version);
    // A bad map is a typed error.
    let err = db
        .install_schema_map(&datalith::edn::read_one("{:x 1}").unwrap())
        .unwrap_err();
    assert!(matches!(err, TxError::Malformed { .. }), "{err:?}");
}

#[test]
fn long_values_round_trip_through_the_giants_table() {
    let (_d, db) = people();
    let long_a = "a".repeat(3000);
    let long_b = format!("{}b", "a".repeat(2999));
    let r = db
        .transact(
            TxData::default()
                .map(
                    EntityMap::with_id(temp("x"))
                        .set(kw(":person/email"), s(&long_a))
                        .set(kw(":person/name"), s(&long_b)),
                )
                .map(
                    EntityMap::with_id(temp("y"))
                        .set(kw(":person/email"), s(&long_b))
                        .set(kw(":person/name"), s(&long_b)),
                ),
        )
        .unwrap();
    let (x, y) = (r.tempid("x").unwrap(), r.tempid("y").unwrap());
    let snap = db.db().unwrap();
    // Exact values back, by entity and by value (upsert and lookup refs hash the same way).
    assert!(facts(&db, x).contains(&(":person/email".into(), Value::String(long_a.clone().into()))));
    let who = snap
        .q(
            "[:find ?e . :in $ ?m :where [?e :person/email ?m]]",
            &[datalith::edn::Edn::String(long_b.clone())],
        )
        .unwrap();
    assert_eq!(who, datalith::edn::Edn::Long(y as i64));
    let names = snap
        .q("[:find (count ?e) . :where [?e :person/name ?n]]", &[])
        .unwrap();
    assert_eq!(names, datalith::edn::Edn::Long(2));
    assert!(snap.check().unwrap().is_ok(), "{:?}", snap.check().unwrap());
    drop(snap);
    let r2 = db
        .transact(
            TxData::default().map(
                EntityMap::with_id(temp("z"))
                    .set(kw(":person/email"), s(&long_a))
                    .set(kw(":person/age"), l(1)),
            ),
        )
        .unwrap();
    assert_eq!(
        r2.tempid("z"),
        Some(x),
        "upsert through a long identity value"
    );
    // Retracting the last holder removes the giant record; the store stays consistent.
    db.transact(TxData::default().op(TxOp::RetractEntity {
        e: EntityRef::Id(x),
    }))
    .unwrap();
    db.transact(TxData::default().op(TxOp::RetractEntity {
        e: EntityRef::Id(y),
    }))
    .unwrap();
    let giants = db
        .env()
        .table("giants", datalith::kv::TableKind::Plain)
        .unwrap();
    assert_eq!(db.env().read().unwrap().view().len(&giants).unwrap(), 0);
    assert!(db.db().unwrap().check().unwrap().is_ok());
}

#[test]
fn with_is_a_dry_run() {
    let (_d, db) = people();
    let snap = db.db().unwrap();
    let data =
        TxData::default().map(EntityMap::with_id(temp("a")).set(kw(":person/name"), s("Dry")));
    let r = snap.with(&data).unwrap();
    assert!(r.tx_data.iter().any(|d| d.v == Value::String("Dry".into())));
    assert!(r.tempid("a").is_some());
    // Nothing was written.
    drop(snap);
    let n = db
        .db()
        .unwrap()
        .q("[:find (count ?e) . :where [?e :person/name]]", &[])
        .unwrap();
    // A count over no rows is no result (Datomic's nil).
    assert_eq!(n, datalith::edn::Edn::Nil);
    // And errors come out as they would.
    let bad = TxData::default().map(EntityMap::with_id(temp("a")).set(kw(":person/age"), s("x")));
    assert!(matches!(
        db.db().unwrap().with(&bad),
        Err(TxError::WrongType { .. })
    ));
}

#[test]
fn composite_tuples_follow_their_components() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    db.transact(edn(
        "[{:db/ident :reg/course :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
          {:db/ident :reg/student :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
          {:db/ident :reg/course+student :db/valueType :db.type/tuple
           :db/tupleAttrs [:reg/course :reg/student] :db/cardinality :db.cardinality/one
           :db/unique :db.unique/identity}]",
    ))
    .unwrap();
    let r = db
        .transact(edn(r#"[{:db/id "r" :reg/course "math" :reg/student 7}]"#))
        .unwrap();
    let e = r.tempid("r").unwrap();
    let tuple = |db: &Database| {
        db.db()
            .unwrap()
            .q(
                "[:find ?t . :in $ ?e :where [?e :reg/course+student ?t]]",
                &[datalith::edn::Edn::Long(e as i64)],
            )
            .unwrap()
    };
    assert_eq!(
        tuple(&db),
        datalith::edn::read_one(r#"["math" 7]"#).unwrap()
    );
    db.transact(edn(&format!("[[:db/add {e} :reg/student 8]]")))
        .unwrap();
    assert_eq!(
        tuple(&db),
        datalith::edn::read_one(r#"["math" 8]"#).unwrap()
    );
    db.transact(edn(&format!("[[:db/retract {e} :reg/course \"math\"]]")))
        .unwrap();
    assert_eq!(tuple(&db), datalith::edn::read_one(r#"[nil 8]"#).unwrap());
    // Uniqueness holds on the composite: another entity with the same pair is refused.
    db.transact(edn(&format!("[[:db/add {e} :reg/course \"art\"]]")))
        .unwrap();
    let err = db.transact(edn(r#"[{:db/id "z" :reg/course "art" :reg/student 8}]"#));
    assert!(err.is_err(), "{err:?}");
}

#[test]
fn tuples_cardinality_one_and_many_from_edn() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    db.transact(edn(
        "[{:db/ident :pt :db/valueType :db.type/tuple :db/tupleTypes [:db.type/long :db.type/long] :db/cardinality :db.cardinality/one}
          {:db/ident :pts :db/valueType :db.type/tuple :db/tupleType :db.type/long :db/cardinality :db.cardinality/many}]",
    ))
    .unwrap();
    let r = db
        .transact(edn(r#"[{:db/id "p" :pt [1 2] :pts [[1 2] [3 4 5]]}]"#))
        .unwrap();
    let p = r.tempid("p").unwrap();
    let snap = db.db().unwrap();
    let got = snap
        .q(
            "[:find ?t :in $ ?e :where [?e :pts ?t]]",
            &[datalith::edn::Edn::Long(p as i64)],
        )
        .unwrap();
    assert_eq!(
        got,
        datalith::edn::read_one("#{[[1 2]] [[3 4 5]]}").unwrap()
    );
    let one = snap
        .q(
            "[:find ?t . :in $ ?e :where [?e :pt ?t]]",
            &[datalith::edn::Edn::Long(p as i64)],
        )
        .unwrap();
    assert_eq!(one, datalith::edn::read_one("[1 2]").unwrap());
}

#[test]
fn datomic_schema_flags_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    db.transact(edn(
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
           :db/index true :db/noHistory true :db/fulltext false :db/doc \"a name\"}]",
    ))
    .unwrap();
    assert!(db.db().unwrap().attr(&kw(":name")).is_some());
}

/// Entries of the EAV index: what a rejected transaction must leave unchanged.
fn eav_entries(db: &Database) -> u64 {
    let eav = db
        .env()
        .table("eav", datalith::kv::TableKind::List)
        .unwrap();
    db.env().read().unwrap().view().len(&eav).unwrap()
}

/// Transactions of new entities take a path that only appends (no per-datom bookkeeping)
/// until a term leaves it; each case's result must be the general path's.
#[test]
fn new_entities_leave_the_append_path_with_the_same_answer() {
    let add = |e: &str, a: &str, v: TxValue| {
        TxItemCase::Op(TxOp::Add {
            e: temp(e),
            a: kw(a),
            v,
        })
    };
    let map = |e: &str, pairs: Vec<(&str, TxValue)>| {
        let mut m = EntityMap::with_id(temp(e));
        for (a, v) in pairs {
            m = m.set(kw(a), v);
        }
        TxItemCase::Map(m)
    };
    let long_run: Vec<(&str, TxValue)> = (0..40)
        .map(|i| (":person/tags", k(&format!(":t{i}"))))
        .collect();
    type Want = Result<Vec<(&'static str, Vec<(String, Value)>)>, &'static str>;
    let name = |n: &str| (":person/name".to_string(), Value::String(n.into()));
    let age = |n: i64| (":person/age".to_string(), Value::Long(n));
    let tag = |t: &str| (":person/tags".to_string(), Value::Keyword(kw(t)));
    let cases: Vec<(&str, Vec<TxItemCase>, Want)> = vec![
        (
            "one entity's terms in two runs",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                map("b", vec![(":person/name", s("B"))]),
                map("a", vec![(":person/age", l(3))]),
            ],
            Ok(vec![("a", vec![age(3), name("A")]), ("b", vec![name("B")])]),
        ),
        (
            "a second value of a cardinality-one attribute",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                add("a", ":person/name", s("Z")),
            ],
            Err("conflict"),
        ),
        (
            "a second value of a cardinality-one attribute, in a later run",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                map("b", vec![(":person/name", s("B"))]),
                add("a", ":person/name", s("Z")),
            ],
            Err("conflict"),
        ),
        (
            "the same value twice",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                add("a", ":person/name", s("A")),
            ],
            Ok(vec![("a", vec![name("A")])]),
        ),
        (
            "asserted then retracted",
            vec![
                map("a", vec![(":person/name", s("A")), (":person/age", l(1))]),
                TxItemCase::Op(TxOp::Retract {
                    e: temp("a"),
                    a: kw(":person/name"),
                    v: Some(s("A")),
                }),
            ],
            // Datomic's :db.error/datoms-conflict.
            Err("asserted and retracted"),
        ),
        (
            "several values of a cardinality-many attribute",
            vec![map(
                "a",
                vec![(
                    ":person/tags",
                    TxValue::Many(vec![k(":x"), k(":y"), k(":x")]),
                )],
            )],
            Ok(vec![("a", vec![tag(":x"), tag(":y")])]),
        ),
        (
            "a run past the scan limit",
            vec![map("a", long_run)],
            Ok(vec![(
                "a",
                (0..40).map(|i| tag(&format!(":t{i}"))).collect::<Vec<_>>(),
            )]),
        ),
        (
            "a unique attribute among new entities",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                map(
                    "b",
                    vec![(":person/email", s("e@x")), (":person/age", l(2))],
                ),
                map("c", vec![(":person/email", s("e@x"))]),
            ],
            Ok(vec![
                ("a", vec![name("A")]),
                (
                    "b",
                    vec![
                        age(2),
                        (":person/email".into(), Value::String("e@x".into())),
                    ],
                ),
            ]),
        ),
        (
            "new entities with distinct identity values",
            vec![
                map(
                    "a",
                    vec![(":person/email", s("a@x")), (":person/name", s("A"))],
                ),
                map(
                    "b",
                    vec![(":person/email", s("b@x")), (":person/name", s("B"))],
                ),
            ],
            Ok(vec![
                (
                    "a",
                    vec![
                        name("A"),
                        (":person/email".into(), Value::String("a@x".into())),
                    ],
                ),
                (
                    "b",
                    vec![
                        name("B"),
                        (":person/email".into(), Value::String("b@x".into())),
                    ],
                ),
            ]),
        ),
        (
            "two new entities with one unique value",
            vec![
                map("a", vec![(":person/ssn", s("1"))]),
                map("b", vec![(":person/ssn", s("1"))]),
            ],
            // Both assertions are this transaction's: Datomic's datoms conflict.
            Err("unique twice"),
        ),
        (
            // Datomic: a tempid names no entity to retract (`:db.error/not-a-keyword`).
            "retractEntity of a new entity",
            vec![
                map("a", vec![(":person/name", s("A"))]),
                map("b", vec![(":person/name", s("B"))]),
                TxItemCase::Op(TxOp::RetractEntity { e: temp("a") }),
            ],
            Err("retract a tempid"),
        ),
    ];
    for (what, items, want) in cases {
        let (_d, db) = people();
        let mut data = TxData::default();
        for item in items {
            data = match item {
                TxItemCase::Map(m) => data.map(m),
                TxItemCase::Op(op) => data.op(op),
            };
        }
        match (db.transact(data), want) {
            (Ok(report), Ok(entities)) => {
                for (t, expected) in entities {
                    let mut expected = expected;
                    expected.sort();
                    let mut got = match report.tempid(t) {
                        Some(e) => facts(&db, e),
                        None => vec![],
                    };
                    got.sort();
                    assert_eq!(got, expected, "{what}: entity {t}");
                }
            }
            (Err(e), Err(kind)) => {
                assert!(
                    (matches!(e, TxError::DatomConflict { .. }) && kind == "conflict")
                        || (matches!(e, TxError::UniqueConflict { .. }) && kind == "unique")
                        || (matches!(e, TxError::UniqueValueTwice { .. })
                            && kind == "unique twice")
                        || (matches!(e, TxError::DatomConflictAssertRetract { .. })
                            && kind == "asserted and retracted")
                        || (matches!(e, TxError::RetractEntityTempid { .. })
                            && kind == "retract a tempid"),
                    "{what}: {e}"
                );
            }
            (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
        }
    }
}

enum TxItemCase {
    Map(EntityMap),
    Op(TxOp),
}

/// The schema of the EDN cases below (the one the answers were taken from the real Datomic
/// with) and four people, `p8`, `p9`, `x` and `y`, named by `:person/id`.
const EDN_SCHEMA: &str = r#"[
  {:db/ident :person/id :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :person/ssn :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
  {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :person/manager :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :person/friends :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :person/address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
  {:db/ident :person/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
  {:db/ident :person/pair :db/valueType :db.type/tuple :db/tupleTypes [:db.type/keyword :db.type/string] :db/cardinality :db.cardinality/one}
  {:db/ident :person/pairs :db/valueType :db.type/tuple :db/tupleTypes [:db.type/keyword :db.type/string] :db/cardinality :db.cardinality/many}
  {:db/ident :person/score :db/valueType :db.type/float :db/cardinality :db.cardinality/one}
  {:db/ident :address/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :color/red} {:db/ident :color/blue}]"#;

const EDN_SEED: &str = r#"[{:person/id "p8" :person/name "P8"} {:person/id "p9" :person/name "P9"}
  {:person/id "x"} {:person/id "y"}]"#;

/// The datoms a transaction wrote, each `[e a v added]` with entities named by their
/// `:person/id` (`new` for one without), sorted; the tx entity's datoms left out.
fn written(db: &Database, before: &datalith::Db, report: &datalith::tx::TxReport) -> Vec<String> {
    let after = db.db().unwrap();
    let id_attr = after.attr(&kw(":person/id")).unwrap().id;
    let ident_attr = after.attr(&kw(":db/ident")).unwrap().id;
    let label = |e: u64| {
        for snap in [&after, before] {
            if let Some(Value::String(s)) = snap.reader().values(e, id_attr).unwrap().first() {
                return s.to_string();
            }
        }
        "new".to_string()
    };
    let mut out: Vec<String> = report
        .tx_data
        .iter()
        .filter(|d| d.e != report.tx)
        .map(|d| {
            let a = after.schema().get(d.a).unwrap();
            let v = match (&d.v, a.is_ref()) {
                (Value::Ref(x), true) => {
                    match after.reader().values(*x, ident_attr).unwrap().first() {
                        Some(Value::Keyword(k)) => k.to_string(),
                        _ => label(*x),
                    }
                }
                (v, _) => datalith::edn::to_edn_string(&datalith::edn::edn_from_value(v)),
            };
            format!("[{} {} {} {}]", label(d.e), a.ident, v, d.added)
        })
        .collect();
    out.sort();
    out
}

/// Tx data in EDN, each case checked against the answer of the real Datomic (a peer with an
/// in-memory database and [`EDN_SCHEMA`]): a line of tx data, then, indented, the datoms it
/// writes (as [`written`] prints them) or `! kind`, the error it fails with (see
/// [`error_is`]); a line starting with `;` is a comment.
const EDN_CASES: &str = r#"
; A reverse attribute's vector is one lookup ref.
[{:person/id "n10" :person/_manager [:person/id "p8"]}]
  [n10 :person/id "n10" true]
  [p8 :person/manager n10 true]
[{:person/id "n10" :person/_friends [:person/id "p8"]}]
  [n10 :person/id "n10" true]
  [p8 :person/friends n10 true]
; A card-one ref attribute's vector is a lookup ref.
[{:person/id "n10" :person/manager [:person/id "p8"]}]
  [n10 :person/id "n10" true]
  [n10 :person/manager p8 true]
; A card-many attribute's vector is always several values: here an ident and a
; tempid that names nothing else.
[{:person/id "n10" :person/friends [:person/id "x"]}]
  ! only_value
[{:person/id "n10" :person/friends [:color/red :color/blue]}]
  [n10 :person/friends :color/blue true]
  [n10 :person/friends :color/red true]
  [n10 :person/id "n10" true]
[{:person/id "n10" :person/friends [[:person/id "x"] [:person/id "y"]]}]
  [n10 :person/friends x true]
  [n10 :person/friends y true]
  [n10 :person/id "n10" true]
; In an operation the value is one value: a lookup ref, whatever the cardinality.
[[:db/add [:person/id "p9"] :person/manager [:person/id "p8"]]]
  [p9 :person/manager p8 true]
[[:db/add [:person/id "p9"] :person/friends [:person/id "p8"]]]
  [p9 :person/friends p8 true]
; A tuple of two elements is a tuple, not a lookup ref.
[{:person/id "n10" :person/pair [:person/id "p8"]}]
  [n10 :person/id "n10" true]
  [n10 :person/pair [:person/id "p8"] true]
[{:person/id "n10" :person/pairs [[:person/id "p8"] [:a "b"]]}]
  [n10 :person/id "n10" true]
  [n10 :person/pairs [:a "b"] true]
  [n10 :person/pairs [:person/id "p8"] true]
[{:person/id "n10" :person/pairs [:person/id "p8"]}]
  ! wrong_type
[[:db/add [:person/id "p8"] :person/pairs [:person/id "p8"]]]
  [p8 :person/pairs [:person/id "p8"] true]
[[:db/cas [:person/id "p9"] :person/manager nil [:person/id "p8"]]]
  [p9 :person/manager p8 true]
; Several values in an operation (Datomic refuses them; Datalith asserts each).
[[:db/add [:person/id "p9"] :person/tags [:a :b]]]
  [p9 :person/tags :a true]
  [p9 :person/tags :b true]
; A reverse attribute's value is in entity position: one entity, never several, and
; a vector is one lookup ref, whose first element must be an attribute.
[{:person/id "n10" :person/_manager [[:person/id "p8"] [:person/id "p9"]]}]
  ! not_attribute
[{:person/id "n10" :person/_manager ["t1" "t2"]} {:db/id "t1" :person/id "t1"} {:db/id "t2" :person/id "t2"}]
  ! not_keyword
[{:person/id "n10" :person/_manager [[:person/id "p8"]]}]
  ! bad_lookup
[{:person/id "n10" :person/_manager [:person/id "p8" "x"]}]
  ! bad_lookup
[{:person/id "n10" :person/_manager "t1"} {:db/id "t1" :person/id "t1"}]
  [n10 :person/id "n10" true]
  [t1 :person/id "t1" true]
  [t1 :person/manager n10 true]
; A nested map names no entity there, whether or not it names itself.
[{:person/id "n10" :person/_manager {:person/name "anon"}}]
  ! not_entity
[{:person/id "n10" :person/_manager {:person/id "n11" :person/name "R"}}]
  ! not_entity
[{:person/id "n10" :person/_address {:db/id "t" :person/name "R"}}]
  ! not_entity
; A tuple has as many elements as its :db/tupleTypes, each of its type or nil.
[{:person/id "n10" :person/pair [:a]}]
  ! bad_tuple
[{:person/id "n10" :person/pair [:a "b" "c"]}]
  ! bad_tuple
[{:person/id "n10" :person/pair ["b" :a]}]
  ! bad_tuple
[[:db/add [:person/id "p8"] :person/pair [:a]]]
  ! bad_tuple
[{:person/id "n10" :person/pair [nil "b"]}]
  [n10 :person/id "n10" true]
  [n10 :person/pair [nil "b"] true]
; A map as an operation's value names no entity (Datomic refuses any), even one that names
; itself; maps nest only in maps.
[[:db/add [:person/id "p8"] :person/manager {:person/name "anon"}]]
  ! not_entity
[[:db/add [:person/id "p8"] :person/manager {:person/id "n11" :person/name "R"}]]
  ! not_entity
[[:db/cas [:person/id "p8"] :person/manager nil {:person/id "n11"}]]
  ! not_entity
; Retracting an entity that a lookup ref or ident names but does not exist: a no-op.
[[:db/retractEntity [:person/id "nope"]]]
[[:db/retractEntity :color/nope]]
; Anything else on a lookup ref that names nothing is an error.
[[:db/retract [:person/id "nope"] :person/name "x"]]
  ! not_found
[[:db/retract [:person/id "nope"] :person/name]]
  ! not_found
[[:db/cas [:person/id "nope"] :person/name nil "x"]]
  ! not_found
[[:db/add [:person/id "p8"] :person/manager [:person/id "nope"]]]
  ! not_found
; Nested maps under a reference that is not a component need :db/id or an identity.
[{:person/id "n10" :person/manager {:person/name "anon"}}]
  ! nested
[{:person/id "n10" :person/friends [{:person/name "anon"}]}]
  ! nested
[{:person/id "n10" :person/manager {:person/ssn "s1"}}]
  ! nested
[{:person/id "n10" :person/manager {:db/id "t" :person/name "anon"}}]
  [n10 :person/id "n10" true]
  [n10 :person/manager new true]
  [new :person/name "anon" true]
[{:person/id "n10" :person/manager {:person/id "p20" :person/name "anon"}}]
  [n10 :person/id "n10" true]
  [n10 :person/manager p20 true]
  [p20 :person/id "p20" true]
  [p20 :person/name "anon" true]
[{:person/id "n10" :person/address {:address/city "X"}}]
  [n10 :person/address new true]
  [n10 :person/id "n10" true]
  [new :address/city "X" true]
; A tempid used only as a value names nothing.
[{:person/id "n10" :person/manager "zz"}]
  ! only_value
[{:person/id "n10" :person/manager -5}]
  ! only_value
[{:person/id "n10" :person/friends [{:db/id "q"}]}]
  ! only_value
; One datom asserted and retracted, or two values of a card-one attribute.
[[:db/add [:person/id "p8"] :person/name "Z"] [:db/retract [:person/id "p8"] :person/name "Z"]]
  ! assert_retract
[[:db/add [:person/id "p8"] :person/name "P8"] [:db/retract [:person/id "p8"] :person/name "P8"]]
  ! assert_retract
[[:db/add [:person/id "p8"] :person/tags :a] [:db/retract [:person/id "p8"] :person/tags :a]]
  ! assert_retract
[[:db/add "t" :person/name "A"] [:db/retract "t" :person/name "A"]]
  ! assert_retract
[[:db/retract [:person/id "p8"] :person/name] [:db/add [:person/id "p8"] :person/name "P8"]]
  ! assert_retract
[[:db/retractEntity [:person/id "p8"]] [:db/add [:person/id "p8"] :person/name "P8"]]
  ! assert_retract
[[:db/add [:person/id "p8"] :person/name "A"] [:db/add [:person/id "p8"] :person/name "B"]]
  ! conflict
[[:db/cas [:person/id "p8"] :person/name "P8" "A"] [:db/add [:person/id "p8"] :person/name "B"]]
  ! conflict
[{:person/id "p8" :person/name "A"} {:person/id "p8" :person/name "B"}]
  ! conflict
; What Datomic accepts around them.
[[:db/add [:person/id "p8"] :person/name "A"] [:db/add [:person/id "p8"] :person/name "A"]]
  [p8 :person/name "A" true]
  [p8 :person/name "P8" false]
[[:db/add [:person/id "p8"] :person/tags :q] [:db/retract [:person/id "p8"] :person/tags]]
  [p8 :person/tags :q true]
[[:db/retractEntity [:person/id "p8"]] [:db/add [:person/id "p8"] :person/name "New"]]
  [p8 :person/id "p8" false]
  [p8 :person/name "New" true]
  [p8 :person/name "P8" false]
[[:db/add [:person/id "p8"] :person/name "A"] [:db/retract [:person/id "p8"] :person/name "P8"]]
  [p8 :person/name "A" true]
  [p8 :person/name "P8" false]
; Floats from EDN numbers (EDN has one floating type); a long is not a float.
[{:person/id "n10" :person/score 1.5}]
  [n10 :person/id "n10" true]
  [n10 :person/score 1.5 true]
[[:db/add [:person/id "p8"] :person/score 0.1]]
  [p8 :person/score 0.1 true]
[{:person/id "n10" :person/score 2}]
  ! wrong_type
"#;

/// Whether `e` is the error kind a case of [`EDN_CASES`] names.
fn error_is(kind: &str, e: &TxError) -> bool {
    match kind {
        "conflict" => matches!(e, TxError::DatomConflict { .. }),
        "assert_retract" => matches!(e, TxError::DatomConflictAssertRetract { .. }),
        "nested" => matches!(e, TxError::InvalidNestedEntity { .. }),
        "not_found" => matches!(e, TxError::LookupNotFound { .. }),
        "only_value" => matches!(e, TxError::TempidOnlyValue { .. }),
        "wrong_type" => matches!(e, TxError::WrongType { .. }),
        "not_attribute" => matches!(e, TxError::NotAnAttribute { .. }),
        "not_keyword" => matches!(e, TxError::NotAKeyword { .. }),
        "bad_lookup" => matches!(e, TxError::InvalidLookupRef { .. }),
        "not_entity" => matches!(e, TxError::UnresolvableEntity { .. }),
        "bad_tuple" => matches!(e, TxError::InvalidTupleValue { .. }),
        other => panic!("no error kind {other:?} in error_is"),
    }
}

/// The cases of [`EDN_CASES`].
#[test]
fn edn_tx_data_as_datomic_reads_it() {
    // (tx data, the datoms written, the error kind)
    let mut cases: Vec<(&str, Vec<&str>, Option<&str>)> = Vec::new();
    for line in EDN_CASES.lines() {
        if line.trim().is_empty() || line.starts_with(';') {
            continue;
        }
        match line.strip_prefix("  ") {
            None => cases.push((line, Vec::new(), None)),
            Some(answer) => {
                let case = cases.last_mut().expect("a case before its answer");
                match answer.strip_prefix("! ") {
                    Some(kind) => case.2 = Some(kind),
                    None => case.1.push(answer),
                }
            }
        }
    }
    assert_eq!(cases.len(), 61, "cases read from EDN_CASES");
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    for (tx, datoms, error) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        db.transact(edn(EDN_SCHEMA)).unwrap();
        db.transact(edn(EDN_SEED)).unwrap();
        let before = db.db().unwrap();
        match (db.transact(edn(tx)), error) {
            (Ok(report), None) => {
                assert_eq!(written(&db, &before, &report), datoms, "{tx}")
            }
            (Err(e), Some(kind)) => {
                assert!(
                    error_is(kind, &e),
                    "{tx}: unexpected error {e}, want {kind}"
                );
                assert!(!format!("{e}").contains("TxValue"), "{tx}: {e}");
                assert_eq!(facts_count(&db), facts_count_of(&before), "{tx}");
            }
            (got, _) => panic!("{tx}: got {got:?}, want {datoms:?} or error {error:?}"),
        }
    }
}

fn facts_count(db: &Database) -> usize {
    facts_count_of(&db.db().unwrap())
}

fn facts_count_of(snap: &datalith::Db) -> usize {
    snap.datoms(datalith::raw::Index::Eav, &Default::default())
        .unwrap()
        .len()
}

/// Errors print the offending form and values as EDN, as they were written.
#[test]
fn errors_print_forms_as_edn() {
    let cases: &[(&str, &str)] = &[
        (
            r#"[{:person/id "n10" :person/manager {:person/name "anon"}}]"#,
            r#"nested entity {:person/name "anon"} under :person/manager is not a component and has no :db/id or :db.unique/identity attribute, in {:person/id "n10", :person/manager {:person/name "anon"}}"#,
        ),
        (
            r#"[[:db/add [:person/id "p8"] :person/name "Z"] [:db/retract [:person/id "p8"] :person/name "Z"]]"#,
            r#":person/name "Z"] is both asserted and retracted"#,
        ),
        (
            r#"[[:db/add [:person/id "p8"] :person/name "A"] [:db/add [:person/id "p8"] :person/name "B"]]"#,
            r#"asserted as both "A" and "B""#,
        ),
        (
            r#"[{:person/id "n10" :person/manager "zz"}]"#,
            r#"tempid "zz" is used only as a value"#,
        ),
        (
            r#"[[:db/add "x" :person/tags [:a "b"]]]"#,
            r#""b" is no keyword for :person/tags: a string there needs a leading :"#,
        ),
        (
            r#"[[:db/retract [:person/id "nope"] :person/name "x"]]"#,
            r#"lookup ref [:person/id "nope"] names no entity"#,
        ),
        (
            r#"[{:person/id "n10" :person/score 2}]"#,
            r#"expected :db.type/float, got 2 in {:person/id "n10", :person/score 2}"#,
        ),
    ];
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    for (tx, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        db.transact(edn(EDN_SCHEMA)).unwrap();
        db.transact(edn(EDN_SEED)).unwrap();
        let e = db.transact(edn(tx)).expect_err(tx).to_string();
        assert!(e.contains(want), "{tx}:\n  got  {e}\n  want {want}");
    }
}

/// `:db/cas` on a reference compares the old value as given, as Datomic does: an entity id
/// can match, a lookup ref, ident or tempid string is not resolved and fails; the new value
/// is resolved.
#[test]
fn cas_compares_a_reference_as_given() {
    let edn = |s: &str| datalith::TxData::from_edn(&datalith::edn::read_one(s).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(edn(EDN_SCHEMA)).unwrap();
    db.transact(edn(EDN_SEED)).unwrap();
    db.transact(edn(
        r#"[[:db/add [:person/id "p9"] :person/manager [:person/id "p8"]]]"#,
    ))
    .unwrap();
    let p8 = db.db().unwrap().entid(datalith::pull::Eid::Lookup(
        kw(":person/id"),
        Value::string("p8"),
    ));
    let p8 = p8.unwrap().unwrap();
    // old value as written, expected in the error (None: the cas succeeds)
    let cases: Vec<(String, Option<String>)> = vec![
        (
            r#"[:person/id "p8"]"#.into(),
            Some(r#"[:person/id "p8"]"#.into()),
        ),
        (":color/red".into(), Some(":color/red".into())),
        (r#""p8""#.into(), Some(r#""p8""#.into())),
        (format!("{p8}"), None),
    ];
    for (old, want) in cases {
        let tx =
            format!(r#"[[:db/cas [:person/id "p9"] :person/manager {old} [:person/id "p8"]]]"#);
        match (db.transact(edn(&tx)), want) {
            (Err(TxError::CasFailed { expected, .. }), Some(want)) => {
                assert_eq!(expected, want, "{tx}")
            }
            (Ok(_), None) => {}
            (got, want) => panic!("{tx}: got {got:?}, want failure naming {want:?}"),
        }
    }
}

/// Requests in flight together share group commits: an attribute installed by one request is
/// usable by the very next one in the same group, and one never installed stays unknown,
/// whatever group it lands in.
#[test]
fn an_attribute_installed_mid_group_is_known_to_the_requests_after_it() {
    let (_d, db) = people();
    let one = ":db.cardinality/one";
    let mut handles = Vec::new();
    for i in 0..400i64 {
        let data = match i % 20 {
            0 => TxData::default().map(attr(
                &format!(":late/a{}", i / 20),
                ":db.type/long",
                one,
                None,
                false,
            )),
            _ => TxData::default().map(
                EntityMap::with_id(temp("x"))
                    .set(kw(&format!(":late/a{}", i / 20)), l(i))
                    .set(kw(":person/age"), l(i)),
            ),
        };
        handles.push((i, db.transact_async(data)));
    }
    // One more request naming an attribute that is installed nowhere.
    let unknown = db.transact_async(
        TxData::default().map(EntityMap::with_id(temp("y")).set(kw(":late/never"), l(1))),
    );
    for (i, h) in handles {
        h.wait().unwrap_or_else(|e| panic!("request {i}: {e}"));
    }
    assert!(unknown.wait().is_err(), "an attribute never installed");
    assert!(db.env().commit_counters().largest_batch > 1);
    let snap = db.db().unwrap();
    for n in 0..20 {
        let a = kw(&format!(":late/a{n}"));
        assert!(snap.attr(&a).is_some(), "{a} installed");
    }
}

/// A transaction clocked `TxClock::AtLeast` gets the same instant whether it commits alone or
/// in a group with others (a group commit carries the largest instant from one transaction
/// to the next instead of looking it up): two databases, the same clocks, one waiting for
/// each transaction, one queuing them all at once; given instants in between, both ways.
#[test]
fn clocked_instants_do_not_depend_on_grouping() {
    use datalith::TxClock;
    // (clock ms, tx data): clocks going back and forth, and a transaction that gives its own.
    let table: &[(i64, &str)] = &[
        (5_000, "[]"),
        (3_000, "[]"),
        (9_000, "[]"),
        (1_000, "[]"),
        (
            2_000,
            r#"[[:db/add "datomic.tx" :db/txInstant #inst "1970-01-01T00:00:12.000-00:00"]]"#,
        ),
        (11_000, "[]"),
        (13_000, "[]"),
        (4_000, "[]"),
    ];
    let instants = |db: &Database, txs: &[u64]| -> Vec<String> {
        let snapshot = db.db().unwrap();
        txs.iter()
            .map(|tx| {
                let q = format!("[:find ?i . :where [{tx} :db/txInstant ?i]]");
                snapshot.q(&q, &[]).unwrap().to_string()
            })
            .collect()
    };
    let one_dir = tempfile::tempdir().unwrap();
    let one = Database::open(one_dir.path(), DbOptions::default()).unwrap();
    let alone: Vec<u64> = table
        .iter()
        .map(|(ms, data)| {
            one.transact_async_clocked(*data, TxClock::AtLeast(*ms))
                .wait()
                .unwrap()
                .tx
        })
        .collect();
    let many_dir = tempfile::tempdir().unwrap();
    let many = Database::open(many_dir.path(), DbOptions::default()).unwrap();
    let handles: Vec<_> = table
        .iter()
        .map(|(ms, data)| many.transact_async_clocked(*data, TxClock::AtLeast(*ms)))
        .collect();
    let grouped: Vec<u64> = handles.into_iter().map(|h| h.wait().unwrap().tx).collect();
    let want = [
        "5.000", "5.000", "9.000", "9.000", "12.000", "12.000", "13.000", "13.000",
    ]
    .map(|s| format!(r#"#inst "1970-01-01T00:00:{s:0>6}-00:00""#));
    assert_eq!(instants(&one, &alone), want);
    assert_eq!(instants(&many, &grouped), want);
    // The largest instant is carried from one group commit to the next, named by the state's
    // next transaction id: a refused transaction leaves nothing behind, a value built
    // speculatively (`with`) neither, and after a reopen it is looked up again.
    let refused = one.transact_async_clocked(
        r#"[[:db/add "x" :db/txInstant #inst "1970-01-01T00:01:00.000-00:00"]
            [:db/add "x" :db/ident :no/such-attribute-use] [:db/add "y" :no/such 1]]"#,
        TxClock::AtLeast(50_000),
    );
    assert!(refused.wait().is_err());
    let speculative = one
        .db()
        .unwrap()
        .with(r#"[[:db/add "datomic.tx" :db/txInstant #inst "1970-01-01T00:02:00.000-00:00"]]"#)
        .unwrap();
    drop(speculative);
    let next = |db: &Database, ms: i64| -> String {
        let tx = db
            .transact_async_clocked("[]", TxClock::AtLeast(ms))
            .wait()
            .unwrap()
            .tx;
        instants(db, &[tx]).remove(0)
    };
    let inst = |s: &str| format!(r#"#inst "1970-01-01T00:00:{s}-00:00""#);
    assert_eq!(next(&one, 14_000), inst("14.000"));
    assert_eq!(next(&one, 10_000), inst("14.000"));
    drop(one);
    let one = Database::open(one_dir.path(), DbOptions::default()).unwrap();
    assert_eq!(next(&one, 2_000), inst("14.000"));
    assert_eq!(next(&one, 15_000), inst("15.000"));
}

/// Datomic's older schema and data files: `#db/id [:db.part/p]` reader tempids (one entity per
/// literal without a number, one per `-n` of a partition, the transaction itself for
/// `:db.part/tx`) and explicit installs through `:db.install/_attribute :db.part/db`, which
/// Datomic still accepts as the same thing as the attribute's own datoms.
#[test]
fn datomic_file_style_tempids_and_installs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(
        r#"[{:db/id #db/id [:db.part/db] :db/ident :a/name :db/valueType :db.type/string
             :db/cardinality :db.cardinality/one :db/unique :db.unique/identity
             :db.install/_attribute :db.part/db}
            {:db/id #db/id[:db.part/db] :db/ident :a/boss :db/valueType :db.type/ref
             :db/cardinality :db.cardinality/one :db.install/_attribute :db.part/db}
            [:db/add #db/id[:db.part/db -1] :db/ident :a/age]
            [:db/add #db/id[:db.part/db -1] :db/valueType :db.type/long]
            [:db/add #db/id[:db.part/db -1] :db/cardinality :db.cardinality/one]
            [:db/add :db.part/db :db.install/attribute #db/id[:db.part/db -1]]]"#,
    )
    .unwrap();
    db.transact(
        r#"[{:db/id #db/id [:db.part/user -8] :a/name "Ann"}
            {:db/id #db/id [:db.part/user] :a/name "Bob"}
            {:db/id #db/id [:db.part/user -7] :a/name "Cid" :a/age 40}
            [:db/add #db/id [:db.part/user -7] :a/boss #db/id [:db.part/user -8]]
            {:db/id #db/id [:db.part/user] :a/name "Dee" :a/boss #db/id [:db.part/user -7]}
            {:db/id #db/id [:db.part/tx] :a/name "the transaction"}
            {:db/id :a/age :db/doc "years" :db.alter/_attribute :db.part/db}]"#,
    )
    .unwrap();
    let snap = db.db().unwrap();
    let q = |text: &str| datalith::edn::to_edn_string(&snap.q(text, &[]).unwrap());
    assert_eq!(q("[:find (count ?e) . :where [?e :a/name]]"), "5");
    assert_eq!(
        q("[:find ?b . :where [?d :a/name \"Dee\"] [?d :a/boss ?c] [?c :a/age 40] [?c :a/boss ?a] [?a :a/name ?b]]"),
        "\"Ann\""
    );
    assert_eq!(
        q("[:find ?n . :where [?t :db/txInstant] [?t :a/name ?n]]"),
        "\"the transaction\""
    );
    assert_eq!(q("[:find ?d . :where [:a/age :db/doc ?d]]"), "\"years\"");
    // A malformed literal is a typed error naming it.
    let err = db
        .transact("[{:db/id #db/id [:db.part/user 3] :a/name \"X\"}]")
        .unwrap_err();
    assert!(err.to_string().contains("#db/id"), "{err}");
}
