//! Speculative databases and report database values, as tables: a `with` database must
//! answer exactly as the database after really transacting the same data, and a report's
//! `db_before`/`db_after` must be the exact states around its transaction.

#[path = "common/hold.rs"]
mod hold;
use datalith::codec::Keyword;
use datalith::edn::{read_one, Edn};
use datalith::raw::{Components, Index};
use datalith::store::Datom;
use datalith::tx::TxData;
use datalith::{Database, Db, DbOptions};
use hold::hold_committer;

fn tx(s: &str) -> TxData {
    datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap()
}

fn kw(s: &str) -> Keyword {
    let s = s.trim_start_matches(':');
    match s.split_once('/') {
        Some((ns, name)) => Keyword::new(Some(ns), name),
        None => Keyword::new(None, s),
    }
}

const SCHEMA: &str = r#"[
  {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :person/bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :person/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
  {:db/ident :person/address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one
   :db/isComponent true}
  {:db/ident :address/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :reg/course :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :reg/student :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :reg/course+student :db/valueType :db.type/tuple
   :db/tupleAttrs [:reg/course :reg/student] :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}]"#;

/// A string too long to index inline (kept in the `giants` table).
fn giant(tag: char) -> String {
    std::iter::repeat_n(tag, 1500).collect()
}

fn seed() -> String {
    format!(
        r#"[{{:db/id "a" :person/name "Alice" :person/email "a@x" :person/age 30
            :person/tags [:admin :dev] :person/bio "{}"
            :person/address {{:address/city "Paris"}}}}
           {{:db/id "b" :person/name "Bob" :person/email "b@x" :person/friend "a"
            :person/bio "{}"}}
           {{:db/id "r" :reg/course "math" :reg/student 7}}]"#,
        giant('g'),
        giant('g'),
    )
}

fn fresh(dir: &std::path::Path) -> Database {
    fresh_with(dir, DbOptions::default())
}

fn fresh_with(dir: &std::path::Path, options: DbOptions) -> Database {
    let db = Database::open(dir, options).unwrap();
    db.transact(tx(SCHEMA)).unwrap();
    db.transact(tx(&seed())).unwrap();
    db
}

/// Everything observable about a database value, minus `:db/txInstant` values (the clock).
#[derive(Debug, PartialEq)]
struct State {
    eav: Vec<Datom>,
    ave: Vec<Datom>,
    aev: Vec<Datom>,
    pulls: Vec<Edn>,
    answers: Vec<Edn>,
    idents: Vec<String>,
    count: u64,
}

const QUERIES: &[&str] = &[
    "[:find ?n ?e :where [?p :person/name ?n] [?p :person/email ?e]]",
    "[:find ?n ?a :where [?p :person/name ?n] [?p :person/age ?a]]",
    "[:find ?n ?t :where [?p :person/name ?n] [?p :person/tags ?t]]",
    "[:find ?n ?f :where [?p :person/friend ?q] [?p :person/name ?n] [?q :person/name ?f]]",
    "[:find ?c :where [_ :address/city ?c]]",
    "[:find (count ?b) . :where [_ :person/bio ?b]]",
    "[:find ?p :in $ ?b :where [?p :person/bio ?b]]",
    "[:find ?t :where [_ :reg/course+student ?t]]",
    "[:find ?i :where [?a :db/ident ?i] [?a :db/valueType _]]",
    "[:find ?n ?k :where [?p :person/name ?n] [?p :person/nick ?k]]",
    "[:find (max ?a) . :where [_ :person/age ?a]]",
];

