//! Schema as data, as Datomic has it: every attribute and every ident is an entity;
//! `:db/valueType`, `:db/cardinality` and `:db/unique` are refs to ident entities
//! (`:db.type/string`, `:db.cardinality/one`, `:db.unique/identity`, ...) that every database
//! holds, and the built-in attributes are entities with their own properties. A database
//! made before (the legacy format: keyword-valued properties, no built-in entities) still
//! opens read-only and answers, and opened for writing is upgraded.

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::error::{self, Category};
use datalith::{Database, DbOptions, Error};

const SCHEMA: &str = r#"[
  {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity :db/doc "A person's name"}
  {:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/value}
  {:db/ident :person/score :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
  {:db/ident :person/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
  {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"#;

const PEOPLE: &str = r#"[
  {:db/id "ann" :person/name "Ann" :person/email "ann@x" :person/tags [:a :b]}
  {:db/id "bob" :person/name "Bob" :person/score 7.5 :person/email "bob@x" :person/friend "ann"}]"#;

fn open(dir: &std::path::Path, options: DbOptions) -> Database {
    Database::open(dir, options).unwrap()
}

fn people(options: DbOptions) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = people_in(dir.path(), options);
    (dir, db)
}

fn people_in(dir: &std::path::Path, options: DbOptions) -> Database {
    let db = open(dir, options);
    db.transact(SCHEMA).unwrap();
    db.transact(PEOPLE).unwrap();
    db
}

fn legacy() -> DbOptions {
    let mut o = DbOptions::default();
    o.legacy_format = true;
    o
}

/// `e` with every set and map in a canonical order (by printed text), so that answers compare
/// as Datomic's sets and maps do.
fn canon(e: Edn) -> Edn {
    let key = |e: &Edn| to_edn_string(e);
    match e {
        Edn::Set(items) => {
            let mut items: Vec<Edn> = items.into_iter().map(canon).collect();
            items.sort_by_key(key);
            Edn::Set(items)
        }
        Edn::Map(pairs) => {
            let mut pairs: Vec<(Edn, Edn)> = pairs
                .into_iter()
                .map(|(k, v)| (canon(k), canon(v)))
                .collect();
            pairs.sort_by_key(|(k, _)| key(k));
            Edn::Map(pairs)
        }
        Edn::Vector(items) => Edn::Vector(items.into_iter().map(canon).collect()),
        Edn::List(items) => Edn::List(items.into_iter().map(canon).collect()),
        other => other,
    }
}

fn q(db: &Database, query: &str) -> Edn {
    canon(
        db.db()
            .unwrap()
            .q(query, &[])
            .unwrap_or_else(|e| panic!("{query}: {e}")),
    )
}

fn edn(text: &str) -> Edn {
    canon(read_one(text).unwrap_or_else(|e| panic!("{text}: {}", e.message)))
}

/// A collection result (`[?x ...]`) as a sorted vector.
fn sorted(e: Edn) -> Edn {
    match e {
        Edn::Vector(mut items) => {
            items.sort_by_key(to_edn_string);
            Edn::Vector(items)
        }
        other => other,
    }
}

/// Queries about the schema, and their answers (Datomic's, for the same schema).
const SCHEMA_QUERIES: &[(&str, &str)] = &[
    // List the (user) schema: each attribute with its value type's ident.
    (
        r#"[:find ?ident ?type :where [?a :db/ident ?ident] [?a :db/valueType ?t] [?t :db/ident ?type]
            [(namespace ?ident) ?ns] [(= ?ns "person")]]"#,
        "#{[:person/name :db.type/string] [:person/email :db.type/string] [:person/score :db.type/double]
           [:person/tags :db.type/keyword] [:person/friend :db.type/ref]}",
    ),
    // The built-in attributes are listed too.
    (
        r#"[:find ?ident ?type ?card :where [?a :db/ident ?ident] [?a :db/valueType ?t] [?t :db/ident ?type]
            [?a :db/cardinality ?c] [?c :db/ident ?card] [(namespace ?ident) ?ns] [(= ?ns "db")]]"#,
        "#{[:db/ident :db.type/keyword :db.cardinality/one] [:db/valueType :db.type/ref :db.cardinality/one]
           [:db/cardinality :db.type/ref :db.cardinality/one] [:db/unique :db.type/ref :db.cardinality/one]
           [:db/isComponent :db.type/boolean :db.cardinality/one] [:db/doc :db.type/string :db.cardinality/one]
           [:db/txInstant :db.type/instant :db.cardinality/one] [:db/tupleAttrs :db.type/tuple :db.cardinality/one]
           [:db/tupleType :db.type/keyword :db.cardinality/one] [:db/tupleTypes :db.type/tuple :db.cardinality/one]
           [:db/noHistory :db.type/boolean :db.cardinality/one] [:db/fulltext :db.type/boolean :db.cardinality/one]
           [:db/index :db.type/boolean :db.cardinality/one] [:db/excise :db.type/ref :db.cardinality/one]
           [:db/ensure :db.type/ref :db.cardinality/many]}",
    ),
    // Ident entities exist in every database.
    ("[:find ?e . :where [?e :db/ident :db.type/string]]", "48"),
    ("[:find ?e . :where [?e :db/ident :db.cardinality/many]]", "61"),
    ("[:find ?e . :where [?e :db/ident :db.unique/identity]]", "62"),
    (
        r#"[:find (count ?t) . :where [?t :db/ident ?i] [(namespace ?i) ?ns] [(= ?ns "db.type")]]"#,
        "14",
    ),
    // The built-in attributes are entities with their ids, properties and docs.
    ("[:find ?a . :where [?a :db/ident :db/ident]]", "1"),
    ("[:find ?a . :where [?a :db/ident :db/txInstant]]", "7"),
    (
        "[:find ?t . :where [:db/ident :db/valueType ?v] [?v :db/ident ?t]]",
        ":db.type/keyword",
    ),
    (
        "[:find ?t . :where [:db/valueType :db/valueType ?v] [?v :db/ident ?t]]",
        ":db.type/ref",
    ),
    (
        "[:find ?u . :where [:db/ident :db/unique ?v] [?v :db/ident ?u]]",
        ":db.unique/identity",
    ),
    (
        "[:find ?d . :where [:db/ident :db/doc ?d]]",
        r#""Attribute used to uniquely name an entity.""#,
    ),
    // A property by its ident, in the value position of the ref attribute.
    (
        "[:find [?i ...] :where [?a :db/valueType :db.type/string] [?a :db/ident ?i]]",
        "[:db/doc :person/email :person/name]",
    ),
    (
        "[:find [?i ...] :where [?a :db/cardinality :db.cardinality/many] [?a :db/ident ?i]]",
        "[:db.entity/attrs :db.entity/preds :db.excise/attrs :db/ensure :person/friend :person/tags]",
    ),
    (
        r#"[:find ?i ?u :where [?a :db/unique ?ue] [?ue :db/ident ?u] [?a :db/ident ?i]]"#,
        "#{[:db/ident :db.unique/identity] [:person/name :db.unique/identity] [:person/email :db.unique/value]}",
    ),
    (
        "[:find ?d . :where [?a :db/ident :person/name] [?a :db/doc ?d]]",
        r#""A person's name""#,
    ),
    // get-some binds the attribute as its entity, which names its ident.
    (
        r#"[:find ?an ?v :where [?p :person/name "Bob"]
            [(get-some $ ?p :person/score :person/email) [?a ?v]] [?a :db/ident ?an]]"#,
        "#{[:person/score 7.5]}",
    ),
    (
        r#"[:find ?an ?v :where [?p :person/name "Ann"]
            [(get-some $ ?p :person/score :person/email) [?a ?v]] [?a :db/ident ?an]]"#,
        r#"#{[:person/email "ann@x"]}"#,
    ),
    // User data is untouched by all this.
    (
        r#"[:find ?n ?f :where [?p :person/friend ?x] [?p :person/name ?n] [?x :person/name ?f]]"#,
        r#"#{["Bob" "Ann"]}"#,
    ),
];

