//! Datalog over commits that LMDB does not hold yet (`kv::unapplied`): database values,
//! reports' `db_before`/`db_after`, speculative values and `check` answer as if every
//! acknowledged transaction were in LMDB, before and after the applier writes it there, and
//! after reopening.

use std::time::Duration;

use datalith::kv::EnvOptions;
use datalith::{Database, DbOptions};

fn open(path: &std::path::Path, delay: Duration) -> Database {
    let mut env = EnvOptions::default();
    env.log_apply_delay = delay;
    // Every read merges the waiting groups (by default a reader first writes a few itself).
    env.log_readers_apply = false;
    let mut o = DbOptions::default();
    o.env = env;
    Database::open(path, o).unwrap()
}

const SCHEMA: &str = r#"[{:db/ident :name :db/valueType :db.type/string
                         :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                        {:db/ident :age :db/valueType :db.type/long
                         :db/cardinality :db.cardinality/one}
                        {:db/ident :friend :db/valueType :db.type/ref
                         :db/cardinality :db.cardinality/many}]"#;

const PEOPLE: &str = "[:find ?n ?a :where [?e :name ?n] [?e :age ?a]]";
const FRIENDS: &str = "[:find ?n ?f :where [?e :name ?n] [?e :friend ?x] [?x :name ?f]]";

fn q(db: &datalith::Db, query: &str) -> String {
    db.q(query, &[]).unwrap().to_string()
}