fn state(db: &Db) -> State {
    let instant = db.attr(&kw(":db/txInstant")).unwrap().id;
    let mut attrs: Vec<u32> = db.schema().attributes().iter().map(|a| a.id).collect();
    attrs.sort();
    let all = |i| -> Vec<Datom> {
        let walks: Vec<Components> = if i == Index::Eav {
            vec![Components::default()]
        } else {
            attrs
                .iter()
                .map(|a| Components {
                    a: Some(*a),
                    ..Components::default()
                })
                .collect()
        };
        walks
            .iter()
            .flat_map(|c| db.datoms(i, c).unwrap())
            .filter(|d| d.a != instant)
            .collect()
    };
    let eav = all(Index::Eav);
    let mut entities: Vec<u64> = eav.iter().map(|d| d.e).collect();
    entities.dedup();
    let pulls = entities
        .iter()
        .map(|e| db.pull("[*]", *e).unwrap())
        .collect();
    let bio = Edn::String(giant('h'));
    let answers = QUERIES
        .iter()
        .map(|q| {
            let inputs = if q.contains(":in $ ?b") {
                vec![bio.clone()]
            } else {
                vec![]
            };
            // An attribute the state lacks is an error; the error text is the answer then.
            match db.q(q, &inputs) {
                // A set's order follows the plan, which follows the statistics.
                Ok(Edn::Set(mut rows)) => {
                    rows.sort_by_key(|r| format!("{r:?}"));
                    Edn::Set(rows)
                }
                Ok(r) => r,
                Err(e) => Edn::String(format!("error: {e}")),
            }
        })
        .collect();
    let mut idents: Vec<String> = db
        .schema()
        .attributes()
        .iter()
        .map(|a| format!("{} {:?} {}", a.ident, a.value_type, a.is_many()))
        .collect();
    idents.sort();
    State {
        count: db.count_datoms(Index::Eav, &Components::default()).unwrap(),
        eav,
        ave: all(Index::Ave),
        aev: all(Index::Aev),
        pulls,
        answers,
        idents,
    }
}

/// (case, tx data applied to the seeded database). `{a}` stands for Alice's id.
fn cases() -> Vec<(&'static str, String)> {
    vec![
        (
            "new entities with tempids and refs",
            r#"[{:db/id "c" :person/name "Carol" :person/email "c@x" :person/friend ["d"]}
                [:db/add "c" :person/friend [:person/email "a@x"]]
                {:db/id "d" :person/name "Dan" :person/age 4}]"#
                .into(),
        ),
        (
            "cardinality one replacement",
            r#"[[:db/add [:person/email "a@x"] :person/age 31]]"#.into(),
        ),
        (
            "upsert through a unique identity",
            r#"[{:person/email "a@x" :person/name "Alicia" :person/tags :ops}]"#.into(),
        ),
        (
            "retract one value of a many attribute",
            r#"[[:db/retract [:person/email "a@x"] :person/tags :admin]]"#.into(),
        ),
        (
            "retractEntity with its component and references to it",
            r#"[[:db/retractEntity [:person/email "a@x"]]]"#.into(),
        ),
        (
            "schema change: a new attribute and a cardinality change",
            r#"[{:db/ident :person/nick :db/valueType :db.type/string
                 :db/cardinality :db.cardinality/one}
                {:db/id :person/age :db/cardinality :db.cardinality/many}]"#
                .into(),
        ),
        (
            "giants: one holder of a shared long value moves to another long value",
            format!(
                r#"[[:db/add [:person/email "a@x"] :person/bio "{}"]]"#,
                giant('h')
            ),
        ),
        (
            "giants: the last holders of a long value let it go",
            r#"[[:db/retract [:person/email "a@x"] :person/bio]
                [:db/add [:person/email "b@x"] :person/bio "short"]]"#
                .replace(":person/bio]", &format!(":person/bio \"{}\"]", giant('g'))),
        ),
        (
            "composite tuple follows its components",
            r#"[[:db/add [:reg/course+student ["math" 7]] :reg/student 8]
                {:db/id "s" :reg/course "art" :reg/student 1}]"#
                .into(),
        ),
        ("nothing but the transaction entity", "[]".into()),
    ]
}