fn check_queries(db: &Database, table: &[(&str, &str)]) {
    for (query, want) in table {
        let got = sorted(q(db, query));
        assert_eq!(got, sorted(edn(want)), "{query}");
    }
}

#[test]
fn schema_queries_answer_as_datomic() {
    let (_dir, db) = people(DbOptions::default());
    check_queries(&db, SCHEMA_QUERIES);
}

/// Pulls of attribute and ident entities: (pattern, entity, answer).
const PULLS: &[(&str, &str, &str)] = &[
    (
        "[:db/ident {:db/valueType [:db/ident]} {:db/cardinality [:db/ident]}]",
        ":person/name",
        "{:db/ident :person/name, :db/valueType {:db/ident :db.type/string},
          :db/cardinality {:db/ident :db.cardinality/one}}",
    ),
    (
        "[:db/ident {:db/valueType [:db/ident]} {:db/cardinality [:db/ident]} {:db/unique [:db/ident]}]",
        ":person/email",
        "{:db/ident :person/email, :db/valueType {:db/ident :db.type/string},
          :db/cardinality {:db/ident :db.cardinality/one}, :db/unique {:db/ident :db.unique/value}}",
    ),
    (
        "[:db/ident {:db/cardinality [:db/ident]}]",
        ":person/tags",
        "{:db/ident :person/tags, :db/cardinality {:db/ident :db.cardinality/many}}",
    ),
    // A built-in attribute.
    (
        "[:db/ident {:db/valueType [:db/ident]} {:db/cardinality [:db/ident]} {:db/unique [:db/ident]}]",
        ":db/ident",
        "{:db/ident :db/ident, :db/valueType {:db/ident :db.type/keyword},
          :db/cardinality {:db/ident :db.cardinality/one}, :db/unique {:db/ident :db.unique/identity}}",
    ),
    (
        "[:db/ident :db/doc]",
        ":db/txInstant",
        r#"{:db/ident :db/txInstant, :db/doc "The instant of a transaction, recorded with every transaction."}"#,
    ),
    // A ref without a sub-pattern is the referenced entity's id, as for any ref.
    ("[:db/valueType]", ":person/name", "{:db/valueType {:db/id 48}}"),
    // Ident entities.
    ("[*]", ":db.type/string", "{:db/id 48, :db/ident :db.type/string}"),
    (
        "[:db/ident]",
        ":db.cardinality/many",
        "{:db/ident :db.cardinality/many}",
    ),
    // Reverse: the attributes of a value type.
    (
        "[{:db/_valueType [:db/ident]}]",
        ":db.type/double",
        "{:db/_valueType [{:db/ident :person/score}]}",
    ),
];

