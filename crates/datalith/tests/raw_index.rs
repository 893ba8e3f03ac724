//! Raw index access (seed 001) as tables: `datoms` on every index name, `seek_datoms`,
//! `rseek_datoms`, `index_range` and `count_datoms`, each against the datoms it must return.

use datalith::codec::Value;
use datalith::edn::read_one;
use datalith::kv::{Direction, Durability};
use datalith::raw::{Components, Index};
use datalith::{Database, DbOptions};

/// Five people with an age each (two share 30) and a name.
fn people() -> (tempfile::TempDir, Database, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    let tx = |s: &str| datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap();
    db.transact(tx("[{:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
                     {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"))
        .unwrap();
    let r = db
        .transact(tx(
            r#"[{:db/id "a" :name "Ann" :age 30} {:db/id "b" :name "Bob" :age 25}
                        {:db/id "c" :name "Cid" :age 30} {:db/id "d" :name "Dan" :age 41}
                        {:db/id "e" :name "Eve" :age 19}]"#,
        ))
        .unwrap();
    let ids = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|t| r.tempid(t).unwrap())
        .collect();
    (dir, db, ids)
}

/// (entity index into the people, age) of each datom, in the order returned.
fn ages(ids: &[u64], datoms: &[datalith::store::Datom]) -> Vec<(usize, i64)> {
    datoms
        .iter()
        .map(|d| {
            let who = ids.iter().position(|e| *e == d.e).expect("a person");
            match d.v {
                Value::Long(n) => (who, n),
                ref other => panic!("not an age: {other:?}"),
            }
        })
        .collect()
}

#[test]
fn seeks_and_ranges_return_the_datoms_in_index_order() {
    let (_dir, db, ids) = people();
    let snap = db.db().unwrap();
    let age = snap
        .attr(&datalith::codec::Keyword::parse(":age"))
        .unwrap()
        .id;
    let (a, b, c, d, e) = (0, 1, 2, 3, 4);
    let v = Value::Long;
    // (what, datoms returned, expected (person, age) in order)
    let cases: Vec<(&str, Vec<datalith::store::Datom>, Vec<(usize, i64)>)> = vec![
        (
            "seek from 25",
            snap.seek_datoms(age, Some(&v(25)), Direction::Forward, 10)
                .unwrap(),
            vec![(b, 25), (a, 30), (c, 30), (d, 41)],
        ),
        (
            "seek from the start, 2",
            snap.seek_datoms(age, None, Direction::Forward, 2).unwrap(),
            vec![(e, 19), (b, 25)],
        ),
        (
            "rseek from 30",
            snap.rseek_datoms(age, Some(&v(30)), 10).unwrap(),
            vec![(c, 30), (a, 30), (b, 25), (e, 19)],
        ),
        (
            "rseek from the end, 1",
            snap.rseek_datoms(age, None, 1).unwrap(),
            vec![(d, 41)],
        ),
        (
            "rseek from 18: nothing below",
            snap.rseek_datoms(age, Some(&v(18)), 10).unwrap(),
            vec![],
        ),
        (
            "index_range [25, 41)",
            snap.index_range(age, Some(&v(25)), Some(&v(41))).unwrap(),
            vec![(b, 25), (a, 30), (c, 30)],
        ),
        (
            "index_range open start",
            snap.index_range(age, None, Some(&v(25))).unwrap(),
            vec![(e, 19)],
        ),
        (
            "datoms :avet age 30",
            snap.datoms(
                Index::parse(":avet").unwrap(),
                &Components {
                    a: Some(age),
                    v: Some(v(30)),
                    ..Components::default()
                },
            )
            .unwrap(),
            vec![(a, 30), (c, 30)],
        ),
        (
            "datoms :aevt age (entity order)",
            snap.datoms(
                Index::parse(":aevt").unwrap(),
                &Components {
                    a: Some(age),
                    ..Components::default()
                },
            )
            .unwrap(),
            vec![(a, 30), (b, 25), (c, 30), (d, 41), (e, 19)],
        ),
        (
            "datoms :eavt of one entity and attribute",
            snap.datoms(
                Index::parse("eavt").unwrap(),
                &Components {
                    e: Some(ids[d]),
                    a: Some(age),
                    ..Components::default()
                },
            )
            .unwrap(),
            vec![(d, 41)],
        ),
    ];
    for (what, got, want) in cases {
        assert_eq!(ages(&ids, &got), want, "{what}");
    }
    // Counts agree with the walks they stand for.
    let counts: [(Index, Components, u64); 3] = [
        (
            Index::Ave,
            Components {
                a: Some(age),
                v: Some(v(30)),
                ..Components::default()
            },
            2,
        ),
        (
            Index::Ave,
            Components {
                a: Some(age),
                ..Components::default()
            },
            5,
        ),
        (
            Index::Eav,
            Components {
                e: Some(ids[a]),
                ..Components::default()
            },
            2,
        ),
    ];
    for (index, c, want) in counts {
        assert_eq!(
            snap.count_datoms(index, &c).unwrap(),
            want,
            "{index:?} {c:?}"
        );
        assert_eq!(snap.datoms(index, &c).unwrap().len() as u64, want);
    }
    assert_eq!(
        Index::parse(":veat"),
        None,
        "unknown index names are refused"
    );
}

/// `:vaet`: the references to an entity, through every ref attribute or one, in value,
/// attribute, entity order; now and in time.
#[test]
fn vaet_lists_the_references_to_an_entity() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    let tx = |s: &str| datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap();
    db.transact(tx("[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                     {:db/ident :boss :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
                     {:db/ident :likes :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
                     {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"))
        .unwrap();
    let r = db
        .transact(tx(r#"[{:db/id "a" :name "Ann" :age 40}
                         {:db/id "b" :name "Bob" :boss "a" :likes ["a" "c"]}
                         {:db/id "c" :name "Cid" :boss "a"}]"#))
        .unwrap();
    let id = |t: &str| r.tempid(t).unwrap();
    let (a, b, c) = (id("a"), id("b"), id("c"));
    let snap = db.db().unwrap();
    let attr = |k: &str| snap.attr(&datalith::codec::Keyword::parse(k)).unwrap().id;
    let (boss, likes) = (attr("boss"), attr("likes"));
    let rows = |c: Components| -> Vec<(u64, u32, u64)> {
        snap.datoms(Index::Vae, &c)
            .unwrap()
            .iter()
            .map(|d| match d.v {
                Value::Ref(v) => (v, d.a, d.e),
                ref other => panic!("not a reference: {other:?}"),
            })
            .collect()
    };
    let to = |v: u64| Components {
        v: Some(Value::Ref(v)),
        ..Default::default()
    };
    assert_eq!(rows(to(a)), vec![(a, boss, b), (a, boss, c), (a, likes, b)]);
    assert_eq!(
        rows(Components {
            a: Some(likes),
            ..to(a)
        }),
        vec![(a, likes, b)]
    );
    assert_eq!(rows(to(c)), vec![(c, likes, b)]);
    assert_eq!(rows(to(b)), vec![]);
    assert_eq!(Index::parse(":vaet"), Some(Index::Vae));
    // In time: Bob stops liking Cid; before that, the reference is there.
    let before = db.db().unwrap().basis_t().unwrap();
    db.transact(tx(r#"[[:db/retract [:name "Bob"] :likes [:name "Cid"]]]"#))
        .unwrap();
    let now = db.db().unwrap();
    assert!(now.datoms(Index::Vae, &to(c)).unwrap().is_empty());
    let then = now.as_of(before).unwrap();
    assert_eq!(then.datoms(Index::Vae, &to(c)).unwrap().len(), 1);
    let events = now.history().datoms(Index::Vae, &to(c)).unwrap();
    assert_eq!(
        events.iter().map(|d| d.added).collect::<Vec<_>>(),
        vec![true, false]
    );
}
