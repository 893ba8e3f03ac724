//! `:db/fulltext` attributes and the `fulltext` query function: tables of query and expected
//! answer, the index following updates and retractions, the refusal of a change of an
//! installed attribute's `:db/fulltext` (Datomic's rule), and a property test of random transactions against a model (the
//! index holds exactly the current values, and `check` finds nothing wrong).

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::{Database, Db, DbOptions, TxData};
use proptest::prelude::*;

fn transact(db: &Database, edn: &str) -> u64 {
    db.transact(TxData::from_edn(&read_one(edn).unwrap()).unwrap())
        .unwrap()
        .tx
}

/// The answer as EDN, a collection's elements sorted (sets come in no order).
fn q(db: &Db, query: &str) -> String {
    match db.q(query, &[]) {
        Ok(Edn::Set(mut items)) | Ok(Edn::Vector(mut items)) => {
            items.sort_by_key(to_edn_string);
            to_edn_string(&Edn::Vector(items))
        }
        Ok(v) => to_edn_string(&v),
        Err(e) => format!("error: {} {e}", e.category()),
    }
}

const SCHEMA: &str = r#"[{:db/ident :doc/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}
    {:db/ident :doc/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many :db/fulltext true}
    {:db/ident :doc/plain :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
    {:db/ident :doc/stemmed :db/valueType :db.type/string :db/cardinality :db.cardinality/one
     :db/fulltext true :db.fulltext/stemmer :english :db.fulltext/stopWords :english}]"#;

fn fixture() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(&db, SCHEMA);
    transact(
        &db,
        r#"[{:db/id "a" :doc/title "The quick brown fox" :doc/tag ["animal" "fast runner"] :doc/plain "fox"}
            {:db/id "b" :doc/title "A red fox and a red hen" :doc/stemmed "Hikers were hiking"}
            {:db/id "c" :doc/title "Lazy dogs sleep" :doc/tag "animal"}]"#,
    );
    (dir, db)
}

#[test]
fn queries_answer_as_expected() {
    let (_dir, db) = fixture();
    let cases: &[(&str, &str)] = &[
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/title "fox") [[_ ?v]]]]"#,
            r#"["A red fox and a red hen" "The quick brown fox"]"#,
        ),
        (
            r#"[:find ?v . :where [(fulltext $ :doc/title "+fox +hen") [[_ ?v]]]]"#,
            r#""A red fox and a red hen""#,
        ),
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/title "fox -hen") [[_ ?v]]]]"#,
            r#"["The quick brown fox"]"#,
        ),
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/title "\"red hen\"") [[_ ?v]]]]"#,
            r#"["A red fox and a red hen"]"#,
        ),
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/title "la*") [[_ ?v]]]]"#,
            r#"["Lazy dogs sleep"]"#,
        ),
        // Datomic's stop words: "the" is not indexed.
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/title "the") [[_ ?v]]]]"#,
            "[]",
        ),
        // Card-many: one row per matching value.
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/tag "animal runner") [[_ ?v]]]]"#,
            r#"["animal" "fast runner"]"#,
        ),
        // Joined with other clauses like any relation.
        (
            r#"[:find ?p . :where [(fulltext $ :doc/title "quick") [[?e]]] [?e :doc/plain ?p]]"#,
            r#""fox""#,
        ),
        // Stemming and a language's stop words, per attribute.
        (
            r#"[:find ?v . :where [(fulltext $ :doc/stemmed "hike") [[_ ?v]]]]"#,
            r#""Hikers were hiking""#,
        ),
        // The best match scores 1.0.
        (
            r#"[:find (max ?s) . :where [(fulltext $ :doc/title "fox") [[_ _ _ ?s]]]]"#,
            "1.0",
        ),
        // Not full-text, or unknown: nothing, as Datomic.
        (
            r#"[:find [?v ...] :where [(fulltext $ :doc/plain "fox") [[_ ?v]]]]"#,
            "[]",
        ),
        (
            r#"[:find [?v ...] :where [(fulltext $ :no/such "fox") [[_ ?v]]]]"#,
            "[]",
        ),
        // The query from an input, and a bad one as a typed error.
        (
            r#"[:find ?v :where [(fulltext $ :doc/title "\"unclosed") [[_ ?v]]]]"#,
            "error: :datalith.error/invalid-search-query",
        ),
    ];
    let now = db.db().unwrap();
    for (query, want) in cases {
        let got = q(&now, query);
        assert!(got.starts_with(want), "{query}\n got {got}\nwant {want}");
    }
}