#[test]
fn attribute_and_ident_entities_pull_as_in_datomic() {
    let (_dir, db) = people(DbOptions::default());
    let snap = db.db().unwrap();
    for (pattern, eid, want) in PULLS {
        let eid = datalith::codec::Keyword::parse(eid);
        let got = snap
            .pull(pattern, eid.clone())
            .unwrap_or_else(|e| panic!("{pattern} {eid}: {e}"));
        assert_eq!(canon(got), edn(want), "{pattern} {eid}");
    }
}

#[test]
fn entities_navigate_to_idents() {
    use datalith::api::EntityValue;
    let (_dir, db) = people(DbOptions::default());
    let snap = db.db().unwrap();
    let name = snap
        .attr(&datalith::codec::Keyword::parse(":person/name"))
        .unwrap()
        .id;
    let entity = snap.entity(u64::from(name));
    let Some(EntityValue::Ref(t)) = entity.get(":db/valueType").unwrap() else {
        panic!("a value type entity")
    };
    assert_eq!(t.id, 48);
    assert!(matches!(t.get(":db/ident").unwrap(),
        Some(EntityValue::One(datalith::Value::Keyword(k))) if k.to_string() == ":db.type/string"));
    // And back: the attributes whose values are strings.
    let Some(EntityValue::Refs(holders)) = t.get(":db/_valueType").unwrap() else {
        panic!("attributes of type string")
    };
    let mut ids: Vec<u64> = holders.iter().map(|h| h.id).collect();
    ids.sort_unstable();
    let email = snap
        .attr(&datalith::codec::Keyword::parse(":person/email"))
        .unwrap()
        .id;
    assert_eq!(ids, [6, u64::from(name), u64::from(email)]);
}

