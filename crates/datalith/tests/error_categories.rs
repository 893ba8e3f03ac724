//! Errors as data: each failing input (tx data, query, or an environment failure) and the
//! category it must carry (Datomic's code where Datomic has one, checked against its peer),
//! its anomaly, a fragment of its message, and no Rust `Debug` text in the message.

use std::sync::atomic::AtomicBool;

use datalith::edn::{read_one, Edn};
use datalith::error::{self, Anomaly, Blame, Category};
use datalith::{Database, DbOptions, Error};

const SCHEMA: &str = r#"[
  {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :person/handle :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/value}
  {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :person/boss :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :person/pair :db/valueType :db.type/tuple :db/cardinality :db.cardinality/one
   :db/tupleTypes [:db.type/keyword :db.type/string]}]"#;

const PEOPLE: &str = r#"[
  {:person/name "alice" :person/email "a@x" :person/age 30}
  {:person/name "bob" :person/handle "b" :person/email "b@x" :person/age 40}]"#;

fn transact(db: &Database, text: &str) -> Result<(), Error> {
    let data = datalith::TxData::from_edn(&read_one(text)?)?;
    db.transact(data)?;
    Ok(())
}

fn people() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(&db, SCHEMA).unwrap();
    transact(&db, PEOPLE).unwrap();
    (dir, db)
}

/// Text that gives a Rust structure away: `Debug` output where EDN belongs.
const DEBUG_MARKS: &[&str] = &[
    "Var(",
    "Many([",
    "Some(",
    "None",
    "EntityMap",
    "Keyword {",
    "Pattern(",
    "Pred {",
    "Const(",
    "Attr(",
    "Named(",
    "Temp(",
    "Lookup(",
    "Value(",
    "#ref",
];

fn check(what: &str, e: &Error, want: Category, fragment: &str) {
    let message = e.to_string();
    assert_eq!(
        e.category(),
        want,
        "{what}: category of {message:?} is {}",
        e.category()
    );
    assert!(
        message.contains(fragment),
        "{what}: {message:?} lacks {fragment:?}"
    );
    for mark in DEBUG_MARKS {
        assert!(
            !message.contains(mark),
            "{what}: {message:?} shows Rust Debug text {mark:?}"
        );
    }
    // The EDN map reads back with the category's keys.
    let map = read_one(&e.to_edn_string()).unwrap_or_else(|r| panic!("{what}: {}", r.message));
    let Edn::Map(pairs) = map else {
        panic!("{what}: not a map")
    };
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == Edn::kw(k))
            .map(|p| &p.1)
    };
    assert_eq!(get(":db/error"), Some(&Edn::kw(want.code)), "{what}");
    assert_eq!(
        get(":cognitect.anomalies/category"),
        Some(&Edn::kw(want.anomaly.code())),
        "{what}"
    );
    assert_eq!(get(":message"), Some(&Edn::String(message)), "{what}");
}

