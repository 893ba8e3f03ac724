//! Pull semantics, table by table: a pattern and an entity (id, ident or lookup ref) and the
//! EDN pull must give, each answer taken from the real Datomic on the same data.

use datalith::codec::{Keyword, Value};
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::pull::Eid;
use datalith::query::QueryError;
use datalith::{Database, DbOptions};

const SCHEMA: &str = r#"[
  {:db/ident :node/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :node/parent :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :node/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :node/links :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :node/label :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :node/score :db/valueType :db.type/float :db/cardinality :db.cardinality/one}
  {:db/ident :color/red}]"#;

/// A chain `n1 <- n2 <- n3 <- n4` by `:node/parent`, a cycle `a -> b -> c -> a` by
/// `:node/next` (with `:node/links` a->[b c], b->[a]), an entity that is its own next, and
/// a diamond x->[y z], y->[z] by `:node/links`.
const DATA: &str = r#"[
  {:db/id "1" :node/name "n1" :node/label "L"}
  {:db/id "2" :node/name "n2" :node/parent "1" :node/label "L"}
  {:db/id "3" :node/name "n3" :node/parent "2"}
  {:db/id "4" :node/name "n4" :node/parent "3" :node/score 1.5}
  {:db/id "a" :node/name "a" :node/next "b" :node/links ["b" "c"]}
  {:db/id "b" :node/name "b" :node/next "c" :node/links ["a"]}
  {:db/id "c" :node/name "c" :node/next "a"}
  {:db/id "s" :node/name "self" :node/next "s"}
  {:db/id "x" :node/name "x" :node/links ["y" "z"]}
  {:db/id "y" :node/name "y" :node/links ["z"]}
  {:db/id "z" :node/name "z" :node/label "Z"}]"#;

fn open() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let edn = |s: &str| datalith::TxData::from_edn(&read_one(s).unwrap()).unwrap();
    db.transact(edn(SCHEMA)).unwrap();
    db.transact(edn(DATA)).unwrap();
    (dir, db)
}

/// Maps with their entries sorted by key (Datomic's maps have no order).
fn normal(e: Edn) -> Edn {
    match e {
        Edn::Map(pairs) => {
            let mut pairs: Vec<(Edn, Edn)> =
                pairs.into_iter().map(|(k, v)| (k, normal(v))).collect();
            pairs.sort_by_key(|(k, _)| to_edn_string(k));
            Edn::Map(pairs)
        }
        Edn::Vector(items) => Edn::Vector(items.into_iter().map(normal).collect()),
        other => other,
    }
}

fn by_name(name: &str) -> Eid {
    Eid::Lookup(Keyword::parse(":node/name"), Value::string(name))
}