#[test]
fn a_user_attribute_added_is_listed_and_altered_as_data() {
    let (_dir, db) = people(DbOptions::default());
    db.transact(
        "[{:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]",
    )
    .unwrap();
    let list = r#"[:find ?ident ?type ?card :where [?a :db/ident ?ident] [?a :db/valueType ?t]
                   [?t :db/ident ?type] [?a :db/cardinality ?c] [?c :db/ident ?card]
                   [(namespace ?ident) ?ns] [(= ?ns "person")]]"#;
    let before = q(&db, list);
    assert!(
        matches!(&before, Edn::Set(rows) if rows.contains(&edn("[:person/age :db.type/long :db.cardinality/one]"))),
        "{before:?}"
    );
    // Altered as Datomic alters it: a new cardinality and uniqueness, by ident.
    db.transact("[[:db/add :person/age :db/cardinality :db.cardinality/many] [:db/add :person/age :db/unique :db.unique/value]]")
        .unwrap();
    let after = q(&db, list);
    assert!(
        matches!(&after, Edn::Set(rows) if rows.contains(&edn("[:person/age :db.type/long :db.cardinality/many]"))),
        "{after:?}"
    );
    let snap = db.db().unwrap();
    let age = snap
        .attr(&datalith::codec::Keyword::parse(":person/age"))
        .unwrap();
    assert!(age.is_many());
    assert_eq!(age.unique, Some(datalith::store::Unique::Value));
    // Data goes in and out as before.
    db.transact(r#"[{:person/name "Ann" :person/age [30 31]}]"#)
        .unwrap();
    assert_eq!(
        sorted(q(
            &db,
            r#"[:find [?a ...] :where [?p :person/name "Ann"] [?p :person/age ?a]]"#
        )),
        edn("[30 31]")
    );
    // The uniqueness is dropped by retracting its datom (by ident, too).
    db.transact("[[:db/retract :person/age :db/unique :db.unique/value]]")
        .unwrap();
    let snap = db.db().unwrap();
    let age = snap
        .attr(&datalith::codec::Keyword::parse(":person/age"))
        .unwrap();
    assert_eq!(age.unique, None);
    assert!(db.db().unwrap().check().unwrap().is_ok());
}

fn transact(db: &Database, text: &str) -> Result<(), Error> {
    db.transact(text).map(|_| ()).map_err(Error::from)
}

/// Schema transactions that fail: (tx data, category, fragment of the message).
const BAD_SCHEMA: &[(&str, Category, &str)] = &[
    (
        "[{:db/ident :x/y :db/valueType :db.type/nonsense :db/cardinality :db.cardinality/one}]",
        error::NOT_AN_ENTITY,
        ":db.type/nonsense is not a :db/valueType value (one of :db.type/boolean,",
    ),
    (
        "[{:db/ident :x/y :db/valueType :db.type/string :db/cardinality :db.cardinality/few}]",
        error::NOT_AN_ENTITY,
        ":db.cardinality/few is not a :db/cardinality value (one of :db.cardinality/one, :db.cardinality/many)",
    ),
    (
        "[{:db/ident :x/y :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/maybe}]",
        error::NOT_AN_ENTITY,
        ":db.unique/maybe is not a :db/unique value",
    ),
    // An ident of another property's kind.
    (
        "[{:db/ident :x/y :db/valueType :db.cardinality/one :db/cardinality :db.cardinality/one}]",
        error::INVALID_INSTALL_ATTRIBUTE,
        ":db.cardinality/one is not a :db/valueType value",
    ),
    (
        "[[:db/add :person/name :db/valueType :db.unique/value]]",
        error::INVALID_INSTALL_ATTRIBUTE,
        ":db.unique/value is not a :db/valueType value",
    ),
    // An entity id that is no value type.
    (
        "[{:db/ident :x/y :db/valueType 5 :db/cardinality :db.cardinality/one}]",
        error::INVALID_ALTER_ATTRIBUTE,
        ":db/valueType cannot be :db/isComponent",
    ),
    (
        "[{:db/ident :x/y :db/valueType 61 :db/cardinality :db.cardinality/one}]",
        error::INVALID_ALTER_ATTRIBUTE,
        ":db/valueType cannot be :db.cardinality/many",
    ),
    // Built-in entities are fixed.
    (
        r#"[[:db/add :db.type/string :db/doc "text"]]"#,
        error::INVALID_ALTER_ATTRIBUTE,
        ":db.type/string",
    ),
    (
        "[[:db/retract :db/ident :db/valueType :db.type/keyword]]",
        error::INVALID_ALTER_ATTRIBUTE,
        "built-in entities",
    ),
    (
        "[[:db/retractEntity :db.cardinality/one]]",
        error::INVALID_ALTER_ATTRIBUTE,
        ":db.cardinality/one",
    ),
    // What Datomic never lets an installed attribute change.
    (
        "[[:db/add :person/score :db/valueType :db.type/long]]",
        error::INVALID_ALTER_ATTRIBUTE,
        ":db/valueType of an installed attribute can never be altered (from :db.type/double to :db.type/long)",
    ),
    (
        "[{:db/id :person/email :db/fulltext true}]",
        error::INVALID_ALTER_ATTRIBUTE,
        ":db/fulltext of an installed attribute can never be altered (from :disabled to true)",
    ),
    (
        "[[:db/retract :person/friend :db/valueType :db.type/ref]]",
        error::INVALID_ALTER_ATTRIBUTE,
        "attribute :person/friend: missing :db/valueType",
    ),
    (
        "[[:db/retractEntity :person/friend]]",
        error::INVALID_ALTER_ATTRIBUTE,
        "cannot remove an attribute that has datoms",
    ),
];