#[test]
fn with_databases_answer_as_the_real_transaction() {
    for (name, data) in cases() {
        let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let spec_base = fresh(da.path());
        let real = fresh(dbb.path());
        let base = spec_base.db().unwrap();
        let before = state(&base);
        let report = base
            .with(tx(&data))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let real_report = real.transact(tx(&data)).unwrap();
        assert_eq!(report.tx, real_report.tx, "{name}: tx id");
        assert_eq!(
            report
                .tempids()
                .collect::<std::collections::BTreeMap<_, _>>(),
            real_report
                .tempids()
                .collect::<std::collections::BTreeMap<_, _>>(),
            "{name}: tempids"
        );
        let after = report.db_after().unwrap();
        assert!(after.is_speculative());
        let got = state(&after);
        assert_eq!(got, state(&real.db().unwrap()), "{name}");
        if !name.starts_with("nothing") {
            assert_ne!(got, before, "{name}: the case changes something");
        }
        let check = after.check().unwrap();
        assert!(check.is_ok(), "{name}: {:?}", check.problems);
        // Snapshot isolation: neither the value it came from nor the database changed.
        assert_eq!(
            state(&report.db_before().unwrap()),
            before,
            "{name}: db_before"
        );
        assert_eq!(state(&base), before, "{name}: base value");
        assert_eq!(state(&spec_base.db().unwrap()), before, "{name}: database");
    }
}

#[test]
fn with_chains_and_sees_its_own_schema() {
    // (tx data, applied one after the other)
    let steps = [
        r#"[{:db/ident :person/nick :db/valueType :db.type/string
             :db/cardinality :db.cardinality/one}]"#
            .to_string(),
        r#"[{:db/id "n" :person/name "Nina" :person/nick "nin" :person/email "n@x"}
            [:db/add [:person/email "a@x"] :person/nick "ali"]]"#
            .to_string(),
        r#"[{:person/email "n@x" :person/age 9} [:db/retractEntity [:person/email "b@x"]]]"#
            .to_string(),
        format!(r#"[{{:db/id "g" :person/bio "{}"}}]"#, giant('q')),
    ];
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let spec_base = fresh(da.path());
    let real = fresh(dbb.path());
    let mut spec = spec_base.db().unwrap();
    for (i, step) in steps.iter().enumerate() {
        spec = spec
            .db_with(tx(step))
            .unwrap_or_else(|e| panic!("step {i}: {e}"));
        real.transact(tx(step)).unwrap();
        assert_eq!(state(&spec), state(&real.db().unwrap()), "after step {i}");
        assert!(spec.check().unwrap().is_ok(), "step {i}");
    }
    // The speculative schema was never published: the database still lacks the attribute.
    assert!(spec_base.db().unwrap().attr(&kw(":person/nick")).is_none());
    assert!(spec.attr(&kw(":person/nick")).is_some());
}

