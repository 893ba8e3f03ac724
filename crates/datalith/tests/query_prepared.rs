//! A prepared query (`Db::prepare`) runs like its text on any snapshot, with its options.

use datalith::edn::{read_one, Edn};
use datalith::query::QueryOptions;
use datalith::{Database, DbOptions};

#[test]
fn a_prepared_query_answers_as_its_text_does_on_every_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
    db.transact(tx(
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
    ))
    .unwrap();
    let before = db.db().unwrap();
    db.transact(tx(r#"[{:name "Ann"} {:name "Bob"}]"#)).unwrap();
    let after = db.db().unwrap();
    let text = "[:find ?n :in $ ?min :where [_ :name ?n] [(>= ?n ?min)]]";
    let prepared = before.prepare(text).unwrap();
    // (snapshot, input, expected result)
    let cases = [
        (&before, "\"A\"", "#{}"),
        (&after, "\"A\"", r#"#{["Ann"] ["Bob"]}"#),
        (&after, "\"B\"", r#"#{["Bob"]}"#),
    ];
    for (snapshot, input, want) in cases {
        let inputs = [read_one(input).unwrap()];
        let got = snapshot
            .q_prepared(&prepared, &inputs, &QueryOptions::default())
            .unwrap()
            .result;
        assert_eq!(got, read_one(want).unwrap(), "{input}");
        assert_eq!(
            got,
            snapshot.q(text, &inputs).unwrap(),
            "as the text: {input}"
        );
    }
    // Its options apply: a plan when asked, the limits when set.
    let explained = after
        .q_prepared(
            &prepared,
            &[read_one("\"A\"").unwrap()],
            &QueryOptions::default().explain(true),
        )
        .unwrap();
    assert!(!explained.plan.expect("asked for").steps.is_empty());
    let e = after
        .q_prepared(
            &prepared,
            &[read_one("\"A\"").unwrap()],
            &QueryOptions::default().memory_limit(1),
        )
        .unwrap_err();
    assert_eq!(e.category().code, ":datalith.error/resource-exhausted");
    // A text that is no query is refused when prepared.
    assert!(after.prepare("[:find]").is_err());
    assert!(after.prepare("[:where [?e :name]]").is_err());
    let _: Edn = explained.result;
}