/// An installed attribute without datoms: what may change (Datomic's list: the ident,
/// cardinality, component, noHistory, index, unique, doc) and what never may (value type,
/// full-text, tuple properties, the attribute itself), whatever data it has.
#[test]
fn an_installed_attribute_changes_only_what_datomic_lets_change() {
    let (_dir, db) = people(DbOptions::default());
    transact(
        &db,
        "[{:db/ident :x/empty :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
          {:db/ident :x/pair :db/valueType :db.type/tuple :db/tupleTypes [:db.type/long :db.type/string]
           :db/cardinality :db.cardinality/one}]",
    )
    .unwrap();
    let refused: &[(&str, &str)] = &[
        (
            "[[:db/add :x/empty :db/valueType :db.type/long]]",
            ":db/valueType of an installed attribute can never be altered (from :db.type/string to :db.type/long)",
        ),
        (
            "[[:db/add :x/empty :db/fulltext true]]",
            ":db/fulltext of an installed attribute can never be altered (from :disabled to true)",
        ),
        (
            "[[:db/add :x/pair :db/tupleTypes [:db.type/long :db.type/long]]]",
            ":db/tupleTypes of an installed attribute can never be altered",
        ),
        (
            "[[:db/retract :x/empty :db/valueType :db.type/string]]",
            "attribute :x/empty: missing :db/valueType",
        ),
        (
            "[[:db/retractEntity :x/empty]]",
            "an installed attribute keeps its :db/valueType and :db/cardinality",
        ),
    ];
    for (text, fragment) in refused {
        let e = transact(&db, text).expect_err(text);
        assert_eq!(e.category(), error::INVALID_ALTER_ATTRIBUTE, "{text}: {e}");
        assert!(
            e.to_string().contains(fragment),
            "{text}: {e} lacks {fragment:?}"
        );
    }
    let allowed = [
        "[{:db/id :x/empty :db/cardinality :db.cardinality/many :db/noHistory true :db/index true}]",
        "[{:db/id :x/empty :db/unique :db.unique/value :db/doc \"now documented\"}]",
        "[{:db/id :x/empty :db/ident :x/renamed}]",
        "[[:db/add :x/renamed :db/valueType :db.type/string]]",
    ];
    for text in allowed {
        transact(&db, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    let snap = db.db().unwrap();
    let renamed = snap
        .attr(&datalith::codec::Keyword::parse(":x/renamed"))
        .unwrap();
    assert!(renamed.is_many() && renamed.no_history);
    assert_eq!(renamed.unique, Some(datalith::store::Unique::Value));
    assert!(snap.check().unwrap().is_ok());
}

#[test]
fn bad_schema_values_are_typed_errors_naming_the_value() {
    let (_dir, db) = people(DbOptions::default());
    for (text, want, fragment) in BAD_SCHEMA {
        let e = transact(&db, text).expect_err(text);
        let message = e.to_string();
        assert_eq!(e.category(), *want, "{text}: {message}");
        assert!(
            message.contains(fragment),
            "{text}: {message:?} lacks {fragment:?}"
        );
    }
    // Nothing was written, and the database is whole.
    assert!(db.db().unwrap().check().unwrap().is_ok());
    check_queries(&db, SCHEMA_QUERIES);
}

#[test]
fn check_stats_and_dump_know_the_built_ins() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), DbOptions::default());
    // A new database: the built-ins alone, consistent, and counted.
    let report = db.db().unwrap().check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let ident_stats = |db: &Database| db.db().unwrap().reader().stats(1).unwrap();
    // 22 attributes and 18 ident entities have an ident.
    assert_eq!(ident_stats(&db).datoms, 40);
    assert_eq!(ident_stats(&db).distinct, 40);
    db.transact(SCHEMA).unwrap();
    db.transact(PEOPLE).unwrap();
    assert_eq!(ident_stats(&db).datoms, 45);
    let report = db.db().unwrap().check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);

    // The dump holds the user schema with its value types by ident, and no built-in.
    let mut text = Vec::new();
    let summary = db.db().unwrap().dump(&mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(summary.attributes, 5);
    assert!(text.contains(":db/valueType :db.type/string"), "{text}");
    assert!(
        text.contains(":db/cardinality :db.cardinality/many"),
        "{text}"
    );
    assert!(text.contains(":db/unique :db.unique/value"), "{text}");
    assert!(!text.contains(":db/ident :db/"), "{text}");
    assert!(!text.contains(":db/ident :db.type/"), "{text}");
    // It reloads to the same answers.
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = open(dir2.path(), DbOptions::default());
    for form in datalith::edn::read_all(&text).unwrap() {
        db2.transact(datalith::TxData::from_edn(&form).unwrap())
            .unwrap();
    }
    check_queries(&db2, SCHEMA_QUERIES);
    assert!(db2.db().unwrap().check().unwrap().is_ok());

    // Opening again writes nothing: the built-ins are there.
    drop(db);
    let db = open(dir.path(), DbOptions::default());
    assert_eq!(ident_stats(&db).datoms, 45);
    let report = db.db().unwrap().check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

/// What a legacy database answers (read-only, before any upgrade): its user data, and its
/// schema properties as the keywords it holds.
const LEGACY_QUERIES: &[(&str, &str)] = &[
    (
        r#"[:find ?n ?f :where [?p :person/friend ?x] [?p :person/name ?n] [?x :person/name ?f]]"#,
        r#"#{["Bob" "Ann"]}"#,
    ),
    (
        r#"[:find ?ident ?type :where [?a :db/ident ?ident] [?a :db/valueType ?type]]"#,
        "#{[:person/name :db.type/string] [:person/email :db.type/string] [:person/score :db.type/double]
           [:person/tags :db.type/keyword] [:person/friend :db.type/ref]}",
    ),
    (
        "[:find [?i ...] :where [?a :db/valueType :db.type/string] [?a :db/ident ?i]]",
        "[:person/email :person/name]",
    ),
    (r#"[:find ?e . :where [?e :person/email "bob@x"] [?e :person/score 7.5]]"#, "1048577"),
];

#[test]
fn a_legacy_database_opens_read_only_and_is_upgraded_when_opened_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    {
        // Made as versions before the built-in entities wrote databases.
        let db = open(dir.path(), legacy());
        db.transact(SCHEMA).unwrap();
        db.transact(PEOPLE).unwrap();
        // Keyword-valued schema datoms asserted and retracted, in the log too.
        db.transact("[[:db/add :person/score :db/unique :db.unique/value]]")
            .unwrap();
        db.transact("[[:db/retract :person/score :db/unique :db.unique/value]]")
            .unwrap();
        check_queries(&db, LEGACY_QUERIES);
        assert!(db.db().unwrap().schema().is_legacy());
        assert!(db.db().unwrap().check().unwrap().is_ok());
    }
    {
        // Read-only: it loads as it is, and answers.
        let db = Database::open_read_only(dir.path(), DbOptions::default()).unwrap();
        let snap = db.db().unwrap();
        assert!(snap.schema().is_legacy());
        assert!(snap
            .schema()
            .by_ident(&datalith::codec::Keyword::parse(":person/name"))
            .is_some_and(|a| a.unique.is_some()));
        drop(snap);
        check_queries(&db, LEGACY_QUERIES);
        let report = db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
    }
    {
        // For writing: upgraded, then answers as a new database does.
        let db = open(dir.path(), DbOptions::default());
        assert!(!db.db().unwrap().schema().is_legacy());
        check_queries(&db, SCHEMA_QUERIES);
        // The check replays the log's keyword-valued schema entries as refs.
        let report = db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        db.transact(
            "[{:db/ident :thing/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
        assert_eq!(
            q(
                &db,
                "[:find ?t . :where [:thing/age :db/valueType ?v] [?v :db/ident ?t]]"
            ),
            edn(":db.type/long")
        );
    }
    // Read-only after the upgrade, and for writing again (nothing more to do).
    let db = Database::open_read_only(dir.path(), DbOptions::default()).unwrap();
    check_queries(&db, SCHEMA_QUERIES);
    assert!(db.db().unwrap().check().unwrap().is_ok());
    drop(db);
    let db = open(dir.path(), DbOptions::default());
    check_queries(&db, SCHEMA_QUERIES);
    assert!(db.db().unwrap().check().unwrap().is_ok());
}

fn q_on(db: &datalith::Db, query: &str) -> Edn {
    canon(db.q(query, &[]).unwrap_or_else(|e| panic!("{query}: {e}")))
}

#[test]
fn the_built_ins_belong_to_every_state_in_time_and_make_no_transaction() {
    use datalith::raw::TX_PARTITION_START;
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), DbOptions::default());
    // Written at genesis: no transaction, nothing in the log.
    let snap = db.db().unwrap();
    assert_eq!(snap.basis_t().unwrap(), TX_PARTITION_START - 1);
    assert_eq!(db.tx_range(None, None).unwrap().count(), 0);
    let schema = db.transact(SCHEMA).unwrap();
    assert_eq!(schema.tx, TX_PARTITION_START);
    let snap = db.db().unwrap();
    let string = "[:find ?e . :where [?e :db/ident :db.type/string]]";
    let name_type = "[:find ?t . :where [:person/name :db/valueType ?v] [?v :db/ident ?t]]";
    // As of the empty database (before every transaction), the built-ins are there.
    let before = snap.as_of(TX_PARTITION_START - 1).unwrap();
    assert_eq!(q_on(&before, string), edn("48"));
    assert_eq!(q_on(&before, name_type), Edn::Nil);
    assert_eq!(
        q_on(&snap.as_of(schema.tx).unwrap(), name_type),
        edn(":db.type/string")
    );
    // Since the empty database: only what transactions asserted.
    let since = snap.since(TX_PARTITION_START - 1).unwrap();
    assert_eq!(q_on(&since, string), Edn::Nil);
    // (the ident entity is not in it: a join through it finds nothing, as in Datomic)
    assert_eq!(q_on(&since, name_type), Edn::Nil);
    assert_eq!(
        q_on(
            &since,
            "[:find ?v . :where [:person/name :db/valueType ?v]]"
        ),
        edn("48")
    );
    // The history has their assertions, stamped before the first transaction.
    assert_eq!(
        q_on(
            &snap.history(),
            "[:find ?tx ?added :where [48 :db/ident :db.type/string ?tx ?added]]"
        ),
        edn(&format!("#{{[{} true]}}", TX_PARTITION_START - 1))
    );
    assert!(snap.check().unwrap().is_ok());
}

