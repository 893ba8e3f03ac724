//! A database that keeps AVE entries only for declared attributes (`ValueIndex::Declared`,
//! Datomic's choice) answers every read as one that keeps them for all (`ValueIndex::All`):
//! the same transactions on both, then a table of queries, pulls and index reads compared.
//! Its AVE holds only the declared attributes' datoms, and `check` is clean on both, also
//! after a reopen and after `:db/index` is switched on and off.

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions, Durability, ValueIndex};

#[allow(dead_code)]
#[path = "common/unordered.rs"]
mod unordered;
use unordered::normalize;

const SCHEMA: &str = r#"[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :doc :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;

/// Transactions after the schema: assertions, a long value, upserts that replace values,
/// retractions of one of many values, a retracted entity.
fn transactions() -> Vec<String> {
    let giant = "x".repeat(700);
    let mut txs = vec![];
    let mut first = String::from("[");
    for i in 1..=40 {
        first.push_str(&format!(
            r#"{{:db/id "e{i}" :k {i} :v "v{}" :n {} :tags [:t{} :t{}]}}"#,
            i % 7,
            i % 5,
            i % 3,
            i % 4
        ));
    }
    first.push(']');
    txs.push(first);
    txs.push(format!(
        r#"[{{:k 1 :friend [[:k 2] [:k 3]] :doc "{giant}"}} {{:k 2 :doc "{giant}"}} {{:k 3 :doc "short"}}]"#
    ));
    txs.push(r#"[{:k 4 :v "new"} {:k 5 :v "v0"} [:db/retract [:k 6] :tags :t0] [:db/retract [:k 6] :tags :t2]]"#.into());
    txs.push(r#"[[:db/retractEntity [:k 7]] [:db/retract [:k 2] :doc]]"#.into());
    txs.push(format!(
        r#"[[:db/retract [:k 1] :doc "{giant}"] {{:k 41 :v "v1" :n 9}}]"#
    ));
    txs
}

/// Queries, pulls and index reads whose answers both layouts must give alike.
const READS: &[&str] = &[
    r#"[:find ?e :where [?e :v "v1"]]"#,
    r#"[:find ?k :where [?e :v "v1"] [?e :k ?k]]"#,
    r#"[:find ?k ?v :where [?e :v ?v] [?e :k ?k]]"#,
    r#"[:find ?k :where [?e :k ?k] [?e :v ?v] [(> ?v "v4")]]"#,
    r#"[:find ?v (count ?e) :where [?e :v ?v]]"#,
    r#"[:find (count-distinct ?v) :where [_ :v ?v]]"#,
    r#"[:find ?k :where [?e :tags :t1] [?e :tags :t3] [?e :k ?k]]"#,
    r#"[:find ?t (count ?e) :where [?e :tags ?t]]"#,
    r#"[:find ?k :where [?e :k ?k] (not [?e :tags :t0])]"#,
    r#"[:find ?k :where [?e :n 3] [?e :k ?k]]"#,
    r#"[:find ?k1 ?k2 :where [?a :v ?v] [?b :v ?v] [?a :k ?k1] [?b :k ?k2] [(< ?k1 ?k2)] [(< ?k2 12)]]"#,
    r#"[:find ?d :where [_ :doc ?d]]"#,
    r#"[:find ?k :where [?e :doc ?d] [?e :k ?k] [(count ?d) ?c] [(> ?c 100)]]"#,
    r#"[:find ?f :where [?e :k 1] [?e :friend ?x] [?x :k ?f]]"#,
    r#"[:find ?k :where [?e :k ?k] [(missing? $ ?e :v)]]"#,
    r#"[:find (min ?v) (max ?v) :where [_ :v ?v]]"#,
    r#"[:find [?v ...] :where [_ :v ?v]]"#,
    r#"[:find ?k :where [?e :v ?v] [(>= ?v "v2")] [(< ?v "v5")] [?e :k ?k]]"#,
    r#"[:find ?k :where [?e :n ?n] [(< ?n 2)] [?e :k ?k]]"#,
    r#"[:find (count ?e) . :where [?e :tags ?t] [(> ?t :t1)]]"#,
];

fn tx(s: &str) -> datalith::TxData {
    datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap()
}

fn open(dir: &std::path::Path, value_index: ValueIndex) -> Database {
    let mut options = DbOptions::with_durability(Durability::NoSync);
    options.value_index = value_index;
    Database::open(dir, options).unwrap()
}

/// Every read of `READS`, a pull and the `:avet` and `:aevt` walks of each attribute, as EDN.
fn answers(db: &Database) -> Vec<(String, Edn)> {
    let snap = db.db().unwrap();
    let mut out = vec![];
    for q in READS {
        out.push((q.to_string(), normalize(&snap.q(q, &[]).unwrap())));
    }
    let pull =
        r#"[:find (pull ?e [:k :v :n :tags {:friend [:k]} :doc]) :where [?e :k ?k] [(< ?k 9)]]"#;
    out.push((pull.into(), normalize(&snap.q(pull, &[]).unwrap())));
    for attr in [":v", ":n", ":tags", ":doc", ":k"] {
        for q in [
            format!(r#"[:find ?e ?x :where [(datoms $ :avet {attr}) [[?e _ ?x]]]]"#),
            format!(r#"[:find ?e ?x :where [(datoms $ :aevt {attr}) [[?e _ ?x]]]]"#),
        ] {
            let got = snap.q(&q, &[]).map(|r| normalize(&r));
            out.push((q, got.unwrap_or_else(|e| Edn::String(e.to_string()))));
        }
    }
    out
}

fn assert_same(all: &Database, declared: &Database, context: &str) {
    for ((q, want), (_, got)) in answers(all).into_iter().zip(answers(declared)) {
        assert_eq!(got, want, "{context}: {q}");
    }
    for db in [all, declared] {
        let report = db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{context}: {:?}", report.problems);
    }
}

#[test]
fn declared_attributes_alone_in_ave_answer_as_every_attribute_in_ave() {
    let (a, d) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = open(a.path(), ValueIndex::All);
    let declared = open(d.path(), ValueIndex::Declared);
    for db in [&all, &declared] {
        db.transact(tx(SCHEMA)).unwrap();
    }
    for (i, t) in transactions().iter().enumerate() {
        for db in [&all, &declared] {
            db.transact(tx(t)).unwrap();
        }
        assert_same(&all, &declared, &format!("after transaction {i}"));
    }
    // AVE holds fewer entries: not those of :v, :tags and :doc.
    let (ra, rd) = (
        all.db().unwrap().check().unwrap(),
        declared.db().unwrap().check().unwrap(),
    );
    assert_eq!(ra.eav_entries, rd.eav_entries);
    assert!(
        rd.ave_entries + 40 < ra.ave_entries,
        "AVE entries: {} with declared attributes alone, {} with all",
        rd.ave_entries,
        ra.ave_entries
    );

    // Reopened (its records replayed where LMDB lacks them), the choice and the answers stay.
    drop(declared);
    let declared = open(d.path(), ValueIndex::All);
    assert_same(&all, &declared, "reopened");

    // `:db/index` switched on moves :v into AVE; off again, out of it.
    for flag in ["true", "false"] {
        let alter = format!("[{{:db/id :v :db/index {flag}}}]");
        for db in [&all, &declared] {
            db.transact(tx(&alter)).unwrap();
        }
        assert_same(&all, &declared, &format!(":db/index {flag}"));
        for db in [&all, &declared] {
            db.transact(tx(r#"[{:k 42 :v "v3"} {:k 5 :v "changed"}]"#))
                .unwrap();
        }
        assert_same(&all, &declared, &format!("written after :db/index {flag}"));
    }
    // The moves were logged whole (they are no log entry's derivation): reopened, the same.
    drop(declared);
    let declared = open(d.path(), ValueIndex::Declared);
    assert_same(&all, &declared, "reopened after the moves");
}

#[test]
fn a_change_of_ave_entries_goes_in_a_transaction_without_the_attributes_datoms() {
    let d = tempfile::tempdir().unwrap();
    let db = open(d.path(), ValueIndex::Declared);
    db.transact(tx(SCHEMA)).unwrap();
    db.transact(tx(r#"[{:k 1 :v "a"}]"#)).unwrap();
    let err = db
        .transact(tx(r#"[{:db/id :v :db/index true} {:k 2 :v "b"}]"#))
        .unwrap_err();
    assert!(err.to_string().contains(":v"), "{err}");
    assert_eq!(
        err.category(),
        datalith::TxError::SchemaChange {
            attr: String::new(),
            reason: String::new()
        }
        .category()
    );
    // Nothing of it was written.
    let snap = db.db().unwrap();
    assert_eq!(
        snap.q(r#"[:find ?v :where [_ :v ?v]]"#, &[])
            .unwrap()
            .to_string(),
        r#"#{["a"]}"#
    );
    assert!(snap.check().unwrap().is_ok());
}

#[test]
fn a_bulk_load_lists_the_undeclared_attributes() {
    let (a, d) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = open(a.path(), ValueIndex::All);
    let declared = open(d.path(), ValueIndex::Declared);
    let k = datalith::Keyword::new(None, "k");
    let v = datalith::Keyword::new(None, "v");
    let tags = datalith::Keyword::new(None, "tags");
    let mut datoms = vec![];
    for i in 0..500u64 {
        let e = (1 << 20) + i;
        datoms.push((e, k.clone(), datalith::Value::Long(i as i64)));
        datoms.push((
            e,
            v.clone(),
            datalith::Value::string(&format!("v{}", i % 13)),
        ));
        datoms.push((
            e,
            tags.clone(),
            datalith::Value::Keyword(datalith::Keyword::new(None, &format!("t{}", i % 3))),
        ));
    }
    for db in [&all, &declared] {
        db.transact(tx(SCHEMA)).unwrap();
        db.fill_db(&datoms).unwrap();
    }
    assert_same(&all, &declared, "after a bulk load");
}

/// A join that looks up many values of an attribute without AVE entries reads the attribute
/// once per step (`ValueCursor`), not once per value: the same answers as with AVE, in a
/// test that would take minutes if each of its 4,000 lookups walked the attribute.
#[test]
fn many_lookups_of_an_undeclared_attribute_read_it_once() {
    let (a, d) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = open(a.path(), ValueIndex::All);
    let declared = open(d.path(), ValueIndex::Declared);
    let mut data = String::from("[");
    for i in 0..8_000 {
        data.push_str(&format!(r#"{{:k {i} :v "v{}"}}"#, i % 4_000));
    }
    data.push(']');
    for db in [&all, &declared] {
        db.transact(tx(SCHEMA)).unwrap();
        db.transact(tx(&data)).unwrap();
    }
    for q in [
        r#"[:find (count ?b) . :where [?a :k ?k] [(< ?k 4000)] [?a :v ?x] [?b :v ?x]]"#,
        r#"[:find ?x :in $ [?x ...] :where [?e :v ?x] [?e :k 3999]]"#,
    ] {
        let inputs = [read_one(r#"["v1" "v3999" "none"]"#).unwrap()];
        let inputs: &[Edn] = if q.contains(":in") { &inputs } else { &[] };
        let want = all.db().unwrap().q(q, inputs).unwrap();
        assert_eq!(declared.db().unwrap().q(q, inputs).unwrap(), want, "{q}");
    }
}

/// Damage to `attr_entities` or to the layout is found by `check`, each kind named.
#[test]
fn check_finds_each_kind_of_damage_to_the_layout() {
    use datalith::kv::{KvOp, TableKind};
    // (what is done to the tables, words of the problem `check` reports)
    type Damage = fn(&Database, u32, u32, u64) -> Vec<KvOp>;
    fn listed(db: &Database) -> datalith::kv::Table {
        db.env().table("attr_entities", TableKind::List).unwrap()
    }
    let cases: [(&str, Damage, &str); 4] = [
        (
            "an entity taken out of :v's list",
            |db, v, _, e| {
                vec![KvOp::list_remove(
                    &listed(db),
                    v.to_be_bytes(),
                    e.to_be_bytes(),
                )]
            },
            "but is not listed",
        ),
        (
            "the whole list of :v gone",
            |db, v, _, _| vec![KvOp::delete(&listed(db), v.to_be_bytes())],
            "is not listed, but its schema keeps them out of AVE",
        ),
        (
            "an AVE entry of :v",
            |db, v, _, e| {
                let ave = db.env().table("ave", TableKind::List).unwrap();
                let mut key = v.to_be_bytes().to_vec();
                datalith::codec::encode::encode(&datalith::Value::string("v1"), &mut key);
                vec![KvOp::list_add(&ave, key, e.to_be_bytes().to_vec())]
            },
            "has datoms in AVE and is listed too",
        ),
        (
            "the declared :n listed",
            |db, _, n, e| {
                vec![KvOp::list_add(
                    &listed(db),
                    n.to_be_bytes(),
                    e.to_be_bytes(),
                )]
            },
            "is listed, but its schema gives its datoms AVE entries",
        ),
    ];
    for (what, damage, words) in cases {
        let d = tempfile::tempdir().unwrap();
        let db = open(d.path(), ValueIndex::Declared);
        db.transact(tx(SCHEMA)).unwrap();
        db.transact(tx(r#"[{:k 1 :v "v1" :n 1} {:k 2 :v "v2" :n 2}]"#))
            .unwrap();
        let snap = db.db().unwrap();
        assert!(snap.check().unwrap().is_ok(), "{what}: before");
        let id = |a: &str| snap.attr(&datalith::Keyword::parse(a)).unwrap().id;
        let (v, n) = (id(":v"), id(":n"));
        let datalith::Edn::Long(e) = snap.q("[:find ?e . :where [?e :k 1]]", &[]).unwrap() else {
            panic!("no entity")
        };
        drop(snap);
        db.env().apply_logged().unwrap();
        db.env().transact_kv(damage(&db, v, n, e as u64)).unwrap();
        let problems = db.db().unwrap().check().unwrap().problems;
        assert!(
            problems.iter().any(|p| p.to_string().contains(words)),
            "{what}: {problems:?}"
        );
    }
}

/// `explain` names `AEV` for a step that read an attribute without AVE entries, `AVE` and
/// `AVE SCAN` for the declared ones.
#[test]
fn explain_names_the_reads_of_an_undeclared_attribute_aev() {
    use datalith::query::PlanIndex;
    let d = tempfile::tempdir().unwrap();
    let db = open(d.path(), ValueIndex::Declared);
    db.transact(tx(SCHEMA)).unwrap();
    db.transact(tx(r#"[{:k 1 :v "v1" :n 1} {:k 2 :v "v2" :n 2}]"#))
        .unwrap();
    let snap = db.db().unwrap();
    // (query, the index of its first step)
    let cases = [
        (r#"[:find ?e :where [?e :v "v1"]]"#, PlanIndex::Aev),
        (r#"[:find ?e ?x :where [?e :v ?x]]"#, PlanIndex::Aev),
        (r#"[:find ?e :where [?e :n 1]]"#, PlanIndex::Ave),
        (r#"[:find ?e ?x :where [?e :n ?x]]"#, PlanIndex::AttrScan),
    ];
    for (q, want) in cases {
        let (_, plan) = snap.explain(q, &[]).unwrap();
        assert_eq!(plan.steps[0].index, want, "{q}: {:?}", plan.steps);
    }
}

/// A read of an undeclared attribute by value holds the attribute's datoms (sorted, or as a
/// map of holders) for its step: the query's memory limit counts them, so a limit that the
/// same query keeps with every value in AVE stops it here, and a larger one answers as AVE
/// does. 20,000 datoms of `:v` are charged at least 20,000 x 56 bytes (over 1 MiB).
#[test]
fn a_read_by_value_of_an_undeclared_attribute_counts_against_the_memory_limit() {
    use datalith::query::QueryOptions;
    use datalith::QueryError;
    let (a, d) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = open(a.path(), ValueIndex::All);
    let declared = open(d.path(), ValueIndex::Declared);
    let mut data = String::from("[");
    for i in 0..20_000 {
        data.push_str(&format!(r#"{{:k {i} :v "v{i:05}"}}"#));
    }
    data.push(']');
    for db in [&all, &declared] {
        db.transact(tx(SCHEMA)).unwrap();
        db.transact(tx(&data)).unwrap();
    }
    let lookups = vec![read_one(r#"["v00007" "v12345"]"#).unwrap()];
    let cases: [(&str, &str, Vec<Edn>); 3] = [
        (
            "a range (the attribute sorted by value)",
            r#"[:find (count ?e) . :where [?e :v ?x] [(> ?x "v19990")]]"#,
            vec![],
        ),
        (
            "lookups of bound values (a map of holders)",
            r#"[:find ?k :in $ [?x ...] :where [?e :v ?x] [?e :k ?k]]"#,
            lookups,
        ),
        (
            "a join on a value (the holders of another entity's value)",
            r#"[:find (count ?f) . :where [?e :k 5] [?e :v ?x] [?f :v ?x]]"#,
            vec![],
        ),
    ];
    let small = QueryOptions::default().memory_limit(512 * 1024);
    let large = QueryOptions::default().memory_limit(64 * 1024 * 1024);
    for (name, query, args) in &cases {
        let want = all.db().unwrap().q_with(query, args, &small);
        assert!(want.is_ok(), "{name}: every value in AVE: {want:?}");
        let stopped = declared.db().unwrap().q_with(query, args, &small);
        assert!(
            matches!(stopped, Err(QueryError::ResourceExhausted { .. })),
            "{name}: {stopped:?}"
        );
        let got = declared.db().unwrap().q_with(query, args, &large);
        assert_eq!(
            got.map(|o| normalize(&o.result)).ok(),
            want.map(|o| normalize(&o.result)).ok(),
            "{name}"
        );
    }
}

/// The planner's distinct values of an attribute without AVE entries come from its sketch
/// (`store::sketch`), whichever way its values arrived: transactions, a bulk load, or a
/// `:db/index` switched off (its values moved out of AVE). Each row: how the values arrive,
/// the datoms, the distinct values; the estimate must be within three standard errors (39%)
/// and `check` clean.
#[test]
fn an_undeclared_attributes_distinct_values_are_estimated_from_its_sketch() {
    #[derive(Clone, Copy, Debug)]
    enum Via {
        Transactions,
        BulkLoad,
        IndexDropped,
    }
    let cases: &[(Via, u64, u64)] = &[
        (Via::Transactions, 1, 1),
        (Via::Transactions, 600, 4),
        (Via::Transactions, 600, 60),
        (Via::Transactions, 3_000, 3_000),
        (Via::BulkLoad, 3_000, 7),
        (Via::BulkLoad, 3_000, 1_500),
        (Via::IndexDropped, 2_000, 5),
        (Via::IndexDropped, 2_000, 2_000),
    ];
    for &(via, datoms, distinct) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), ValueIndex::Declared);
        db.transact(tx(SCHEMA)).unwrap();
        let value = |i: u64| format!("w{}", i % distinct);
        match via {
            Via::Transactions | Via::IndexDropped => {
                let attr = if matches!(via, Via::IndexDropped) {
                    ":n"
                } else {
                    ":v"
                };
                for chunk in (0..datoms).collect::<Vec<_>>().chunks(500) {
                    let mut data = String::from("[");
                    for i in chunk {
                        let v = if attr == ":n" {
                            (i % distinct).to_string()
                        } else {
                            format!("{:?}", value(*i))
                        };
                        data.push_str(&format!("{{:k {i} {attr} {v}}}"));
                    }
                    data.push(']');
                    db.transact(tx(&data)).unwrap();
                }
                if matches!(via, Via::IndexDropped) {
                    db.transact(tx("[{:db/id :n :db/index false}]")).unwrap();
                }
            }
            Via::BulkLoad => {
                let (k, v) = (
                    datalith::Keyword::new(None, "k"),
                    datalith::Keyword::new(None, "v"),
                );
                let mut rows = vec![];
                for i in 0..datoms {
                    let e = (1 << 20) + i;
                    rows.push((e, k.clone(), datalith::Value::Long(i as i64)));
                    rows.push((e, v.clone(), datalith::Value::string(&value(i))));
                }
                db.fill_db(&rows).unwrap();
            }
        }
        let snap = db.db().unwrap();
        let name = if matches!(via, Via::IndexDropped) {
            "n"
        } else {
            "v"
        };
        let a = snap
            .schema()
            .by_ident(&datalith::Keyword::new(None, name))
            .unwrap()
            .id;
        let r = snap.reader();
        assert!(r.is_listed(a).unwrap(), "{via:?}");
        let s = r.stats(a).unwrap();
        assert_eq!(s.datoms, datoms, "{via:?}");
        let err = (s.distinct as f64 - distinct as f64).abs() / distinct as f64;
        assert!(
            err <= 0.39,
            "{via:?} {datoms} datoms of {distinct} values: estimated {}",
            s.distinct
        );
        let report = snap.check().unwrap();
        assert!(report.problems.is_empty(), "{via:?}: {:?}", report.problems);
    }
}