#[test]
fn recursion_limits_and_cycles_as_datomic() {
    let (_d, db) = open();
    let snap = db.db().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        // At the limit the attribute is left out (n2 has a child, n3).
        (
            "[:node/name {:node/_parent 1}]",
            "n1",
            r#"{:node/name "n1", :node/_parent [{:node/name "n2"}]}"#,
        ),
        (
            "[:node/name {:node/_parent 2}]",
            "n1",
            r#"{:node/name "n1", :node/_parent [{:node/name "n2", :node/_parent [{:node/name "n3"}]}]}"#,
        ),
        (
            "[:node/name {:node/_parent ...}]",
            "n1",
            r#"{:node/name "n1", :node/_parent [{:node/name "n2", :node/_parent [{:node/name "n3", :node/_parent [{:node/name "n4"}]}]}]}"#,
        ),
        (
            "[:node/name {:node/parent 1}]",
            "n4",
            r#"{:node/name "n4", :node/parent {:node/name "n3"}}"#,
        ),
        (
            "[:node/name {:node/parent 2}]",
            "n4",
            r#"{:node/name "n4", :node/parent {:node/name "n3", :node/parent {:node/name "n2"}}}"#,
        ),
        (
            "[:node/name {:node/parent ...}]",
            "n4",
            r#"{:node/name "n4", :node/parent {:node/name "n3", :node/parent {:node/name "n2", :node/parent {:node/name "n1"}}}}"#,
        ),
        // Other attributes stay at the limit.
        (
            "[:node/name :node/label {:node/_parent 1}]",
            "n1",
            r#"{:node/name "n1", :node/label "L", :node/_parent [{:node/name "n2", :node/label "L"}]}"#,
        ),
        (
            "[:node/name {:node/_parent [:node/name {:node/_parent 1}]}]",
            "n1",
            r#"{:node/name "n1", :node/_parent [{:node/name "n2", :node/_parent [{:node/name "n3"}]}]}"#,
        ),
        // A cycle: an entity recursion already entered on this path is pulled without the
        // recursive attributes; the root was not entered by recursion, so it is expanded
        // once more.
        (
            "[:node/name {:node/next ...}]",
            "a",
            r#"{:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b"}}}}}"#,
        ),
        (
            "[:node/name {:node/next 5}]",
            "a",
            r#"{:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b"}}}}}"#,
        ),
        (
            "[:node/name {:node/next ...}]",
            "self",
            r#"{:node/name "self", :node/next {:node/name "self", :node/next {:node/name "self"}}}"#,
        ),
        (
            "[:node/name {:node/next 1}]",
            "self",
            r#"{:node/name "self", :node/next {:node/name "self"}}"#,
        ),
        (
            "[:node/name {:node/links ...}]",
            "a",
            r#"{:node/name "a", :node/links [{:node/name "b", :node/links [{:node/name "a", :node/links [{:node/name "b"} {:node/name "c"}]}]} {:node/name "c"}]}"#,
        ),
        (
            "[:node/name {:node/links 1}]",
            "a",
            r#"{:node/name "a", :node/links [{:node/name "b"} {:node/name "c"}]}"#,
        ),
        (
            "[:node/name {:node/_next ...}]",
            "a",
            r#"{:node/name "a", :node/_next [{:node/name "c", :node/_next [{:node/name "b", :node/_next [{:node/name "a", :node/_next [{:node/name "c"}]}]}]}]}"#,
        ),
        (
            "[:node/name {:node/next ...} {:node/links 1}]",
            "a",
            r#"{:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b"}, :node/links [{:node/name "b"} {:node/name "c"}]}}, :node/links [{:node/name "a", :node/next {:node/name "b"}}]}, :node/links [{:node/name "b", :node/next {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b"}}}} {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c"}}}}]}"#,
        ),
        // Explicit nested patterns are not recursion: no cycle is cut.
        (
            "[:node/name {:node/next [:node/name {:node/next [:node/name]}]}]",
            "self",
            r#"{:node/name "self", :node/next {:node/name "self", :node/next {:node/name "self"}}}"#,
        ),
        // An entity reached twice, not on its own path, is pulled in full both times.
        (
            "[:node/name :node/label {:node/links ...}]",
            "x",
            r#"{:node/name "x", :node/links [{:node/name "y", :node/links [{:node/name "z", :node/label "Z"}]} {:node/name "z", :node/label "Z"}]}"#,
        ),
        // A nested pattern starts its own scope: the entity it is entered at counts as
        // entered by recursion.
        (
            "[:node/name {:node/links [:node/name {:node/next ...}]}]",
            "a",
            r#"{:node/name "a", :node/links [{:node/name "b", :node/next {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b"}}}} {:node/name "c", :node/next {:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c"}}}}]}"#,
        ),
        (
            "[:node/name {:node/next [:node/name {:node/next [:node/name {:node/links ...}]}]}]",
            "a",
            r#"{:node/name "a", :node/next {:node/name "b", :node/next {:node/name "c"}}}"#,
        ),
        (
            "[:node/name {:node/links [:node/name {:node/links ...}]}]",
            "a",
            r#"{:node/name "a", :node/links [{:node/name "b", :node/links [{:node/name "a", :node/links [{:node/name "b"} {:node/name "c"}]}]} {:node/name "c"}]}"#,
        ),
        // Two specs for one key: the first one stays.
        (
            "[[:node/name :as :x] [:node/label :as :x]]",
            "n1",
            r#"{:x "n1"}"#,
        ),
        (
            "[[:node/label :as :node/name] :node/name]",
            "n1",
            r#"{:node/name "L"}"#,
        ),
        (
            "[{:node/next [:node/name]} {:node/_next [:node/name]}]",
            "a",
            r#"{:node/next {:node/name "b"}, :node/_next [{:node/name "c"}]}"#,
        ),
        // Floats print as written.
        ("[:node/score]", "n4", "{:node/score 1.5}"),
    ];
    for (pattern, name, want) in cases {
        let got = snap.pull(pattern, by_name(name)).unwrap();
        assert_eq!(
            normal(got.clone()),
            normal(read_one(want).unwrap()),
            "{pattern} on {name}: got {}",
            to_edn_string(&got)
        );
    }
}