#[test]
fn a_legacy_upgrade_is_one_logged_transaction_and_time_tells_it() {
    let dir = tempfile::tempdir().unwrap();
    let made = {
        let db = people_in(dir.path(), legacy());
        db.db().unwrap().basis_t().unwrap()
    };
    let db = open(dir.path(), DbOptions::default());
    let snap = db.db().unwrap();
    let upgrade = snap.basis_t().unwrap();
    assert_eq!(upgrade, made + 1);
    // The log's last entry: the built-ins asserted, keywords retracted for refs, an instant.
    let entries: Vec<_> = db.tx_range(Some(upgrade), None).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let entry = entries[0].as_ref().unwrap();
    assert!(entry.instant.is_some());
    let has = |e: u64, a: u32, v: &datalith::Value, added: bool| {
        entry
            .datoms
            .iter()
            .any(|d| d.e == e && d.a == a && d.v == *v && d.added == added)
    };
    let name = u64::from(
        snap.attr(&datalith::codec::Keyword::parse(":person/name"))
            .unwrap()
            .id,
    );
    let kw = |t: &str| datalith::Value::Keyword(datalith::codec::Keyword::parse(t));
    assert!(has(name, 2, &kw(":db.type/string"), false));
    assert!(has(name, 2, &datalith::Value::Ref(48), true));
    assert!(has(48, 1, &kw(":db.type/string"), true));
    assert!(has(1, 2, &datalith::Value::Ref(49), true));
    // Before the upgrade the property held the keyword and no ident entity existed.
    let before = snap.as_of(made).unwrap();
    assert_eq!(
        q_on(
            &before,
            "[:find ?v . :where [:person/name :db/valueType ?v]]"
        ),
        edn(":db.type/string")
    );
    assert_eq!(
        q_on(
            &before,
            "[:find ?e . :where [?e :db/ident :db.type/string]]"
        ),
        Edn::Nil
    );
    assert_eq!(
        q_on(
            &snap,
            "[:find ?t . :where [:person/name :db/valueType ?v] [?v :db/ident ?t]]"
        ),
        edn(":db.type/string")
    );
    assert!(snap.check().unwrap().is_ok());
}