#[test]
fn the_transaction_position_is_the_asserting_transaction() {
    let (_dir, db) = fixture();
    let t = transact(&db, r#"[{:db/id "d" :doc/title "a fox in a box"}]"#);
    let got = q(
        &db.db().unwrap(),
        r#"[:find ?tx . :where [(fulltext $ :doc/title "box") [[_ _ ?tx]]]]"#,
    );
    assert_eq!(got, t.to_string());
}

#[test]
fn updates_retractions_and_schema_changes_are_followed() {
    let (_dir, db) = fixture();
    let find = |text: &str| {
        q(
            &db.db().unwrap(),
            &format!(r#"[:find [?v ...] :where [(fulltext $ :doc/title "{text}") [[_ ?v]]]]"#),
        )
    };
    transact(
        &db,
        r#"[[:db/add [:db/ident :doc/title] :db/doc "titles"]]"#,
    );
    let e: u64 = q(
        &db.db().unwrap(),
        r#"[:find ?e . :where [?e :doc/title "Lazy dogs sleep"]]"#,
    )
    .parse()
    .unwrap();
    transact(&db, &format!(r#"[[:db/add {e} :doc/title "Sleepy cats"]]"#));
    assert_eq!(find("dogs"), "[]");
    assert_eq!(find("cats"), r#"["Sleepy cats"]"#);
    transact(&db, &format!("[[:db/retractEntity {e}]]"));
    assert_eq!(find("cats"), "[]");
    // An installed attribute's :db/fulltext is never altered, as in Datomic: turned on,
    // turned off or retracted, the transaction is refused and nothing changes.
    for change in [
        r#"[[:db/add :doc/plain :db/fulltext true]]"#,
        r#"[{:db/id :doc/title :db/fulltext false}]"#,
        r#"[[:db/retract :doc/title :db/fulltext true]]"#,
    ] {
        let refused = db
            .transact(TxData::from_edn(&read_one(change).unwrap()).unwrap())
            .expect_err(change);
        assert_eq!(
            refused.category().to_string(),
            ":db.error/invalid-alter-attribute",
            "{change}: {refused}"
        );
        assert!(refused.to_string().contains(":db/fulltext"), "{refused}");
    }
    assert_eq!(
        q(
            &db.db().unwrap(),
            r#"[:find [?v ...] :where [(fulltext $ :doc/plain "fox") [[_ ?v]]]]"#
        ),
        "[]"
    );
    assert_eq!(find("cats"), "[]");
    transact(&db, r#"[{:doc/title "Cats again"}]"#);
    assert_eq!(find("cats"), r#"["Cats again"]"#);
    let report = db.db().unwrap().check().unwrap();
    assert!(report.is_ok(), "{report:?}");
}

#[test]
fn the_index_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        transact(&db, SCHEMA);
        transact(&db, r#"[{:doc/title "durable words"}]"#);
    }
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    assert_eq!(
        q(
            &db.db().unwrap(),
            r#"[:find ?v . :where [(fulltext $ :doc/title "durable") [[_ ?v]]]]"#
        ),
        r#""durable words""#
    );
}

const WORDS: &[&str] = &["ant", "bee", "cat", "dog", "eel", "fox"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random assertions and retractions of card-one and card-many values: every word query
    /// finds exactly the current values holding the word.
    #[test]
    fn the_index_holds_exactly_the_current_values(
        steps in prop::collection::vec(
            (0u64..6, any::<bool>(), prop::collection::vec(prop::sample::select(WORDS), 1..4), any::<bool>()),
            1..30,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        transact(&db, SCHEMA);
        let mut ids = Vec::new();
        for i in 0..6 {
            let r = db.transact(TxData::from_edn(&read_one(&format!(r#"[{{:db/id "x" :doc/plain "n{i}"}}]"#)).unwrap()).unwrap()).unwrap();
            ids.push(r.tempid("x").unwrap());
        }
        for (who, many, words, add) in &steps {
            let e = ids[*who as usize];
            let attr = if *many { ":doc/tag" } else { ":doc/title" };
            let text = words.join(" ");
            let op = if *add { ":db/add" } else { ":db/retract" };
            let _ = db.transact(TxData::from_edn(&read_one(&format!(r#"[[{op} {e} {attr} "{text}"]]"#)).unwrap()).unwrap());
        }
        let now = db.db().unwrap();
        for attr in [":doc/title", ":doc/tag"] {
            for w in WORDS {
                let got = q(&now, &format!(r#"[:find ?e ?v :where [(fulltext $ {attr} "{w}") [[?e ?v]]]]"#));
                let want = q(&now, &format!(
                    r#"[:find ?e ?v :where [?e {attr} ?v] [(clojure.string/includes? ?v "{w}")]]"#
                ));
                prop_assert_eq!(got, want, "{} {}", attr, w);
            }
        }
        let report = db.db().unwrap().check().unwrap();
        prop_assert!(report.is_ok(), "{:?}", report);
    }
}

#[test]
fn bulk_loads_and_excisions_keep_the_index_true() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(&db, SCHEMA);
    let title = datalith::Keyword::parse(":doc/title");
    let tag = datalith::Keyword::parse(":doc/tag");
    let e = 1u64 << 20;
    let load = vec![
        (e, title.clone(), datalith::Value::string("loaded red fox")),
        (e, tag.clone(), datalith::Value::string("fox tag")),
        (
            e + 1,
            title.clone(),
            datalith::Value::string("loaded blue whale"),
        ),
        // Given twice: one datom, one document.
        (e + 1, title, datalith::Value::string("loaded blue whale")),
    ];
    db.fill_db(&load).unwrap();
    let now = db.db().unwrap();
    let count = |db: &Db, text: &str| {
        q(
            db,
            &format!(r#"[:find (count ?v) . :where [(fulltext $ :doc/title "{text}") [[_ ?v]]]]"#),
        )
    };
    assert_eq!(count(&now, "loaded"), "2");
    assert!(now.check().unwrap().is_ok());
    // Excising the entity's title removes its document too.
    transact(
        &db,
        &format!("[{{:db/excise {e} :db.excise/attrs [:doc/title]}}]"),
    );
    let now = db.db().unwrap();
    assert_eq!(count(&now, "loaded"), "1");
    assert_eq!(
        q(
            &now,
            r#"[:find ?v . :where [(fulltext $ :doc/tag "fox") [[_ ?v]]]]"#
        ),
        r#""fox tag""#
    );
    let report = now.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
}

#[test]
fn a_schema_map_with_full_text_installs_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let schema = read_one(
        r#"{:doc/body {:db/valueType :db.type/string :db/fulltext true
                       :db.fulltext/stemmer :english :db.fulltext/stopWords :none :db/noHistory true}}"#,
    )
    .unwrap();
    db.install_schema_map(&schema).unwrap();
    let t = db.db().unwrap().basis_t().unwrap();
    db.install_schema_map(&schema).unwrap();
    assert_eq!(
        db.db().unwrap().basis_t().unwrap(),
        t,
        "nothing to transact the second time"
    );
}