#[test]
fn values_reports_and_check_see_every_acknowledged_transaction() {
    // LMDB written after every group, after the default delay, and only at closing.
    for delay in [
        Duration::ZERO,
        Duration::from_millis(20),
        Duration::from_secs(3600),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), delay);
        db.transact(SCHEMA).unwrap();
        let ann = db
            .transact(r#"[{:name "Ann" :age 30} {:name "Bob" :age 41}]"#)
            .unwrap();
        // An upsert through the identity, and a ref by lookup: both resolve against the
        // previous transaction, which LMDB may not hold yet.
        let bob = db
            .transact(r#"[{:name "Bob" :age 42 :friend [[:name "Ann"]]}]"#)
            .unwrap();
        // (what is read, expected) while the last groups may be unapplied.
        let now = db.db().unwrap();
        let table = [
            (q(&now, PEOPLE), r#"#{["Ann" 30] ["Bob" 42]}"#),
            (q(&now, FRIENDS), r#"#{["Bob" "Ann"]}"#),
            (q(&ann.db_before().unwrap(), PEOPLE), "#{}"),
            (
                q(&ann.db_after().unwrap(), PEOPLE),
                r#"#{["Ann" 30] ["Bob" 41]}"#,
            ),
            (
                q(&bob.db_before().unwrap(), PEOPLE),
                r#"#{["Ann" 30] ["Bob" 41]}"#,
            ),
            (q(&bob.db_after().unwrap(), FRIENDS), r#"#{["Bob" "Ann"]}"#),
            (
                q(
                    &now.with(r#"[{:name "Cy" :age 7}]"#)
                        .unwrap()
                        .db_after()
                        .unwrap(),
                    PEOPLE,
                ),
                r#"#{["Ann" 30] ["Bob" 42] ["Cy" 7]}"#,
            ),
        ];
        for (i, (got, want)) in table.iter().enumerate() {
            assert_eq!(got, want, "delay {delay:?}, row {i}");
        }
        assert!(now.check().unwrap().is_ok(), "delay {delay:?}");
        db.env().apply_logged().unwrap();
        let applied = db.db().unwrap();
        assert_eq!(q(&applied, PEOPLE), q(&now, PEOPLE), "delay {delay:?}");
        assert!(applied.check().unwrap().is_ok(), "delay {delay:?}");
        drop((now, applied, ann, bob));
        drop(db);
        let db = open(dir.path(), delay);
        let reopened = db.db().unwrap();
        assert_eq!(
            q(&reopened, PEOPLE),
            r#"#{["Ann" 30] ["Bob" 42]}"#,
            "delay {delay:?}"
        );
        assert!(reopened.check().unwrap().is_ok(), "delay {delay:?}");
    }
}

#[test]
fn a_transaction_too_large_for_the_log_is_written_into_lmdb_at_once() {
    // A small request (its size hint counts items, not bytes) whose writes exceed half of a
    // 1 MiB log: it skips the log, after the groups waiting before it reach LMDB.
    let dir = tempfile::tempdir().unwrap();
    let open_small = |path: &std::path::Path| {
        let mut env = EnvOptions::default();
        env.log_apply_delay = Duration::from_secs(3600);
        env.log_readers_apply = false;
        env.log_file_bytes = 1 << 20;
        let mut o = DbOptions::default();
        o.env = env;
        Database::open(path, o).unwrap()
    };
    let db = open_small(dir.path());
    db.transact(SCHEMA).unwrap();
    db.transact(r#"[{:name "Ann" :age 30}]"#).unwrap();
    let long = "x".repeat(700 * 1024);
    db.transact(format!(r#"[{{:name "{long}" :age 1}}]"#).as_str())
        .unwrap();
    db.transact(r#"[{:name "Bob" :age 41}]"#).unwrap();
    let ages = "[:find (sum ?a) . :where [_ :age ?a]]";
    let now = db.db().unwrap();
    assert_eq!(q(&now, ages), "72");
    assert!(now.check().unwrap().is_ok());
    drop(now);
    drop(db);
    let db = open_small(dir.path());
    assert_eq!(q(&db.db().unwrap(), ages), "72");
}

#[test]
fn a_transaction_resolves_against_every_write_of_the_one_before_it_large_or_small() {
    // A large group's last writes reach the committer's overlay while its log record is
    // written; the next transaction must still find every one of them.
    // (people in the first transaction; each is then upserted and referenced)
    for people in [1usize, 3, 40] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), Duration::from_secs(3600));
        db.transact(SCHEMA).unwrap();
        let names: Vec<String> = (0..people).map(|i| format!("p{i}")).collect();
        let first: String = names
            .iter()
            .map(|n| format!(r#"{{:name "{n}" :age 1}}"#))
            .collect();
        db.transact(&format!("[{first}]")).unwrap();
        let second: String = names
            .iter()
            .map(|n| format!(r#"{{:name "{n}" :age 2 :friend [[:name "p0"]]}}"#))
            .collect();
        db.transact(&format!("[{second}]")).unwrap();
        let now = db.db().unwrap();
        let counted = q(
            &now,
            "[:find (count ?e) (min ?a) (max ?a) :where [?e :name] [?e :age ?a]]",
        );
        assert_eq!(counted, format!("#{{[{people} 2 2]}}"), "{people} people");
        let friends = q(
            &now,
            "[:find (count ?e) :where [?e :friend ?x] [?x :name \"p0\"]]",
        );
        assert_eq!(friends, format!("#{{[{people}]}}"), "{people} people");
        assert!(now.check().unwrap().is_ok(), "{people} people");
    }
}

/// `applied_db` reads the data file alone: with the applier held off it is the value before
/// the waiting transactions (a whole transaction or none), and once they are written it
/// equals `db()`.
#[test]
fn the_applied_value_is_the_data_files_state_whole_transactions_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), Duration::from_secs(3600));
    db.transact(SCHEMA).unwrap();
    db.env().apply_logged().unwrap();
    let schema_t = db.db().unwrap().basis_t().unwrap();
    db.transact(r#"[{:name "Ann" :age 30} {:name "Bob" :age 41}]"#)
        .unwrap();
    db.transact(r#"[{:name "Bob" :age 42}]"#).unwrap();
    let latest = db.db().unwrap();
    let applied = db.applied_db().unwrap();
    // (what is read, expected) with both transactions waiting for the applier.
    let waiting = [
        (
            q(&latest, PEOPLE),
            r#"#{["Ann" 30] ["Bob" 42]}"#.to_string(),
        ),
        (q(&applied, PEOPLE), "#{}".to_string()),
        (applied.basis_t().unwrap().to_string(), schema_t.to_string()),
    ];
    for (i, (got, want)) in waiting.iter().enumerate() {
        assert_eq!(got, want, "row {i}");
    }
    assert!(latest.basis_t().unwrap() > schema_t);
    assert!(applied.check().unwrap().is_ok());
    db.env().apply_logged().unwrap();
    let written = db.applied_db().unwrap();
    assert_eq!(q(&written, PEOPLE), q(&latest, PEOPLE));
    assert_eq!(written.basis_t().unwrap(), latest.basis_t().unwrap());
    assert!(written.check().unwrap().is_ok());
}

/// Transactions queued all at once, each upserting 100 entities on a unique string whose
/// values share a 32-byte beginning and ascend: their uniqueness checks meet none of the
/// writes waiting for the LMDB writer, so the committer leaves every batch to that writer,
/// however large (one that met them would write its large batches into LMDB itself, on its
/// own thread: a replicated node catching up did so with its own request ids).
#[test]
fn upserts_of_values_sharing_a_long_beginning_leave_every_batch_to_the_lmdb_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(
        r#"[{:db/ident :url :db/valueType :db.type/string :db/cardinality :db.cardinality/one
             :db/unique :db.unique/identity}
            {:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#,
    )
    .unwrap();
    let txs = 200;
    let texts: Vec<String> = (0..txs)
        .map(|i| {
            let maps: Vec<String> = (0..100)
                .map(|j| {
                    let n = i * 100 + j;
                    format!(r#"{{:url "https://data.example.org/people/{n:010}" :n {n}}}"#)
                })
                .collect();
            format!("[{}]", maps.join(" "))
        })
        .collect();
    let handles: Vec<_> = texts
        .iter()
        .map(|t| db.transact_async(t.as_str()))
        .collect();
    for h in handles {
        h.wait().unwrap();
    }
    let c = db.env().commit_counters();
    assert!(c.largest_batch > 10, "{c:?}");
    assert_eq!(c.direct_batches, 0, "{c:?}");
    let count = db
        .db()
        .unwrap()
        .q("[:find (count ?e) . :where [?e :url]]", &[])
        .unwrap();
    assert_eq!(count.to_string(), (txs * 100).to_string());
}
