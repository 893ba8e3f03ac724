//! `Db::q_rows` and `datalith::q_rows`: a collection result taken a row at a time gives
//! exactly the result `q` gives whole (items, order, set or vector); other shapes come whole.

use datalith::edn::{read_one, Edn};
use datalith::query::{Answer, QueryOptions};
use datalith::{Database, DbOptions, Input};

const SCHEMA: &str = r#"[
  {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :id :db/valueType :db.type/long :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}]"#;

fn people() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(SCHEMA).unwrap();
    let maps: Vec<String> = (0..300)
        .map(|i| {
            // Ages repeat, so projections without `:with` collapse and with it do not.
            format!(
                "{{:db/id \"p{i}\" :id {i} :name \"n{}\" :age {} :friend [\"p{}\"]}}",
                i % 50,
                i % 7,
                (i + 1) % 300
            )
        })
        .collect();
    db.transact(format!("[{}]", maps.join(" ")).as_str())
        .unwrap();
    (dir, db)
}

/// Queries whose result is a collection of rows: answered as rows.
const AS_ROWS: &[(&str, &[&str])] = &[
    ("[:find ?e ?n :where [?e :name ?n]]", &[]),
    ("[:find ?n :where [?e :name ?n]]", &[]),
    ("[:find ?a :with ?e :where [?e :age ?a]]", &[]),
    ("[:find [?n ...] :where [?e :name ?n]]", &[]),
    ("[:find [?a ...] :with ?e :where [?e :age ?a]]", &[]),
    (
        "[:find (pull ?e [:name {:friend [:id]}]) ?a :where [?e :age ?a] [(< ?a 2)]]",
        &[],
    ),
    (
        "[:find [(pull ?e [*]) ...] :where [?e :id ?i] [(< ?i 20)]]",
        &[],
    ),
    ("[:find ?x ?y :in [[?x ?y]]]", &["[[1 2] [3 4] [1 2]]"]),
    (
        "[:find ?x ?y :in [[?x ?y]]]",
        &[
            r#"[[:k/w "s"] [true 1.5] [#inst "2026-12-07T10:00:00.123-00:00" #uuid "6ba7b810-9dad-11d1-80b4-00c04fd430c8"] [1.5M 2N] [-7 "ü"] [[1 2] #{3}]]"#,
        ],
    ),
    ("[:find ?e :in $ ?n :where [?e :name ?n]]", &["\"n3\""]),
    ("[:find ?e :where [?e :name \"nobody\"]]", &[]),
    (
        "[:find ?e ?f :where [?e :friend ?f] [?f :age ?a] [(> ?a 5)]]",
        &[],
    ),
];

/// Queries whose result is one value, or needs every row first: answered whole.
const WHOLE: &[&str] = &[
    "[:find (count ?e) . :where [?e :name]]",
    "[:find ?a (count ?e) :where [?e :age ?a]]",
    "[:find ?n . :where [?e :name ?n]]",
    "[:find [?n ?a] :where [?e :name ?n] [?e :age ?a]]",
    "[:find ?n ?a :keys name age :where [?e :name ?n] [?e :age ?a]]",
    "{:find [?n] :where [[?e :name ?n]] :limit 5}",
    "{:find [?n] :where [[?e :name ?n]] :offset 3}",
    "{:find [?n ?a] :where [[?e :name ?n] [?e :age ?a]] :order-by [?a]}",
];

fn inputs(texts: &[&str]) -> Vec<Edn> {
    texts.iter().map(|t| read_one(t).unwrap()).collect()
}

/// The items of `rows`, as the whole result they make.
fn whole(answer: Answer) -> (Edn, bool) {
    match answer {
        Answer::Rows(rows) => {
            let set = rows.is_set();
            let len = rows.len();
            let items: Vec<Edn> = rows.map(|r| r.unwrap()).collect();
            assert_eq!(items.len(), len, "len() counts the items to come");
            (
                if set {
                    Edn::Set(items)
                } else {
                    Edn::Vector(items)
                },
                true,
            )
        }
        Answer::Whole(outcome) => (outcome.result, false),
    }
}