#[test]
fn a_with_database_outlives_its_base_and_ignores_later_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let spec = {
        let base = db.db().unwrap();
        base.db_with(tx(r#"[{:person/email "a@x" :person/age 99}]"#))
            .unwrap()
    };
    db.transact(tx(r#"[{:person/email "a@x" :person/age 50}]"#))
        .unwrap();
    let age = "[:find ?a . :where [?p :person/email \"a@x\"] [?p :person/age ?a]]";
    let cases = [(&spec, 99), (&db.db().unwrap(), 50)];
    for (d, want) in cases {
        assert_eq!(d.q(age, &[]).unwrap(), Edn::Long(want));
    }
    // A clone moved to another thread reads the same value.
    let moved = spec.clone();
    let got = std::thread::spawn(move || moved.q(age, &[]).unwrap())
        .join()
        .unwrap();
    assert_eq!(got, Edn::Long(99));
}

#[test]
fn with_reports_errors_like_transact() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let bad = [
        r#"[[:db/add "x" :no/such "v"]]"#,
        r#"[[:db/add "x" :person/age "not a number"]]"#,
        r#"[{:db/id "x" :reg/course "math" :reg/student 7}]"#,
    ];
    for data in bad {
        let spec = db.db().unwrap().with(tx(data));
        let real = db.transact(tx(data));
        assert_eq!(spec.is_err(), real.is_err(), "{data}: {spec:?} vs {real:?}");
    }
}

/// The requests of one shared group commit, in order: each may depend on the earlier ones
/// (upserts of entities they created, an attribute one of them defined), one fails alone.
fn batch_requests() -> Vec<String> {
    vec![
        r#"[{:db/id "e" :person/name "Eve" :person/email "e@x" :person/age 20}]"#.into(),
        r#"[{:person/email "e@x" :person/age 21 :person/friend [:person/email "a@x"]}]"#.into(),
        r#"[{:db/ident :person/nick :db/valueType :db.type/string
             :db/cardinality :db.cardinality/one}]"#
            .into(),
        r#"[[:db/add [:person/email "e@x"] :person/nick "evie"]]"#.into(),
        // Fails alone: Eve's email already names another entity than this new one.
        r#"[[:db/add "z" :person/email "e@x"] [:db/add "z" :person/email "z@x"]]"#.into(),
        format!(
            r#"[[:db/add [:person/email "e@x"] :person/bio "{}"]]"#,
            giant('h')
        ),
        r#"[[:db/retractEntity [:person/email "a@x"]]]"#.into(),
        r#"[[:db/add [:reg/course+student ["math" 7]] :reg/course "art"]]"#.into(),
        format!(
            r#"[[:db/retract [:person/email "b@x"] :person/bio "{}"]]"#,
            giant('g')
        ),
    ]
}

#[test]
fn reports_of_one_shared_batch_have_exact_db_before_and_after() {
    let requests = batch_requests();
    // The model: the same requests one by one, with the states around each.
    let model_dir = tempfile::tempdir().unwrap();
    let model = fresh(model_dir.path());
    let mut expected = Vec::new();
    for data in &requests {
        let before = state(&model.db().unwrap());
        let ok = model.transact(tx(data)).is_ok();
        expected.push((ok, before, state(&model.db().unwrap())));
    }

    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    // The committer is held while the requests queue up behind it: they share the next
    // group commit.
    hold_committer(db.env(), 300);
    let handles: Vec<_> = requests.iter().map(|d| db.transact_async(tx(d))).collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.wait()).collect();
    let shared = db.env().commit_counters().largest_batch;
    assert!(shared >= requests.len(), "one batch held {shared} requests");
    for (i, (r, (ok, before, after))) in results.iter().zip(&expected).enumerate() {
        assert_eq!(r.is_ok(), *ok, "request {i}: {r:?}");
        let Ok(r) = r else { continue };
        let b = r.db_before().unwrap();
        let a = r.db_after().unwrap();
        assert_eq!(&state(&b), before, "request {i}: db_before");
        assert_eq!(&state(&a), after, "request {i}: db_after");
        // The report's cheap answers agree with the values it builds.
        assert_eq!(r.basis_t_before(), b.basis_t().unwrap(), "request {i}");
        assert_eq!(r.basis_t_after(), a.basis_t().unwrap(), "request {i}");
        let schema = r.schema_after().expect("a committed report has values");
        assert_eq!(
            schema.version,
            a.schema().version,
            "request {i}: schema_after"
        );
        assert!(a.check().unwrap().problems.iter().all(|p| {
            // Statistics of a report's values (counts, and the value sketches of attributes
            // without AVE entries) are the batch snapshot's (documented).
            matches!(
                p,
                datalith::admin::Inconsistency::Stats { .. }
                    | datalith::admin::Inconsistency::Sketch { .. }
            )
        }));
        // Values from a report are full databases: `with` works on them.
        let next = a
            .db_with(tx(r#"[{:db/id "w" :person/name "Wendy"}]"#))
            .unwrap();
        let with = a
            .with(tx(
                r#"[{:db/ident :person/twitter :db/valueType :db.type/string
                           :db/cardinality :db.cardinality/one}]"#,
            ))
            .unwrap();
        assert_eq!(
            with.basis_t_before(),
            a.basis_t().unwrap(),
            "request {i}: with"
        );
        assert_eq!(
            with.basis_t_after(),
            with.db_after().unwrap().basis_t().unwrap(),
            "request {i}: with"
        );
        let with_schema = with.schema_after().unwrap();
        assert!(with_schema.by_ident(&kw(":person/twitter")).is_some());
        let wendy = next
            .q("[:find ?e . :where [?e :person/name \"Wendy\"]]", &[])
            .unwrap();
        assert!(matches!(wendy, Edn::Long(_)), "request {i}: {wendy:?}");
    }
}