#[test]
fn tx_errors_carry_datomic_categories() {
    let (_dir, db) = people();
    // tx data, category, message fragment
    let cases: &[(&str, Category, &str)] = &[
        (
            r#"[[:db/add "n" :person/email "a@x"]]"#,
            error::UNIQUE_CONFLICT,
            r#":person/email "a@x""#,
        ),
        (
            r#"[[:db/add "t" :person/name "alice"] [:db/add "t" :person/handle "b"]]"#,
            error::UNIQUE_CONFLICT,
            "",
        ),
        (
            r#"[[:db/cas [:person/name "alice"] :person/age 31 32]]"#,
            error::CAS_FAILED,
            "expected 31, found 30",
        ),
        (
            r#"[{:db/id "a" :person/email "same@x"} {:db/id "b" :person/email "same@x"}]"#,
            error::DATOMS_CONFLICT,
            r#":person/email "same@x" asserted on both"#,
        ),
        (
            r#"[{:db/id "a" :person/name "zed" :person/age nil}]"#,
            error::NIL_VALUE,
            "nil is not a value",
        ),
        (
            r#"[[:db/cas [:person/name "alice"] :person/friend 1 2]]"#,
            error::INVALID_CAS_MANY,
            ":person/friend is cardinality-many",
        ),
        (
            r#"[[:db/cas [:person/name "alice"] :person/age nil 32]]"#,
            error::CAS_FAILED,
            "expected nil, found 30",
        ),
        (
            "[[:db/add :nope :person/age 1]]",
            error::NOT_AN_ENTITY,
            ":nope",
        ),
        (
            r#"[[:db/add "x" :nope/attr 1]]"#,
            error::NOT_AN_ENTITY,
            ":nope/attr",
        ),
        (
            r#"[[:db/add [:person/name "zed"] :person/age 1]]"#,
            error::NOT_AN_ENTITY,
            r#"[:person/name "zed"]"#,
        ),
        (
            "[[:db/add [:person/age 30] :person/age 1]]",
            error::LOOKUP_REF_ATTR_NOT_UNIQUE,
            ":person/age",
        ),
        (
            r#"[{:db/id "x" :person/age "thirty"}]"#,
            error::WRONG_TYPE_FOR_ATTRIBUTE,
            r#"{:db/id "x", :person/age "thirty"}"#,
        ),
        (
            r#"[[:db/add "x" :person/age 1.5]]"#,
            error::WRONG_TYPE_FOR_ATTRIBUTE,
            r#"[:db/add "x" :person/age 1.5]"#,
        ),
        (
            r#"[{:person/name "carol" :person/age [1 2]}]"#,
            error::WRONG_TYPE_FOR_ATTRIBUTE,
            r#"{:person/name "carol", :person/age [1 2]}"#,
        ),
        (
            r#"[[:db/add [:person/name "alice"] :person/age 1]
                [:db/add [:person/name "alice"] :person/age 2]]"#,
            error::DATOMS_CONFLICT,
            "both 1 and 2",
        ),
        (
            "[{:db/id :person/age :db/valueType :db.type/string}]",
            error::INVALID_ALTER_ATTRIBUTE,
            ":person/age",
        ),
        ("[[:my/fn 1 2]]", error::NOT_A_DATA_FUNCTION, ":my/fn"),
        (
            "[{:db/excise :db/cardinality}]",
            error::INVALID_EXCISION,
            "excision of :db/cardinality refused: a built-in entity",
        ),
        (
            "[{:db/excise :person/age :db.excise/attrs [:db/valueType]}]",
            error::INVALID_EXCISION,
            "its :db/valueType datoms cannot be excised",
        ),
        (
            r#"[{:person/name "carol" :person/_boss [[:person/name "alice"] [:person/name "bob"]]}]"#,
            error::NOT_AN_ATTRIBUTE,
            r#"[:person/name "alice"] is not an attribute"#,
        ),
        (
            r#"[{:person/name "carol" :person/_boss ["t1" "t2"]}]"#,
            error::NOT_A_KEYWORD,
            r#""t1" is not a keyword"#,
        ),
        (
            r#"[{:person/name "carol" :person/_boss [[:person/name "alice"]]}]"#,
            error::INVALID_LOOKUP_REF,
            r#"[[:person/name "alice"]]"#,
        ),
        (
            r#"[{:person/name "carol" :person/_boss {:person/name "dan"}}]"#,
            error::NOT_AN_ENTITY,
            r#"{:person/name "dan"}"#,
        ),
        (
            r#"[[:db/add [:person/name "bob"] :person/boss [:person/name "alice"]]
                [:db/cas [:person/name "bob"] :person/boss [:person/name "alice"] [:person/name "bob"]]]"#,
            error::CAS_FAILED,
            r#"expected [:person/name "alice"]"#,
        ),
        (
            "[{:db/ident :thing/x :db/valueType :db.type/string}]",
            error::INVALID_INSTALL_ATTRIBUTE,
            ":thing/x: :db/cardinality is missing",
        ),
        (
            "[{:db/ident :thing/x :db/cardinality :db.cardinality/one}]",
            error::INVALID_INSTALL_ATTRIBUTE,
            ":thing/x: :db/valueType is missing",
        ),
        (
            "[{:db/ident :thing/x :db/valueType :db.type/nonsense :db/cardinality :db.cardinality/one}]",
            error::NOT_AN_ENTITY,
            ":db.type/nonsense is not a :db/valueType value",
        ),
        (
            r#"[{:person/name "carol" :person/pair [:a]}]"#,
            error::INVALID_TUPLE_VALUE,
            "[:a] for :person/pair: 1 elements where :db/tupleTypes has 2",
        ),
        (
            r#"[{:person/name "carol" :person/pair ["b" :a]}]"#,
            error::INVALID_TUPLE_VALUE,
            r#"element 1 is "b", not a :db.type/keyword"#,
        ),
        (
            r#"[[:db/cas "t" :person/age nil 3]]"#,
            error::NOT_A_KEYWORD,
            r#":db/cas reads an existing entity, and the tempid "t" names none"#,
        ),
        (
            r#"[[:db/retract "t" :person/age]]"#,
            error::NOT_A_KEYWORD,
            r#":db/retract reads an existing entity"#,
        ),
    ];
    for (text, want, fragment) in cases {
        let e = transact(&db, text).expect_err(text);
        check(text, &e, *want, fragment);
    }
    // Text handed to `transact` itself: the reader's error, as a transaction error.
    let text = r#"[{:person/name "carol""#;
    let e = Error::from(db.transact(text).expect_err(text));
    check(text, &e, error::INVALID_EDN, "tx data is not EDN: 1:");
}