/// Datomic's rename: an attribute's or enum's old ident goes on resolving (in queries,
/// transactions, lookup refs and pull) while no entity holds it, also after the database is
/// opened again (read back from the history of `:db/ident`), and stops when an entity takes
/// the name.
#[test]
fn a_renamed_ident_still_resolves_until_another_entity_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = people_in(dir.path(), DbOptions::default());
        transact(&db, "[{:db/ident :mood/happy} {:db/ident :person/mood :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]").unwrap();
        transact(
            &db,
            "[[:db/add [:person/name \"Ann\"] :person/mood :mood/happy]]",
        )
        .unwrap();
        transact(&db, "[{:db/id :person/email :db/ident :person/mail} {:db/id :mood/happy :db/ident :mood/glad}]").unwrap();
        check_renamed(&db);
    }
    let db = open(dir.path(), DbOptions::default());
    check_renamed(&db);
    // A new attribute takes the old name: it names that one from then on.
    transact(&db, "[{:db/ident :person/email :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]").unwrap();
    transact(&db, "[[:db/add [:person/name \"Bob\"] :person/email 7]]").unwrap();
    assert_eq!(
        q(&db, "[:find ?v :where [?p :person/email ?v]]"),
        edn("#{[7]}")
    );
    assert_eq!(
        q(&db, "[:find ?v :where [?p :person/mail ?v]]"),
        edn("#{[\"ann@x\"] [\"bob@x\"]}")
    );
    drop(db);
    let db = open(dir.path(), DbOptions::default());
    assert_eq!(
        q(&db, "[:find ?v :where [?p :person/email ?v]]"),
        edn("#{[7]}")
    );
}