#[test]
fn a_blocking_transact_reports_the_states_around_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    for data in batch_requests() {
        let before = state(&db.db().unwrap());
        let Ok(r) = db.transact(tx(&data)) else {
            continue;
        };
        let after = state(&db.db().unwrap());
        assert_eq!(state(&r.db_before().unwrap()), before, "{data}");
        assert_eq!(state(&r.db_after().unwrap()), after, "{data}");
    }
}

#[test]
fn callbacks_get_reports_with_db_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let (send, recv) = std::sync::mpsc::channel();
    db.transact_with_callback(tx(r#"[{:person/email "a@x" :person/age 77}]"#), move |r| {
        let age = "[:find ?a . :where [?p :person/email \"a@x\"] [?p :person/age ?a]]";
        let r = r.unwrap();
        let got = (
            r.db_before().unwrap().q(age, &[]).unwrap(),
            r.db_after().unwrap().q(age, &[]).unwrap(),
        );
        send.send(got).unwrap();
    });
    let got = recv.recv().unwrap();
    assert_eq!(got, (Edn::Long(30), Edn::Long(77)));
}

#[test]
fn only_the_latest_live_batches_keep_their_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let max = datalith::limits::MAX_RETAINED_BATCH_SNAPSHOTS;
    // Reports held while later group commits happen: the oldest let their snapshot go.
    let held: Vec<_> = (0..max + 3)
        .map(|i| {
            db.transact(tx(&format!(r#"[{{:person/email "a@x" :person/age {i}}}]"#)))
                .unwrap()
        })
        .collect();
    let age = "[:find ?a . :where [?p :person/email \"a@x\"] [?p :person/age ?a]]";
    for (i, r) in held.iter().enumerate() {
        let got = r.db_after();
        if i < 3 {
            assert!(
                matches!(got, Err(datalith::tx::TxError::SnapshotReleased)),
                "report {i}: {got:?}"
            );
        } else {
            assert_eq!(got.unwrap().q(age, &[]).unwrap(), Edn::Long(i as i64));
        }
    }
    // A report whose batch is the only one alive keeps its snapshot however many commits
    // follow (their reports dropped at once).
    let last = db
        .transact(tx(r#"[{:person/email "a@x" :person/age 500}]"#))
        .unwrap();
    drop(held);
    for i in 0..(max + 2) {
        db.transact(tx(&format!(
            r#"[{{:person/email "a@x" :person/age {}}}]"#,
            i + 600
        )))
        .unwrap();
    }
    assert_eq!(
        last.db_after().unwrap().q(age, &[]).unwrap(),
        Edn::Long(500)
    );
}

#[test]
fn a_map_growth_releases_report_snapshots_instead_of_waiting_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = DbOptions::default();
    options.env.initial_map_bytes = 1 << 20;
    let db = Database::open(dir.path(), options).unwrap();
    db.transact(tx(SCHEMA)).unwrap();
    let held = db.transact(tx(&seed())).unwrap();
    let kept = held.db_after().unwrap();
    drop(kept);
    // Megabytes of long values: the 1 MiB map must grow, which needs every snapshot closed.
    for i in 0..40 {
        let bio: String = std::iter::repeat_n(char::from(b'a' + (i % 26) as u8), 100_000).collect();
        db.transact(tx(&format!(
            r#"[{{:db/id "p" :person/name "P{i}" :person/bio "{bio}"}}]"#
        )))
        .unwrap();
    }
    assert!(db.env().commit_counters().map_growths > 0);
    assert!(matches!(
        held.db_after(),
        Err(datalith::tx::TxError::SnapshotReleased)
    ));
}

#[test]
fn with_calls_the_databases_tx_functions() {
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (spec, real) = (fresh(da.path()), fresh(dbb.path()));
    for db in [&spec, &real] {
        // [:test/set-age email age] -> the datom that sets it.
        db.register_tx_fn(kw(":test/set-age"), |args| match args {
            [datalith::codec::Value::String(email), datalith::codec::Value::Long(age)] => Ok(tx(
                &format!(r#"[[:db/add [:person/email "{email}"] :person/age {age}]]"#),
            )),
            _ => Err("wants an email and an age".into()),
        });
    }
    let data = r#"[[:test/set-age "a@x" 64] [:db.fn/call :test/set-age "b@x" 65]]"#;
    let after = spec.db().unwrap().db_with(tx(data)).unwrap();
    real.transact(tx(data)).unwrap();
    assert_eq!(state(&after), state(&real.db().unwrap()));
    let bad = spec.db().unwrap().with(tx(r#"[[:test/set-age 1]]"#));
    assert!(bad.is_err(), "{bad:?}");
}

mod random {
    //! Random transactions: `with` chains, sequential transactions and one shared group
    //! commit must all go through the same states.

    use super::*;
    use proptest::prelude::*;

    const EMAILS: [&str; 4] = ["a@x", "b@x", "n0@x", "n1@x"];

    #[derive(Debug, Clone)]
    enum Op {
        /// Upsert by email, setting the age (creates the person if missing).
        Age(usize, i64),
        Tag(usize, u8),
        Untag(usize, u8),
        /// A long value (0, 1: two giants) or a short one (2).
        Bio(usize, u8),
        Unbio(usize),
        Friend(usize, usize),
        RetractEntity(usize),
        Reg(u8, i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let p = 0usize..4;
        prop_oneof![
            (p.clone(), 0i64..3).prop_map(|(p, v)| Op::Age(p, v)),
            (p.clone(), 0u8..3).prop_map(|(p, t)| Op::Tag(p, t)),
            (p.clone(), 0u8..3).prop_map(|(p, t)| Op::Untag(p, t)),
            (p.clone(), 0u8..3).prop_map(|(p, b)| Op::Bio(p, b)),
            p.clone().prop_map(Op::Unbio),
            (p.clone(), p.clone()).prop_map(|(a, b)| Op::Friend(a, b)),
            p.prop_map(Op::RetractEntity),
            (0u8..2, 0i64..3).prop_map(|(c, n)| Op::Reg(c, n)),
        ]
    }

    fn edn(ops: &[Op]) -> String {
        let who = |p: &usize| format!(r#"[:person/email "{}"]"#, EMAILS[*p]);
        let bio = |b: &u8| match b {
            0 => giant('g'),
            1 => giant('h'),
            _ => "short".to_string(),
        };
        let forms: Vec<String> = ops
            .iter()
            .map(|o| match o {
                Op::Age(p, v) => format!(r#"{{:person/email "{}" :person/age {v}}}"#, EMAILS[*p]),
                Op::Tag(p, t) => format!("[:db/add {} :person/tags :t{t}]", who(p)),
                Op::Untag(p, t) => format!("[:db/retract {} :person/tags :t{t}]", who(p)),
                Op::Bio(p, b) => format!(r#"[:db/add {} :person/bio "{}"]"#, who(p), bio(b)),
                Op::Unbio(p) => format!("[:db/retract {} :person/bio]", who(p)),
                Op::Friend(a, b) => format!("[:db/add {} :person/friend {}]", who(a), who(b)),
                Op::RetractEntity(p) => format!("[:db/retractEntity {}]", who(p)),
                Op::Reg(c, n) => format!(r#"{{:reg/course "c{c}" :reg/student {n}}}"#),
            })
            .collect();
        format!("[{}]", forms.join(" "))
    }

    fn options() -> DbOptions {
        DbOptions::with_durability(datalith::kv::Durability::NoSync)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn with_chains_sequential_and_batched_reports_agree(
            txs in prop::collection::vec(prop::collection::vec(op(), 1..4), 1..6)
        ) {
            let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
            let real = fresh_with(dirs[0].path(), options());
            let batched = fresh_with(dirs[1].path(), options());
            let spec_db = fresh_with(dirs[2].path(), options());
            // Sequential transactions: the model of every state.
            let mut expected = Vec::new();
            for t in &txs {
                let before = state(&real.db().unwrap());
                let r = real.transact(tx(&edn(t)));
                let after = state(&real.db().unwrap());
                if let Ok(r) = &r {
                    prop_assert_eq!(&state(&r.db_before().unwrap()), &before);
                    prop_assert_eq!(&state(&r.db_after().unwrap()), &after);
                }
                expected.push((r.is_ok(), before, after));
            }
            // A chain of `with`s on one snapshot.
            let mut spec = spec_db.db().unwrap();
            for (t, (ok, _, after)) in txs.iter().zip(&expected) {
                let r = spec.with(tx(&edn(t)));
                prop_assert_eq!(r.is_ok(), *ok, "{}", edn(t));
                if let Ok(r) = r {
                    spec = r.db_after().unwrap();
                    prop_assert_eq!(&state(&spec), after, "{}", edn(t));
                }
            }
            // One shared group commit.
            hold_committer(batched.env(), 50);
            let handles: Vec<_> = txs.iter().map(|t| batched.transact_async(tx(&edn(t)))).collect();
            for (h, (t, (ok, before, after))) in handles.into_iter().zip(txs.iter().zip(&expected)) {
                let r = h.wait();
                prop_assert_eq!(r.is_ok(), *ok, "{}", edn(t));
                if let Ok(r) = r {
                    prop_assert_eq!(&state(&r.db_before().unwrap()), before, "{}", edn(t));
                    prop_assert_eq!(&state(&r.db_after().unwrap()), after, "{}", edn(t));
                }
            }
        }
    }
}

#[test]
fn a_report_kept_past_its_database_does_not_keep_it_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let r = db
        .transact(tx(r#"[{:person/email "a@x" :person/age 41}]"#))
        .unwrap();
    drop(db);
    let again = Database::open(dir.path(), DbOptions::default()).unwrap();
    assert!(matches!(
        r.db_after(),
        Err(datalith::tx::TxError::SnapshotReleased)
    ));
    let age = "[:find ?a . :where [?p :person/email \"a@x\"] [?p :person/age ?a]]";
    assert_eq!(again.db().unwrap().q(age, &[]).unwrap(), Edn::Long(41));
}

#[test]
fn clones_of_one_speculative_value_read_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let r = db
        .transact(tx(
            r#"[{:person/email "a@x" :person/age 42} {:person/email "n@x" :person/name "Nan"}]"#,
        ))
        .unwrap();
    let after = r.db_after().unwrap();
    let spec = after
        .db_with(tx(r#"[{:person/email "b@x" :person/age 43}]"#))
        .unwrap();
    let want = state(&spec);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let mine = spec.clone();
            std::thread::spawn(move || (0..5).map(|_| state(&mine)).collect::<Vec<_>>())
        })
        .collect();
    for t in threads {
        for got in t.join().unwrap() {
            assert_eq!(got, want);
        }
    }
}