#[test]
fn recursion_limits_must_be_positive() {
    let (_d, db) = open();
    let snap = db.db().unwrap();
    for pattern in [
        "[:node/name {:node/parent 0}]",
        "[{:node/parent -1}]",
        "[{:node/parent :node/name}]",
    ] {
        let got = snap.pull(pattern, by_name("n4"));
        assert!(
            matches!(
                got,
                Err(QueryError::Pull(
                    datalith::pull::PullError::InvalidRecurLimit { .. }
                ))
            ),
            "{pattern}: {got:?}"
        );
    }
}

#[test]
fn entities_by_id_ident_or_lookup_ref() {
    let (_d, db) = open();
    let snap = db.db().unwrap();
    let n2 = snap.entid(by_name("n2")).unwrap().expect("n2 exists");
    let red = snap.entid(Keyword::parse(":color/red")).unwrap().unwrap();
    let kw = Keyword::parse;
    let cases: Vec<(&str, Eid, String)> = vec![
        (
            "[:node/name]",
            Eid::Id(n2),
            r#"{:node/name "n2"}"#.to_string(),
        ),
        (
            "[:node/name]",
            by_name("n2"),
            r#"{:node/name "n2"}"#.to_string(),
        ),
        ("[:db/id]", by_name("n2"), format!("{{:db/id {n2}}}")),
        (
            "[*]",
            Eid::Ident(kw(":color/red")),
            format!("{{:db/id {red}, :db/ident :color/red}}"),
        ),
        (
            "[:db/ident]",
            Eid::Ident(kw(":node/name")),
            "{:db/ident :node/name}".to_string(),
        ),
        // Names no entity: nil, as in Datomic.
        ("[:node/name]", by_name("zzz"), "nil".to_string()),
        (
            "[:node/name]",
            Eid::Ident(kw(":color/nope")),
            "nil".to_string(),
        ),
        (
            "[:node/name]",
            Eid::Lookup(kw(":node/name"), Value::Long(3)),
            "nil".to_string(),
        ),
        ("[:node/name]", Eid::Id(999_999), "nil".to_string()),
        (
            "[:db/id :node/name]",
            Eid::Id(999_999),
            "{:db/id 999999}".to_string(),
        ),
    ];
    for (pattern, eid, want) in cases {
        let got = snap.pull(pattern, eid.clone()).unwrap();
        assert_eq!(
            normal(got),
            normal(read_one(&want).unwrap()),
            "{pattern} {eid}"
        );
    }
    // Existing callers pass entity ids.
    assert_eq!(
        snap.pull_many("[:node/name]", &[n2, 999_999]).unwrap(),
        vec![read_one(r#"{:node/name "n2"}"#).unwrap(), Edn::Nil]
    );
    assert_eq!(
        snap.pull_many(
            "[:node/name]",
            &[by_name("n2"), Eid::Ident(kw(":color/red")), by_name("nope")]
        )
        .unwrap(),
        vec![
            read_one(r#"{:node/name "n2"}"#).unwrap(),
            Edn::Nil,
            Edn::Nil
        ]
    );
}

#[test]
fn lookup_refs_that_cannot_name_one_entity_are_errors() {
    let (_d, db) = open();
    let snap = db.db().unwrap();
    let kw = Keyword::parse;
    let not_unique = snap.pull(
        "[:node/name]",
        Eid::Lookup(kw(":node/label"), Value::string("L")),
    );
    match not_unique {
        Err(e @ QueryError::LookupRefNotUnique { .. }) => {
            assert!(e.to_string().contains(r#"[:node/label "L"]"#), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let unknown = snap.pull(
        "[:node/name]",
        Eid::Lookup(kw(":nope/x"), Value::string("n2")),
    );
    assert!(
        matches!(unknown, Err(QueryError::NotAnEntity { .. })),
        "{unknown:?}"
    );
    for text in ["-5", "1.5"] {
        let got = Eid::from_edn(&read_one(text).unwrap());
        assert!(
            matches!(got, Err(QueryError::NotAnEntity { .. })),
            "{text}: {got:?}"
        );
    }
    // Datomic's categories for what is no lookup ref.
    let shapes: &[(&str, &str)] = &[
        (r#"[:node/name "n2" 3]"#, ":db.error/invalid-lookup-ref"),
        ("[:node/name]", ":db.error/invalid-lookup-ref"),
        (r#"[1 "n2"]"#, ":db.error/not-an-attribute"),
        (r#"["node/name" "n2"]"#, ":db.error/not-a-keyword"),
    ];
    for (text, code) in shapes {
        let got = Eid::from_edn(&read_one(text).unwrap()).unwrap_err();
        assert_eq!(got.category().code, *code, "{text}: {got}");
    }
    // A string is read as an ident, as Datomic reads it: it needs its leading colon.
    let got = Eid::from_edn(&read_one(r#""n2""#).unwrap());
    assert!(
        matches!(got, Err(QueryError::NotAKeyword { .. })),
        "{got:?}"
    );
    assert_eq!(
        Eid::from_edn(&read_one(r#"":node/name""#).unwrap()).unwrap(),
        Eid::Ident(kw(":node/name"))
    );
    assert_eq!(
        Eid::from_edn(&read_one(r#"[:node/name "n2"]"#).unwrap()).unwrap(),
        Eid::Lookup(kw(":node/name"), Value::string("n2"))
    );
}

#[test]
fn an_attribute_specified_twice_is_an_error() {
    let (_d, db) = open();
    let snap = db.db().unwrap();
    // pattern, the attribute named in the error (Datomic's :pull/duplicate-attribute)
    let cases: &[(&str, &str)] = &[
        ("[:node/name [:node/name :as :n]]", ":node/name"),
        ("[:node/links {:node/links [:node/name]}]", ":node/links"),
        ("[:node/_next :node/_next]", ":node/_next"),
        (
            "[:node/name {:node/links [:node/name :node/name]}]",
            ":node/name",
        ),
        ("[:node/name [:node/name :limit 2]]", ":node/name"),
        ("[(default :node/nope 1) :node/nope]", ":node/nope"),
    ];
    for (pattern, attr) in cases {
        let e = snap.pull(pattern, by_name("a")).expect_err(pattern);
        assert_eq!(
            e.category(),
            datalith::error::PULL_DUPLICATE_ATTRIBUTE,
            "{pattern}: {e}"
        );
        assert_eq!(e.to_string(), format!("Multiple specifications for {attr}"));
    }
    // :db/id may repeat: the first spec of it counts.
    let id = snap.pull("[:db/id]", by_name("a")).unwrap();
    for pattern in ["[:db/id :db/id]", "[:db/id [:db/id :as :x]]", "[* :db/id]"] {
        let got = snap.pull(pattern, by_name("a")).unwrap();
        let Edn::Map(pairs) = &got else {
            panic!("{pattern}: {}", to_edn_string(&got))
        };
        let ids: Vec<_> = pairs
            .iter()
            .filter(|(k, _)| *k == Edn::kw(":db/id"))
            .collect();
        assert_eq!(ids.len(), 1, "{pattern}: {}", to_edn_string(&got));
        assert!(!pairs.iter().any(|(k, _)| *k == Edn::kw(":x")), "{pattern}");
        let Edn::Map(want) = &id else { unreachable!() };
        assert_eq!(ids[0], &want[0], "{pattern}");
    }
}