fn check_renamed(db: &Database) {
    let table = [
        // The old attribute ident in a query, a lookup ref and a transaction.
        (
            "[:find ?v :where [?p :person/email ?v]]",
            "#{[\"ann@x\"] [\"bob@x\"]}",
        ),
        (
            "[:find ?n :where [?p :person/mail \"bob@x\"] [?p :person/name ?n]]",
            "#{[\"Bob\"]}",
        ),
        ("[:find ?n :in $ ?p :where [?p :person/name ?n]]", "x"),
        // Answers name the attribute and the enum by their new idents.
        (
            "[:find ?i :where [?a :db/ident ?i] [(= ?i :person/mail)]]",
            "#{[:person/mail]}",
        ),
        (
            "[:find ?m :where [?p :person/mood ?e] [?e :db/ident ?m]]",
            "#{[:mood/glad]}",
        ),
        // The old enum ident as a value.
        (
            "[:find ?n :where [?p :person/mood :mood/happy] [?p :person/name ?n]]",
            "#{[\"Ann\"]}",
        ),
    ];
    for (query, want) in table {
        if want == "x" {
            let got = db
                .db()
                .unwrap()
                .q(query, &[read_one("[:person/email \"ann@x\"]").unwrap()]);
            assert_eq!(canon(got.unwrap()), edn("#{[\"Ann\"]}"), "{query}");
            continue;
        }
        assert_eq!(q(db, query), edn(want), "{query}");
    }
    transact(
        db,
        "[[:db/add [:person/email \"bob@x\"] :person/email \"bob@y\"]]",
    )
    .unwrap();
    assert_eq!(
        q(db, "[:find ?v :where [?p :person/mail ?v]]"),
        edn("#{[\"ann@x\"] [\"bob@y\"]}")
    );
    transact(
        db,
        "[[:db/add [:person/email \"bob@y\"] :person/email \"bob@x\"]]",
    )
    .unwrap();
}
