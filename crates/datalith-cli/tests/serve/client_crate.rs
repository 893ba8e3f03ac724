//! The Rust client (`datalith-client`) against the real server: the embedded API's shape,
//! one database value per `db()`, the server's error categories.

use datalith::codec::{Keyword, Value};
use datalith::edn::read_one;
use datalith_client::Client;

use crate::server;

#[test]
fn the_client_reads_one_value_per_db_and_keeps_error_categories() {
    let s = server::start(&["people"], &[]);
    let people = Client::new(&s.base).database("people");
    people
        .transact(
            r#"[{:db/ident :person/email :db/valueType :db.type/string
                 :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                {:db/ident :person/name :db/valueType :db.type/string
                 :db/cardinality :db.cardinality/one}]"#,
        )
        .unwrap();
    let report = people
        .transact(r#"[{:db/id "ann" :person/email "ann@x" :person/name "Ann"}]"#)
        .unwrap();
    let ann = report.tempid("ann").expect("a tempid");
    assert_eq!(report.basis_after, report.tx);
    assert!(report.basis_before.unwrap() < report.tx);
    // Its datoms, read from the answer when asked for (and the same when asked again): the
    // transaction's instant and Ann's two values.
    let datoms = report.tx_data().unwrap();
    assert_eq!(datoms, report.tx_data().unwrap());
    let tx = report.tx as i64;
    let ann_id = ann as i64;
    let mut shown: Vec<String> = datoms
        .iter()
        .map(|d| match d {
            datalith::edn::Edn::Vector(f) if f[0] == datalith::edn::Edn::Long(tx) => {
                format!("[tx {} {} {}]", f[1], f[3] == f[0], f[4])
            }
            datalith::edn::Edn::Vector(f) if f[0] == datalith::edn::Edn::Long(ann_id) => {
                format!(
                    "[ann {} {} {}]",
                    f[1],
                    f[2],
                    f[3] == datalith::edn::Edn::Long(tx)
                )
            }
            other => other.to_string(),
        })
        .collect();
    shown.sort();
    assert_eq!(
        shown,
        [
            r#"[ann :person/email "ann@x" true]"#,
            r#"[ann :person/name "Ann" true]"#,
            "[tx :db/txInstant true true]",
        ]
    );

    let before = people.db().unwrap();
    assert_eq!(before.basis_t(), report.tx);
    // EDN data works as tx data too.
    people
        .transact(read_one(r#"[{:person/email "bob@x" :person/name "Bob"}]"#).unwrap())
        .unwrap();
    let count = "[:find (count ?p) . :where [?p :person/email]]";
    // The value taken before Bob still answers without him; a new one has him.
    assert_eq!(before.q(count, &[]).unwrap(), read_one("1").unwrap());
    let after = people.db().unwrap();
    assert_eq!(after.q(count, &[]).unwrap(), read_one("2").unwrap());
    let by_email = "[:find ?n . :in $ ?e :where [?p :person/email ?e] [?p :person/name ?n]]";
    assert_eq!(
        after
            .q(by_email, &[read_one(r#""bob@x""#).unwrap()])
            .unwrap(),
        read_one(r#""Bob""#).unwrap()
    );
    // Pull by id, by lookup ref; pull-many.
    assert_eq!(
        after.pull("[:person/name]", ann).unwrap(),
        read_one(r#"{:person/name "Ann"}"#).unwrap()
    );
    let bob = (
        Keyword::parse(":person/email"),
        Value::String("bob@x".into()),
    );
    assert_eq!(
        after.pull("[:person/name]", bob.clone()).unwrap(),
        read_one(r#"{:person/name "Bob"}"#).unwrap()
    );
    assert_eq!(
        after.pull_many("[:person/name]", &[ann]).unwrap(),
        vec![read_one(r#"{:person/name "Ann"}"#).unwrap()]
    );
    // The server's error, with its category and status.
    let e = people
        .transact(r#"[{:db/id "x" :person/name 42}]"#)
        .unwrap_err();
    assert_eq!(e.status, 400);
    assert_eq!(
        e.code.as_deref(),
        Some(":db.error/wrong-type-for-attribute")
    );
    let e = Client::new(&s.base).database("nope").db().unwrap_err();
    assert_eq!(e.status, 404);
    assert_eq!(e.code.as_deref(), Some(":datalith.error/unknown-database"));
    let e = Client::new("http://127.0.0.1:9")
        .database("people")
        .db()
        .unwrap_err();
    assert_eq!(e.status, 0, "{e}");
}

#[test]
fn the_clients_kv_table_mirrors_the_embedded_one() {
    use datalith::kv::Direction;
    use std::ops::Bound::{Excluded, Included, Unbounded};

    let s = server::start(&["people"], &[]);
    let people = Client::new(&s.base).database("people");
    let t = people.kv_table("blobs");
    assert_eq!(t.get(b"a").unwrap(), None);
    assert!(t.is_empty().unwrap());
    assert!(
        people.kv_table_names().unwrap().is_empty(),
        "a read creates nothing"
    );
    t.put(b"a", &[0, 255]).unwrap();
    let keys: Vec<Vec<u8>> = (0..2500u32)
        .map(|i| format!("k{i:05}").into_bytes())
        .collect();
    let puts: Vec<(&[u8], &[u8])> = keys.iter().map(|k| (&k[..], &b"v"[..])).collect();
    t.write(&puts, &[b"a"]).unwrap();
    assert_eq!(t.get(b"a").unwrap(), None);
    t.put(b"a", b"again").unwrap();
    assert_eq!(t.get(b"a").unwrap().as_deref(), Some(&b"again"[..]));
    assert_eq!(t.len().unwrap(), 2501);
    assert_eq!(people.kv_table_names().unwrap(), ["blobs"]);
    // Ranges walk pages (KV_PAGE entries each) both ways, with every kind of bound.
    let all: Vec<Vec<u8>> = t
        .range(Unbounded, Unbounded, Direction::Forward)
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(all.len(), 2501);
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    let down: Vec<Vec<u8>> = t
        .range(Unbounded, Unbounded, Direction::Backward)
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(down, all.iter().rev().cloned().collect::<Vec<_>>());
    let some: Vec<Vec<u8>> = t
        .range(
            Excluded(&b"k00010"[..]),
            Included(&b"k00012"[..]),
            Direction::Forward,
        )
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(some, [b"k00011".to_vec(), b"k00012".to_vec()]);
    assert_eq!(
        t.count_range(Included(&b"k01000"[..]), Excluded(&b"k02000"[..]))
            .unwrap(),
        1000
    );
    t.delete(b"a").unwrap();
    t.delete(b"a").unwrap();
    assert_eq!(t.len().unwrap(), 2500);
    // The server's errors keep their category.
    let e = t.get(b"").unwrap_err();
    assert_eq!(e.status, 400);
    assert_eq!(e.code.as_deref(), Some(":datalith.error/invalid-argument"));
}

#[test]
fn a_value_of_another_database_is_a_query_input_as_in_the_embedded_q() {
    let s = server::start(&["people", "films"], &[]);
    let client = Client::new(&s.base);
    let (people, films) = (client.database("people"), client.database("films"));
    let schema = r#"[{:db/ident :person/email :db/valueType :db.type/string
                      :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                     {:db/ident :person/name :db/valueType :db.type/string
                      :db/cardinality :db.cardinality/one}]"#;
    for db in [&people, &films] {
        db.transact(schema).unwrap();
    }
    people
        .transact(r#"[{:person/email "ann@x" :person/name "Ann"}]"#)
        .unwrap();
    films
        .transact(r#"[{:person/email "ann@x" :person/name "Ann the director"}]"#)
        .unwrap();
    let then = films.db().unwrap();
    films
        .transact(r#"[{:person/email "ann@x" :person/name "Ann the producer"}]"#)
        .unwrap();
    let q = "[:find ?n ?d :in $ $films :where [?p :person/email ?e] [?p :person/name ?n]
              [$films ?f :person/email ?e] [$films ?f :person/name ?d]]";
    let now = people.db().unwrap();
    // The value taken before the change, then the latest.
    assert_eq!(
        now.q(q, &[then.as_input()]).unwrap(),
        read_one(r#"#{["Ann" "Ann the director"]}"#).unwrap()
    );
    assert_eq!(
        now.q(q, &[films.db().unwrap().as_input()]).unwrap(),
        read_one(r#"#{["Ann" "Ann the producer"]}"#).unwrap()
    );
}

/// Collects what `q_each` hands on.
#[derive(Default)]
struct Collect {
    set: Option<bool>,
    items: Vec<datalith::edn::Edn>,
    /// Fail with `Cancelled` at this item.
    stop_at: Option<usize>,
}

impl datalith::query::ItemSink for Collect {
    fn begin(&mut self, set: bool) -> Result<(), datalith::query::QueryError> {
        self.set = Some(set);
        Ok(())
    }

    fn item(&mut self, item: &datalith::edn::Edn) -> Result<(), datalith::query::QueryError> {
        if self.stop_at == Some(self.items.len()) {
            return Err(datalith::query::QueryError::Cancelled);
        }
        self.items.push(item.clone());
        Ok(())
    }
}

/// `RemoteDb::q_each` gives the items `q` gives, for an answer of many chunks and one of a
/// few items; other results whole; a sink's error under its category.
#[test]
fn the_clients_q_each_mirrors_the_embedded_one() {
    let s = server::start(&["people"], &[]);
    let people = Client::new(&s.base).database("people");
    people
        .transact(
            "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
              {:db/ident :s :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
    // 20,000 rows of about 50 bytes: an answer of many 64 KiB chunks.
    for chunk in 0..4 {
        let maps: Vec<String> = (0..5_000)
            .map(|i| format!("{{:n {} :s \"row é {}\"}}", chunk * 5_000 + i, i % 7))
            .collect();
        people
            .transact(format!("[{}]", maps.join(" ")).as_str())
            .unwrap();
    }
    let db = people.db().unwrap();
    let sorted = |items: &[datalith::edn::Edn]| {
        let mut v: Vec<String> = items.iter().map(|i| i.to_string()).collect();
        v.sort();
        v
    };
    for (query, set) in [
        ("[:find ?e ?n ?s :where [?e :n ?n] [?e :s ?s]]", true),
        ("[:find [?n ...] :where [_ :n ?n] [(< ?n 5)]]", false),
        ("[:find ?s :where [_ :s ?s]]", true),
    ] {
        let whole = db.q(query, &[]).unwrap();
        let (datalith::edn::Edn::Set(expected) | datalith::edn::Edn::Vector(expected)) = whole
        else {
            panic!("{whole}")
        };
        let mut sink = Collect::default();
        assert_eq!(db.q_each(query, &[], &mut sink).unwrap(), None, "{query}");
        assert_eq!(sink.set, Some(set), "{query}");
        assert_eq!(sorted(&sink.items), sorted(&expected), "{query}");
    }
    // Not rows: whole.
    let mut sink = Collect::default();
    let count = db
        .q_each("[:find (count ?e) . :where [?e :n]]", &[], &mut sink)
        .unwrap();
    assert_eq!(count, Some(read_one("20000").unwrap()));
    assert!(sink.items.is_empty() && sink.set.is_none());
    // A sink's error stops the reading and keeps its category.
    let mut sink = Collect {
        stop_at: Some(100),
        ..Collect::default()
    };
    let e = db
        .q_each("[:find ?e ?n :where [?e :n ?n]]", &[], &mut sink)
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some(":datalith.error/cancelled"), "{e}");
    assert_eq!(sink.items.len(), 100);
    // The server's errors keep theirs.
    let e = db
        .q_each(
            "[:find ?e :where [?e :no-such ?x]]",
            &[],
            &mut Collect::default(),
        )
        .unwrap_err();
    assert!(e.code.is_some(), "{e}");
    // And the server goes on answering on the same client.
    assert_eq!(
        db.q("[:find (count ?e) . :where [?e :s]]", &[]).unwrap(),
        read_one("20000").unwrap()
    );
}