#[test]
fn rows_make_the_same_result_as_q() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    let options = QueryOptions::default();
    for (query, args) in AS_ROWS {
        let args = inputs(args);
        let expected = snapshot.q(query, &args).unwrap();
        let (got, as_rows) = whole(snapshot.q_rows(query, &args, &options).unwrap());
        assert!(as_rows, "{query} comes as rows");
        assert_eq!(got, expected, "{query}");
        // Taken in place, item by item: the same items.
        let Answer::Rows(mut rows) = snapshot.q_rows(query, &args, &options).unwrap() else {
            panic!("{query} comes as rows");
        };
        let set = rows.is_set();
        let mut items = Vec::new();
        while let Some(taken) = rows.next_with(|item| items.push(item.clone())) {
            taken.unwrap();
        }
        let got = if set {
            Edn::Set(items)
        } else {
            Edn::Vector(items)
        };
        assert_eq!(got, expected, "{query}, next_with");
        // Written as CBOR item by item (plain rows without their EDN): read back, the same.
        let Answer::Rows(mut rows) = snapshot.q_rows(query, &args, &options).unwrap() else {
            panic!("{query} comes as rows");
        };
        let mut items = Vec::new();
        loop {
            let mut bytes = Vec::new();
            match rows.write_next_cbor(&mut bytes) {
                Some(written) => written.unwrap(),
                None => break,
            }
            items.push(datalith::edn::cbor::read_cbor(&bytes).unwrap());
        }
        let got = if set {
            Edn::Set(items)
        } else {
            Edn::Vector(items)
        };
        assert_eq!(got, expected, "{query}, write_next_cbor");
        // The same through the function of many sources (which needs a database among them).
        if query.contains(":in [[") {
            continue;
        }
        let mut many = vec![Input::Db(snapshot.clone())];
        many.extend(args.iter().cloned().map(Input::Value));
        let (got, as_rows) = whole(datalith::q_rows(query, &many, &options).unwrap());
        assert!(as_rows, "{query} comes as rows");
        assert_eq!(got, expected, "{query}, datalith::q_rows");
    }
}

#[test]
fn other_shapes_come_whole_and_equal_to_q() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    for query in WHOLE {
        let expected = snapshot.q(query, &[]).unwrap();
        let (got, as_rows) = whole(
            snapshot
                .q_rows(query, &[], &QueryOptions::default())
                .unwrap(),
        );
        assert!(!as_rows, "{query} comes whole");
        assert_eq!(got, expected, "{query}");
    }
    // A plan asked for: the whole result, with its plan.
    let answer = snapshot
        .q_rows(
            "[:find ?e ?n :where [?e :name ?n]]",
            &[],
            &QueryOptions::default().explain(true),
        )
        .unwrap();
    match answer {
        Answer::Whole(outcome) => assert!(outcome.plan.is_some()),
        Answer::Rows(_) => panic!("an explained query comes whole"),
    }
}

#[test]
fn rows_keep_their_value_while_the_database_moves_on() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    let query = "[:find [(pull ?e [:name]) ...] :where [?e :id ?i] [(< ?i 3)]]";
    let expected = snapshot.q(query, &[]).unwrap();
    let Answer::Rows(rows) = snapshot
        .q_rows(query, &[], &QueryOptions::default())
        .unwrap()
    else {
        panic!("a collection of pulls comes as rows");
    };
    drop(snapshot);
    // Renamed after the rows were made: their pulls still read the value they came from.
    db.transact("[{:id 0 :name \"renamed\"} {:id 1 :name \"renamed\"} {:id 2 :name \"renamed\"}]")
        .unwrap();
    let items: Vec<Edn> = rows.map(|r| r.unwrap()).collect();
    assert_eq!(Edn::Vector(items), expected);
}

#[test]
fn a_query_error_comes_before_any_row() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    let e = snapshot
        .q_rows(
            "[:find ?e :where [?e :no-such ?x]]",
            &[],
            &QueryOptions::default(),
        )
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("no-such"), "{e}");
}
