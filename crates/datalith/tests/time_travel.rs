//! Time as data: the transaction and `added` positions of patterns, and database values in
//! time (`as_of`, `since`, `history`), checked as tables of query and expected answer on one
//! small history, and against a model (every state replayed from the transaction log).

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::{Database, Db, DbOptions, TxData};

fn transact(db: &Database, edn: &str) -> u64 {
    db.transact(TxData::from_edn(&read_one(edn).unwrap()).unwrap())
        .unwrap()
        .tx
}

fn q(db: &Db, query: &str) -> String {
    match db.q(query, &[]) {
        Ok(v) => to_edn_string(&v),
        Err(e) => format!("error: {e}"),
    }
}

/// A history of four transactions after the schema: t1 adds Ann (30) and Bob (40), t2 makes
/// Ann 31 and gives her a nick, t3 retracts Bob, t4 adds a second nick and retracts the first.
struct History {
    db: Database,
    _dir: tempfile::TempDir,
    t: [u64; 5],
}

fn history() -> History {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let t0 = transact(
        &db,
        r#"[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
            {:db/ident :p/nick :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
            {:db/ident :tx/note :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#,
    );
    let t1 = transact(
        &db,
        r#"[{:p/name "Ann" :p/age 30} {:p/name "Bob" :p/age 40}
            [:db/add "datomic.tx" :tx/note "first"]
            [:db/add "datomic.tx" :db/txInstant #inst "2030-01-01T00:00:00.000-00:00"]]"#,
    );
    let t2 = transact(
        &db,
        r#"[{:p/name "Ann" :p/age 31 :p/nick "annie"}
            [:db/add "datomic.tx" :db/txInstant #inst "2030-02-01T00:00:00.000-00:00"]]"#,
    );
    let t3 = transact(
        &db,
        r#"[[:db/retractEntity [:p/name "Bob"]]
            [:db/add "datomic.tx" :db/txInstant #inst "2030-03-01T00:00:00.000-00:00"]]"#,
    );
    let t4 = transact(
        &db,
        r#"[[:db/add [:p/name "Ann"] :p/nick "nan"] [:db/retract [:p/name "Ann"] :p/nick "annie"]
            [:db/add "datomic.tx" :db/txInstant #inst "2030-04-01T00:00:00.000-00:00"]]"#,
    );
    History {
        db,
        _dir: dir,
        t: [t0, t1, t2, t3, t4],
    }
}

#[test]
fn patterns_name_the_transaction_and_added_on_every_kind_of_value() {
    let h = history();
    let now = h.db.db().unwrap();
    let t = h.t;
    let by_tx = format!("[:find ?n :where [?p :p/nick ?n {}]]", t[4]);
    // (database, query, expected EDN)
    let cases: Vec<(&str, Db, &str, String)> = vec![
        (
            "now: who has an age, since which transaction's instant",
            now.clone(),
            r#"[:find ?n ?a ?when :where [?p :p/name ?n] [?p :p/age ?a ?tx] [?tx :db/txInstant ?when]]"#,
            r#"#{["Ann" 31 #inst "2030-02-01T00:00:00.000-00:00"]}"#.into(),
        ),
        (
            "now: the fifth position on the current value is true",
            now.clone(),
            r#"[:find ?a ?added :where [?p :p/age ?a _ ?added]]"#,
            r#"#{[31 true]}"#.into(),
        ),
        (
            "now: transaction metadata",
            now.clone(),
            r#"[:find ?n :where [?p :p/name "Ann" ?tx] [?tx :tx/note ?n]]"#,
            r#"#{["first"]}"#.into(),
        ),
        (
            "as-of t1: the first state",
            now.as_of(t[1]).unwrap(),
            r#"[:find ?n ?a :where [?p :p/name ?n] [?p :p/age ?a]]"#,
            r#"#{["Ann" 30] ["Bob" 40]}"#.into(),
        ),
        (
            "as-of t2: Ann is 31 and has a nick, Bob still there",
            now.as_of(t[2]).unwrap(),
            r#"[:find ?n ?a :where [?p :p/name ?n] [?p :p/age ?a]]"#,
            r#"#{["Ann" 31] ["Bob" 40]}"#.into(),
        ),
        (
            "as-of t3: Bob is gone",
            now.as_of(t[3]).unwrap(),
            r#"[:find ?n :where [?p :p/name ?n]]"#,
            r#"#{["Ann"]}"#.into(),
        ),
        (
            "as-of t3: nicks of a cardinality-many attribute",
            now.as_of(t[3]).unwrap(),
            r#"[:find ?k :where [_ :p/nick ?k]]"#,
            r#"#{["annie"]}"#.into(),
        ),
        (
            "as-of t0: no people",
            now.as_of(t[0]).unwrap(),
            r#"[:find ?n :where [?p :p/name ?n]]"#,
            r#"#{}"#.into(),
        ),
        (
            "as-of an instant between t2 and t3",
            now.as_of(datalith::TimePoint::Instant(1_898_000_000_000)).unwrap(),
            r#"[:find ?n :where [?p :p/name ?n]]"#,
            r#"#{["Ann"] ["Bob"]}"#.into(),
        ),
        (
            "since t2: only what was asserted after t2 and is still there",
            now.since(t[2]).unwrap(),
            r#"[:find ?k :where [?p :p/nick ?k]]"#,
            r#"#{["nan"]}"#.into(),
        ),
        (
            "since t1: Ann's age of t2",
            now.since(t[1]).unwrap(),
            r#"[:find ?a :where [?p :p/age ?a]]"#,
            r#"#{[31]}"#.into(),
        ),
        (
            "history: every age event",
            now.history(),
            r#"[:find ?a ?added :where [_ :p/age ?a _ ?added]]"#,
            r#"#{[30 true] [30 false] [31 true] [40 true] [40 false]}"#.into(),
        ),
        (
            "history: Ann's nicks, with the transaction's order",
            now.history(),
            r#"[:find ?k ?added ?when :where [?p :p/name "Ann"] [?p :p/nick ?k ?tx ?added] [?tx :db/txInstant ?when]]"#,
            r#"#{["annie" true #inst "2030-02-01T00:00:00.000-00:00"] ["annie" false #inst "2030-04-01T00:00:00.000-00:00"] ["nan" true #inst "2030-04-01T00:00:00.000-00:00"]}"#.into(),
        ),
        (
            "history of an as-of value: only events up to it",
            now.as_of(t[2]).unwrap().history(),
            r#"[:find (count ?a) . :where [_ :p/age ?a _ false]]"#,
            "1".into(),
        ),
        (
            "a bound transaction selects its datoms",
            now.clone(),
            &by_tx,
            r#"#{["nan"]}"#.into(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, db, query, want) in cases {
        let got = q(&db, query);
        let (got_v, want_v) = (read_one(&got).ok(), read_one(&want).ok());
        if got_v.is_none() || got_v != want_v {
            failures.push(format!(
                "{name}\n  query: {query}\n  want:  {want}\n  got:   {got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn datoms_of_values_in_time_carry_their_transaction() {
    use datalith::raw::{Components, Index};
    let h = history();
    let now = h.db.db().unwrap();
    let t = h.t;
    let age = now
        .attr(&datalith::codec::Keyword::parse(":p/age"))
        .unwrap()
        .id;
    let walk = |db: &Db| -> Vec<(String, u64, bool)> {
        let c = Components {
            a: Some(age),
            ..Components::default()
        };
        db.datoms(Index::Ave, &c)
            .unwrap()
            .into_iter()
            .map(|d| (d.v.to_string(), d.tx, d.added))
            .collect()
    };
    let cases: Vec<(&str, Db, Vec<(&str, u64, bool)>)> = vec![
        (
            "as-of t1",
            now.as_of(t[1]).unwrap(),
            vec![("30", t[1], true), ("40", t[1], true)],
        ),
        (
            "as-of t3",
            now.as_of(t[3]).unwrap(),
            vec![("31", t[2], true)],
        ),
        (
            "since t1",
            now.since(t[1]).unwrap(),
            vec![("31", t[2], true)],
        ),
        (
            "history",
            now.history(),
            vec![
                ("30", t[1], true),
                ("30", t[2], false),
                ("31", t[2], true),
                ("40", t[1], true),
                ("40", t[3], false),
            ],
        ),
    ];
    for (name, db, want) in cases {
        let want: Vec<(String, u64, bool)> = want
            .into_iter()
            .map(|(v, t, a)| (v.to_string(), t, a))
            .collect();
        assert_eq!(walk(&db), want, "{name}");
    }
    // index_range on a value in time: the values in range as of then.
    let then = now.as_of(t[1]).unwrap();
    let got: Vec<String> = then
        .index_range(age, Some(&datalith::codec::Value::Long(35)), None)
        .unwrap()
        .into_iter()
        .map(|d| d.v.to_string())
        .collect();
    assert_eq!(got, vec!["40".to_string()]);
}

#[test]
fn pull_and_entity_read_the_state_of_their_value() {
    let h = history();
    let now = h.db.db().unwrap();
    let t = h.t;
    let pattern = "[:p/name :p/age :p/nick]";
    let Edn::Long(ann) = now
        .q("[:find ?e . :where [?e :p/name \"Ann\"]]", &[])
        .unwrap()
    else {
        panic!("Ann")
    };
    let cases: Vec<(&str, Db, &str)> = vec![
        (
            "now",
            now.clone(),
            r#"{:p/name "Ann" :p/age 31 :p/nick ["nan"]}"#,
        ),
        (
            "as-of t1",
            now.as_of(t[1]).unwrap(),
            r#"{:p/name "Ann" :p/age 30}"#,
        ),
        (
            "as-of t3",
            now.as_of(t[3]).unwrap(),
            r#"{:p/name "Ann" :p/age 31 :p/nick ["annie"]}"#,
        ),
        ("since t2", now.since(t[2]).unwrap(), r#"{:p/nick ["nan"]}"#),
    ];
    for (name, db, want) in cases {
        let got = to_edn_string(&db.pull(pattern, ann as u64).unwrap());
        assert_eq!(read_one(&got).unwrap(), read_one(want).unwrap(), "{name}");
    }
    // Bob, retracted in t3, as of t2.
    let then = now.as_of(t[2]).unwrap();
    let bob = now
        .as_of(t[2])
        .unwrap()
        .q("[:find ?e . :where [?e :p/name \"Bob\"]]", &[])
        .unwrap();
    let Edn::Long(bob) = bob else {
        panic!("Bob as of t2: {bob:?}")
    };
    let e = then.entity(bob as u64);
    assert!(matches!(
        e.get(":p/age").unwrap(),
        Some(datalith::api::EntityValue::One(
            datalith::codec::Value::Long(40)
        ))
    ));
    assert!(now.entity(bob as u64).get(":p/age").unwrap().is_none());
    // Refused on a history value, as Datomic refuses them.
    let hist = now.history();
    let err = hist.pull(pattern, bob as u64).unwrap_err();
    assert!(err.to_string().contains("history"), "{err}");
    assert!(hist.entity(bob as u64).get(":p/age").is_err());
}

#[test]
fn the_log_in_queries_and_several_times_in_one_query() {
    use datalith::Input;
    let h = history();
    let now = h.db.db().unwrap();
    let t = h.t;
    let run = |query: &str, inputs: Vec<Input>| -> Edn { datalith::q(query, &inputs).unwrap() };
    // tx-ids from t1 to t3 (exclusive): two transactions.
    let got = run(
        "[:find (count ?tx) . :in ?log ?a ?b :where [(tx-ids ?log ?a ?b) [?tx ...]]]",
        vec![
            Input::Log(now.clone()),
            Input::Value(Edn::Long(t[1] as i64)),
            Input::Value(Edn::Long(t[3] as i64)),
        ],
    );
    assert_eq!(got, Edn::Long(2));
    // `nil` as either bound leaves that end open (Datomic's reading): from t1 on, and up to
    // t3, against the bound left out.
    let count = |query: &str, from: u64| {
        run(
            query,
            vec![
                Input::Log(now.clone()),
                Input::Value(Edn::Long(from as i64)),
            ],
        )
    };
    // (with nil, the same query written without it, the bound given)
    let same = [
        (
            "[:find (count ?tx) . :in ?log ?a :where [(tx-ids ?log ?a nil) [?tx ...]]]",
            "[:find (count ?tx) . :in ?log ?a :where [(tx-ids ?log ?a) [?tx ...]]]",
            t[1],
        ),
        (
            "[:find (count ?tx) . :in ?log ?b :where [(tx-ids ?log nil ?b) [?tx ...]]]",
            "[:find (count ?tx) . :in ?log ?b :where [(tx-ids ?log 0 ?b) [?tx ...]]]",
            t[3],
        ),
    ];
    for (with_nil, without, bound) in same {
        let got = count(with_nil, bound);
        assert_eq!(got, count(without, bound), "{with_nil}");
        assert!(matches!(got, Edn::Long(n) if n >= 2), "{with_nil}: {got}");
    }
    // By instants: February and March 2030.
    let got = run(
        r#"[:find (count ?tx) . :in ?log :where [(tx-ids ?log #inst "2030-02-01" #inst "2030-03-15") [?tx ...]]]"#,
        vec![Input::Log(now.clone())],
    );
    assert_eq!(got, Edn::Long(2));
    // tx-data of t4: the nick added and the one retracted.
    let got = run(
        "[:find ?k ?op :in $ ?log ?tx :where [(tx-data ?log ?tx) [[?e ?a ?k _ ?op]]] [?a :db/ident :p/nick]]",
        vec![
            Input::Db(now.clone()),
            Input::Log(now.clone()),
            Input::Value(Edn::Long(t[4] as i64)),
        ],
    );
    assert_eq!(got, read_one(r#"#{["nan" true] ["annie" false]}"#).unwrap());
    // Two times in one query: who changed age between t1 and now.
    let got = run(
        "[:find ?n ?then ?now :in $now $then :where [$now ?p :p/age ?now] [$then ?p :p/age ?then] [$now ?p :p/name ?n] [(!= ?then ?now)]]",
        vec![Input::Db(now.clone()), Input::Db(now.as_of(t[1]).unwrap())],
    );
    assert_eq!(got, read_one(r#"#{["Ann" 30 31]}"#).unwrap());
    // A log is not a data source.
    let err = datalith::q(
        "[:find ?e :in $ :where [?e :p/name]]",
        &[Input::Log(now.clone())],
    )
    .unwrap_err();
    assert!(err.to_string().contains("log"), "{err}");
}

#[test]
fn no_history_attributes_keep_only_their_current_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(
        &db,
        r#"[{:db/ident :c/id :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :c/hits :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/noHistory true}
            {:db/ident :c/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#,
    );
    let t1 = transact(&db, r#"[{:c/id 1 :c/hits 1 :c/name "a"}]"#);
    transact(&db, r#"[{:c/id 1 :c/hits 2 :c/name "b"}]"#);
    let t3 = transact(&db, r#"[{:c/id 1 :c/hits 3}]"#);
    let now = db.db().unwrap();
    let cases: Vec<(&str, Db, &str, &str)> = vec![
        (
            "history of a noHistory attribute: the current value only",
            now.history(),
            "[:find ?h ?added :where [_ :c/hits ?h _ ?added]]",
            "#{[3 true]}",
        ),
        (
            "history of an ordinary attribute beside it: every event",
            now.history(),
            "[:find ?n ?added :where [_ :c/name ?n _ ?added]]",
            r#"#{["a" true] ["a" false] ["b" true]}"#,
        ),
        (
            "as-of t1: the past value is gone",
            now.as_of(t1).unwrap(),
            "[:find ?h :where [_ :c/hits ?h]]",
            "#{}",
        ),
        (
            "now: the current value with its transaction",
            now.clone(),
            "[:find ?h :in $ ?t :where [_ :c/hits ?h ?t]]",
            "#{[3]}",
        ),
    ];
    for (name, db, query, want) in cases {
        let mut inputs: Vec<datalith::Input> = vec![db.into()];
        if query.contains(":in") {
            inputs.push(Edn::Long(t3 as i64).into());
        }
        let got = to_edn_string(&datalith::q(query, &inputs).unwrap());
        assert_eq!(read_one(&got).unwrap(), read_one(want).unwrap(), "{name}");
    }
}

#[test]
fn time_points_are_kept_by_the_value() {
    let h = history();
    let now = h.db.db().unwrap();
    let t = h.t;
    let as_of = now.as_of(t[2]).unwrap();
    assert_eq!(as_of.as_of_t(), Some(t[2]));
    assert_eq!(as_of.since_t(), None);
    assert!(!as_of.is_history());
    assert_eq!(now.since(t[1]).unwrap().since_t(), Some(t[1]));
    assert!(now.history().is_history());
    // An earlier as-of of an as-of value wins; a later one does not widen it.
    assert_eq!(as_of.as_of(t[4]).unwrap().as_of_t(), Some(t[2]));
    assert_eq!(as_of.as_of(t[1]).unwrap().as_of_t(), Some(t[1]));
    let _: Edn = now.q("[:find ?e :where [?e :p/name]]", &[]).unwrap();
}

#[test]
fn a_database_made_before_history_gets_it_from_its_log_when_opened_for_writing() {
    use datalith::kv::{Direction, KvOp, TableKind};
    use std::ops::Bound;
    let h = history();
    let dir = h._dir.path().to_path_buf();
    let want = q(
        &h.db.db().unwrap().history(),
        "[:find ?v ?tx ?added :where [_ :p/age ?v ?tx ?added]]",
    );
    // Empty the history index, as a database made before it was kept has it.
    let env = h.db.env();
    let mut ops = Vec::new();
    for (name, kind) in [
        ("history", TableKind::List),
        ("history_attr", TableKind::List),
    ] {
        let table = env.table(name, kind).unwrap();
        let txn = env.read().unwrap();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for entry in txn
            .view()
            .range(
                &table,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )
            .unwrap()
        {
            let (k, _) = entry.unwrap();
            if keys.last().map(|x| x.as_slice()) != Some(k) {
                keys.push(k.to_vec());
            }
        }
        ops.extend(keys.into_iter().map(|k| KvOp::delete(&table, k)));
    }
    env.transact_kv(ops).unwrap();
    assert_ne!(
        q(
            &h.db.db().unwrap().history(),
            "[:find ?v ?tx ?added :where [_ :p/age ?v ?tx ?added]]"
        ),
        want
    );
    drop(h.db);
    let db = Database::open(&dir, DbOptions::default()).unwrap();
    let now = db.db().unwrap();
    assert_eq!(
        q(
            &now.history(),
            "[:find ?v ?tx ?added :where [_ :p/age ?v ?tx ?added]]"
        ),
        want
    );
    let report = now.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn excision_removes_facts_everywhere_and_check_stays_clean() {
    let h = history();
    let t = h.t;
    // Ann's nicks, excised: gone from now, history, as-of and the log; Ann stays.
    transact(
        &h.db,
        r#"[{:db/excise [:p/name "Ann"] :db.excise/attrs [:p/nick]}]"#,
    );
    let now = h.db.db().unwrap();
    let cases: Vec<(&str, Db, &str, &str)> = vec![
        (
            "now",
            now.clone(),
            "[:find ?k :where [_ :p/nick ?k]]",
            "#{}",
        ),
        (
            "history",
            now.history(),
            "[:find ?k :where [_ :p/nick ?k]]",
            "#{}",
        ),
        (
            "as-of t3",
            now.as_of(t[3]).unwrap(),
            "[:find ?k :where [_ :p/nick ?k]]",
            "#{}",
        ),
        (
            "the rest of Ann stays",
            now.clone(),
            "[:find ?a :where [?p :p/name \"Ann\"] [?p :p/age ?a]]",
            "#{[31]}",
        ),
        (
            "the record stays",
            now.clone(),
            "[:find (count ?x) . :where [?x :db/excise _]]",
            "1",
        ),
    ];
    for (name, db, query, want) in cases {
        assert_eq!(
            read_one(&q(&db, query)).unwrap(),
            read_one(want).unwrap(),
            "{name}"
        );
    }
    let logged: Vec<String> =
        h.db.tx_range(Some(t[2]), Some(t[3]))
            .unwrap()
            .flat_map(|e| e.unwrap().datoms)
            .map(|d| d.v.to_string())
            .collect();
    assert!(!logged.iter().any(|v| v.contains("annie")), "{logged:?}");
    let report = now.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    // Reopened (the group replays from the write-ahead log when LMDB lacks it), the same.
    let dir = h._dir.path().to_path_buf();
    drop(now);
    drop(h.db);
    let db = Database::open(&dir, DbOptions::default()).unwrap();
    let again = db.db().unwrap();
    assert_eq!(
        q(&again.history(), "[:find ?k :where [_ :p/nick ?k]]"),
        "#{}"
    );
    assert!(again.check().unwrap().is_ok());
}

/// Excisions that would take schema out (a built-in entity or attribute as the target, an
/// ident, an attribute's definition, a transaction's instant) are refused, and leave the
/// database as it was; what is allowed beside them leaves `check` clean. Found by mutating
/// the conformance suite's transactions: `{:db/excise :db/cardinality}` took every
/// attribute's cardinality out of the indexes but not out of the log's bootstrap.
#[test]
fn excisions_of_schema_are_refused_and_the_rest_keeps_check_clean() {
    let h = history();
    let tx = h.t[1];
    let cases: Vec<(String, Option<&str>)> = vec![
        (
            "[{:db/excise :db/cardinality}]".into(),
            Some(":db/cardinality"),
        ),
        (
            "[{:db/excise :db.type/tuple}]".into(),
            Some(":db.type/tuple"),
        ),
        ("[{:db/excise [:db/ident :db/doc]}]".into(), Some(":db/doc")),
        ("[{:db/excise 3}]".into(), Some(":db/cardinality")),
        (
            "[{:db/excise :p/age :db.excise/attrs [:db/valueType]}]".into(),
            Some(":db/valueType"),
        ),
        (
            "[{:db/excise :p/nick :db.excise/attrs [:db/ident]}]".into(),
            Some(":db/ident"),
        ),
        (format!("[{{:db/excise {tx}}}]"), Some(":db/txInstant")),
        (
            format!("[{{:db/excise {tx} :db.excise/attrs [:db/txInstant]}}]"),
            Some(":db/txInstant"),
        ),
        // Allowed: an attribute's own `:db/doc`, a transaction's own metadata, a user
        // attribute's values everywhere.
        ("[{:db/id :p/age :db/doc \"years\"}]".into(), None),
        (
            "[{:db/excise :p/age :db.excise/attrs [:db/doc]}]".into(),
            None,
        ),
        (
            format!("[{{:db/excise {tx} :db.excise/attrs [:tx/note]}}]"),
            None,
        ),
        ("[{:db/excise :p/nick}]".into(), None),
    ];
    for (text, refused) in cases {
        let data = datalith::TxData::from_edn(&read_one(&text).unwrap()).unwrap();
        match (h.db.transact(data), refused) {
            (Err(e), Some(named)) => {
                assert_eq!(
                    e.category().code,
                    ":datalith.error/invalid-excision",
                    "{text}"
                );
                assert!(e.to_string().contains(named), "{text}: {e}");
            }
            (Ok(_), None) => {}
            (got, _) => panic!("{text}: {:?}", got.map(|r| r.tx)),
        }
        let report = h.db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{text}: {:?}", report.problems);
    }
    // The schema is whole: every attribute keeps its definition.
    let now = h.db.db().unwrap();
    assert_eq!(
        q(&now, "[:find ?c . :where [:p/age :db/cardinality ?c]]"),
        q(&now, "[:find ?c . :where [:p/name :db/cardinality ?c]]"),
    );
    assert_eq!(q(&now, "[:find ?n :where [_ :p/nick ?n]]"), "#{}");
}
