//! A Datalog group's log record holds its transaction log entries alone; replay rebuilds the
//! EAV and AVE writes from them (`kv::wal::derive`, `tx::index_rebuild`). Every shape of
//! transaction (retractions, cardinality many, refs and components, long values stored as
//! giants, upserts, `:db/cas`, `:db/retractEntity`, several transactions in one group) must be
//! logged that way and replay to exactly the indexes the live database has.

use std::path::Path;
use std::time::Duration;

use datalith::error::UNSUPPORTED_FORMAT;
use datalith::kv::{EnvOptions, Environment, KvError};
use datalith::raw::{Components, Index};
use datalith::{Database, DbOptions, ValueIndex};

fn options() -> DbOptions {
    let mut o = DbOptions::default();
    // Nothing checkpointed after the open, nothing written into LMDB by the applier: the
    // reopened copy rebuilds every transaction below from the log.
    o.env.log_checkpoint_interval = Duration::from_secs(3600);
    o.env.log_checkpoint_bytes = u64::MAX;
    o.env.log_checkpoint_freed_bytes = u64::MAX;
    o.env.log_apply_delay = Duration::from_secs(3600);
    o
}

fn long_text(seed: char) -> String {
    std::iter::repeat_n(seed, 700).collect()
}

/// Transactions of every shape, in order (those in one inner list are submitted together, so
/// they share commit groups).
fn transactions() -> Vec<Vec<String>> {
    let (bio_a, bio_b) = (long_text('a'), long_text('b'));
    let one = |s: &str| vec![s.to_string()];
    vec![
        one(
            r#"[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
               {:db/ident :person/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
               {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
               {:db/ident :person/address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
               {:db/ident :person/bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
               {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
               {:db/ident :address/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#,
        ),
        one(&format!(
            r#"[{{:db/id "ann" :person/name "Ann" :person/tag ["x" "y" "z"] :person/age 30
                 :person/bio "{bio_a}" :person/address {{:address/city "Oslo"}}}}
               {{:db/id "bob" :person/name "Bob" :person/age 40 :person/friend ["ann"] :person/bio "{bio_a}"}}]"#
        )),
        (0..12)
            .map(|i| format!(r#"[{{:person/name "p{i}" :person/age {i} :person/tag ["t{i}" "u"]}}]"#))
            .collect(),
        one(r#"[{:person/name "Ann" :person/age 31}]"#),
        one(r#"[[:db/add [:person/name "Ann"] :person/age 32] [:db/retract [:person/name "Ann"] :person/tag "x"]]"#),
        one(&format!(r#"[[:db/add [:person/name "Ann"] :person/bio "{bio_b}"]]"#)),
        one(r#"[[:db/cas [:person/name "Bob"] :person/age 40 41]]"#),
        // With AVE for declared attributes alone, this moves `:person/tag`'s datoms into AVE
        // (a group the derivation does not make: logged whole), and back out after.
        one(r#"[{:db/id :person/tag :db/index true}]"#),
        one(r#"[[:db/add [:person/name "Ann"] :person/tag "w"]]"#),
        one(r#"[{:db/id :person/tag :db/index false}]"#),
        vec![
            r#"[[:db/retractEntity [:person/name "Bob"]]]"#.to_string(),
            r#"[[:db/retractEntity [:person/name "p3"]] {:person/name "p4" :person/friend [[:person/name "p5"]]}]"#.to_string(),
            r#"[[:db/retract [:person/name "Ann"] :person/address]]"#.to_string(),
        ],
    ]
}

fn index_contents(db: &Database) -> (Vec<String>, Vec<String>, Vec<String>) {
    let snapshot = db.db().unwrap();
    // The history index, every event with its transaction and `added`.
    let history: Vec<String> = snapshot
        .history()
        .datoms(Index::Eav, &Components::default())
        .unwrap()
        .into_iter()
        .map(|d| format!("{} {} {} {} {}", d.e, d.a, d.v, d.tx, d.added))
        .collect();
    let walk = |index, c: &Components| {
        snapshot
            .datoms(index, c)
            .unwrap()
            .into_iter()
            .map(|d| (d.a, format!("{} {} {}", d.e, d.a, d.v)))
            .collect::<Vec<_>>()
    };
    let eav = walk(Index::Eav, &Components::default());
    let mut attrs: Vec<_> = eav.iter().map(|(a, _)| *a).collect();
    attrs.sort_unstable();
    attrs.dedup();
    // AVE is walked an attribute at a time.
    let ave = attrs.into_iter().flat_map(|a| {
        let c = Components {
            a: Some(a),
            ..Components::default()
        };
        walk(Index::Ave, &c)
    });
    let text = |(_, t)| t;
    (
        eav.into_iter().map(text).collect(),
        ave.map(text).collect(),
        history,
    )
}

/// A copy of `live` as a kill leaves it: the data file as the page cache holds it and the log.
fn killed_copy(live: &Path, db: &Database) -> tempfile::TempDir {
    db.env().apply_logged().unwrap();
    let copy = tempfile::tempdir().unwrap();
    for name in ["data.mdb", datalith::kv::wal::LOG_FILE] {
        std::fs::copy(live.join(name), copy.path().join(name)).unwrap();
    }
    copy
}

#[test]
fn every_transaction_shape_is_logged_as_its_entry_and_replays_to_the_same_indexes() {
    replays_every_transaction_shape(ValueIndex::All);
}

/// The same with AVE entries for declared attributes alone: the others' entities are listed
/// in `attr_entities`, rebuilt from the entries' flags.
#[test]
fn every_transaction_shape_replays_with_ave_for_declared_attributes_alone() {
    replays_every_transaction_shape(ValueIndex::Declared);
}

fn replays_every_transaction_shape(value_index: ValueIndex) {
    let live = tempfile::tempdir().unwrap();
    let mut o = options();
    o.value_index = value_index;
    let db = Database::open(live.path(), o).unwrap();
    let before = db.env().commit_counters();
    for group in transactions() {
        let handles: Vec<_> = group
            .iter()
            .map(|t| db.transact_async(t.as_str()))
            .collect();
        for (h, t) in handles.into_iter().zip(&group) {
            h.wait().unwrap_or_else(|e| panic!("{t}: {e}"));
        }
    }
    let after = db.env().commit_counters();
    let records = after.log_records - before.log_records;
    assert!(records >= 8, "{records} records");
    // Each move of an attribute in or out of AVE is logged whole.
    let moves = match value_index {
        ValueIndex::Declared => 2,
        _ => 0,
    };
    assert_eq!(
        after.log_records_derived - before.log_records_derived,
        records - moves,
        "every other group's record leaves its index writes out"
    );
    let expected = index_contents(&db);
    assert!(expected.0.len() > 60 && expected.0.len() == expected.1.len());
    assert!(
        expected.2.len() >= expected.0.len(),
        "history holds every datom's assertion"
    );
    let copy = killed_copy(live.path(), &db);
    drop(db);

    // Opened as a plain KV environment, the records cannot be replayed: a typed error, and the
    // directory stays as it was for the store to recover.
    let plain = Environment::open(copy.path(), EnvOptions::default());
    match plain {
        Err(e @ KvError::NeedsDerivation { .. }) => {
            assert_eq!(e.category(), UNSUPPORTED_FORMAT, "{e}")
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("a KV environment replayed records it cannot rebuild"),
    }

    let reopened = Database::open(copy.path(), DbOptions::default()).unwrap();
    assert_eq!(index_contents(&reopened), expected);
    let check = reopened.db().unwrap().check().unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
}

/// Transactions whose index writes the derivation cannot make (a `:db/noHistory` retraction
/// removes its assertion's event, found by a lookup), submitted together with ordinary ones
/// so that they may share a group: such a group is logged whole, every other one derived, and
/// all replay to the same indexes.
#[test]
fn a_group_the_derivation_cannot_rebuild_is_logged_whole_and_replays_the_same() {
    let live = tempfile::tempdir().unwrap();
    let db = Database::open(live.path(), options()).unwrap();
    db.transact(
        r#"[{:db/ident :item/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :item/seen :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/noHistory true}
            {:db/ident :item/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}]"#,
    )
    .unwrap();
    db.transact(
        r#"[{:item/name "a" :item/seen 1 :item/tag ["x" "y"]} {:item/name "b" :item/seen 2}]"#,
    )
    .unwrap();
    let before = db.env().commit_counters();
    let rounds: Vec<Vec<String>> = (0..6)
        .map(|i| {
            vec![
                // Replaces `:item/seen`: retracts the old value, whose event goes.
                format!(r#"[[:db/add [:item/name "a"] :item/seen {}]]"#, 10 + i),
                format!(r#"[{{:item/name "n{i}" :item/tag ["t{i}"]}}]"#),
                format!(r#"[[:db/retract [:item/name "a"] :item/tag "x"] [:db/add [:item/name "a"] :item/tag "z{i}"]]"#),
            ]
        })
        .collect();
    for group in &rounds {
        let handles: Vec<_> = group
            .iter()
            .map(|t| db.transact_async(t.as_str()))
            .collect();
        for (h, t) in handles.into_iter().zip(group) {
            h.wait().unwrap_or_else(|e| panic!("{t}: {e}"));
        }
    }
    // And ordinary transactions alone, each a group of its own.
    for i in 0..2 {
        db.transact(format!(r#"[{{:item/name "m{i}"}}]"#).as_str())
            .unwrap();
    }
    let after = db.env().commit_counters();
    let records = after.log_records - before.log_records;
    let derived = after.log_records_derived - before.log_records_derived;
    // Each round's `:item/seen` change is in one group, alone or with others of its round:
    // that group is logged whole; every other group derived.
    assert_eq!(records - derived, 6, "{records} records, {derived} derived");
    assert!(derived >= 2, "{records} records, {derived} derived");
    let expected = index_contents(&db);
    let copy = killed_copy(live.path(), &db);
    drop(db);
    let reopened = Database::open(copy.path(), DbOptions::default()).unwrap();
    assert_eq!(index_contents(&reopened), expected);
    let check = reopened.db().unwrap().check().unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
}