#[test]
fn query_errors_carry_categories() {
    let (_dir, db) = people();
    let snapshot = db.db().unwrap();
    // query, inputs, category, message fragment
    let cases: &[(&str, &[&str], Category, &str)] = &[
        (
            "[:find ?x :where [?e :person/age ?a] [(> ?x 1)]]",
            &[],
            error::INSUFFICIENT_BINDING,
            "[?x] not bound in clause: [(> ?x 1)]",
        ),
        (
            "[:find ?x :where [?e :person/age]]",
            &[],
            error::UNBOUND_QUERY_VARIABLES,
            "?x",
        ),
        (
            "[:find ?e :where [?e :person/age] (or-join [] [_ :person/age 1])]",
            &[],
            error::OR_BINDING_EMPTY,
            "(or-join [] [_ :person/age 1])",
        ),
        (
            "[:find ?e :where [?e :person/age ?a] [(frobnicate ?a)]]",
            &[],
            error::UNKNOWN_FUNCTION,
            "frobnicate",
        ),
        (
            "[:find (frob ?e) :where [?e :person/age]]",
            &[],
            error::INVALID_AGGREGATE,
            "frob",
        ),
        (
            "[:find ?x :where [?e :person/name ?n] [(+ ?n 1) ?x]]",
            &[],
            error::INVALID_ARGUMENTS,
            "\"",
        ),
        (
            "[:find (pull ?e [:person/name [:person/name :as :n]]) :where [?e :person/age]]",
            &[],
            error::PULL_DUPLICATE_ATTRIBUTE,
            "Multiple specifications for :person/name",
        ),
        (
            "[:find ?e :where [?e :person/age ?a] (]",
            &[],
            error::INVALID_QUERY,
            "",
        ),
        (
            "[:find ?x :in $ ?x :where [?e :person/age ?x]]",
            &[],
            error::TOO_FEW_INPUTS,
            "",
        ),
        (
            "[:find ?x :in $ :where [$a ?e :person/age ?x]]",
            &[],
            error::INVALID_DATA_SOURCE,
            "$a",
        ),
    ];
    for (query, inputs, want, fragment) in cases {
        let inputs: Vec<Edn> = inputs.iter().map(|i| read_one(i).unwrap()).collect();
        let e: Error = snapshot.q(query, &inputs).expect_err(query).into();
        check(query, &e, *want, fragment);
    }
    let cancel = AtomicBool::new(true);
    let e: Error = snapshot
        .q_cancellable("[:find ?e :where [?e :person/age]]", &[], &cancel)
        .expect_err("cancelled")
        .into();
    check("cancelled", &e, error::CANCELLED, "cancelled");
    assert_eq!(e.category().anomaly, Anomaly::Interrupted);
}

#[test]
fn environment_and_corruption_stay_apart_from_user_errors() {
    use datalith::kv::KvError;
    use datalith::store::StoreError;
    use std::io::{Error as IoError, ErrorKind};
    let io = |kind| Error::from(KvError::Io(IoError::from(kind)));
    // error, category, blame
    let cases: Vec<(Error, Category, Blame)> = vec![
        (
            io(ErrorKind::PermissionDenied),
            error::IO_FORBIDDEN,
            Blame::Environment,
        ),
        (
            io(ErrorKind::StorageFull),
            error::IO_UNAVAILABLE,
            Blame::Environment,
        ),
        (
            io(ErrorKind::NotFound),
            error::IO_NOT_FOUND,
            Blame::Environment,
        ),
        (io(ErrorKind::Other), error::IO, Blame::Environment),
        (
            KvError::MapLimit { max: 1 << 30 }.into(),
            error::DATABASE_FULL,
            Blame::Environment,
        ),
        (
            KvError::Poisoned {
                cause: "fsync".into(),
            }
            .into(),
            error::POISONED,
            Blame::Environment,
        ),
        (
            datalith::codec::decode(&[0xFF])
                .expect_err("no such tag")
                .into(),
            error::CORRUPT,
            Blame::Corruption,
        ),
        (
            StoreError::from(datalith::codec::decode(&[0x02, 1]).expect_err("short")).into(),
            error::CORRUPT,
            Blame::Corruption,
        ),
        (
            KvError::KeyTooLong {
                table: "t".into(),
                len: 600,
                max: 511,
            }
            .into(),
            error::LIMIT_EXCEEDED,
            Blame::Caller,
        ),
    ];
    for (e, want, blame) in cases {
        assert_eq!(e.category(), want, "{e}");
        assert_eq!(e.category().blame, blame, "{e}");
        assert_eq!(e.category().is_user_error(), blame == Blame::Caller, "{e}");
    }
    // A file that is not a database directory fails as the environment's, not the caller's.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a database").unwrap();
    let e: Error = Database::open(&file, DbOptions::default())
        .expect_err("a file is no database")
        .into();
    assert_ne!(e.category().blame, Blame::Caller, "{e}: {}", e.category());
}

#[test]
fn fields_carry_the_values_not_their_text() {
    let (_dir, db) = people();
    let e = transact(
        &db,
        r#"[[:db/cas [:person/name "alice"] :person/age 31 32]]"#,
    )
    .unwrap_err();
    let Edn::Map(pairs) = e.to_edn() else {
        panic!("not a map")
    };
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == Edn::kw(k))
            .map(|p| &p.1)
    };
    assert_eq!(get(":a"), Some(&Edn::kw(":person/age")));
    assert_eq!(get(":v-old"), Some(&Edn::Long(31)));
    assert_eq!(get(":v"), Some(&Edn::Long(30)));
    let json = e.to_json();
    assert!(
        json.contains(r#"":db/error":":db.error/cas-failed""#),
        "{json}"
    );
}

#[test]
fn edn_that_does_not_fit_a_rust_type_is_an_invalid_argument() {
    // EDN read as `Vec<(String, i64)>`, message fragment
    let cases: &[(&str, &str)] = &[(
        r#"#{["Ann" "thirty"]}"#,
        "invalid type: string \"thirty\", expected i64",
    )];
    for (text, fragment) in cases {
        let edn = read_one(text).unwrap();
        let got = datalith::edn::from_edn::<Vec<(String, i64)>>(&edn);
        let e = Error::from(got.expect_err(text));
        check(text, &e, error::INVALID_ARGUMENT, fragment);
    }
}

#[test]
fn a_rust_value_with_no_edn_form_is_an_invalid_argument() {
    // a value `to_edn` refuses, message fragment
    let cases: &[(u64, &str)] = &[(u64::MAX, "18446744073709551615 does not fit in a long")];
    for (value, fragment) in cases {
        let e = Error::from(datalith::edn::to_edn(value).expect_err(fragment));
        check(fragment, &e, error::INVALID_ARGUMENT, fragment);
    }
}
