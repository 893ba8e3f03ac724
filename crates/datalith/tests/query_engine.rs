//! Queries, table by table: (query, inputs, expected result) on a small database.

#[path = "common/open.rs"]
mod open;
#[path = "common/unordered.rs"]
mod unordered;
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::Database;
use open::open_with;
use unordered::assert_same;

fn edn(s: &str) -> Edn {
    read_one(s).unwrap()
}

fn sample() -> (tempfile::TempDir, Database) {
    open_with(&[
        r#"[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
            {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
            {:db/ident :email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
            {:db/ident :parent :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
            {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}]"#,
        r#"[{:db/id "ann" :name "Ann" :age 30 :email "ann@x" :tag [:a :b] :friend ["bob" "cid"]}
            {:db/id "bob" :name "Bob" :age 25 :email "bob@x" :tag :a :parent "ann"}
            {:db/id "cid" :name "Cid" :age 30 :email "cid@x" :parent "bob"}
            {:db/id "dan" :name "Dan" :age 41 :email "dan@x" :parent "cid"}]"#,
    ])
}

fn check(db: &Database, cases: &[(&str, &[&str], &str)]) {
    let snap = db.db().unwrap();
    for (q, inputs, want) in cases {
        let inputs: Vec<Edn> = inputs.iter().map(|i| edn(i)).collect();
        let got = snap.q(q, &inputs).unwrap_or_else(|e| panic!("{q}: {e}"));
        let want = edn(want);
        assert_same(q, &got, &want);
    }
}

#[test]
fn patterns_predicates_and_shapes() {
    let (_d, db) = sample();
    check(
        &db,
        &[
            (
                r#"[:find ?n :where [?e :age 30] [?e :name ?n]]"#,
                &[],
                r#"#{["Ann"] ["Cid"]}"#,
            ),
            (
                r#"[:find [?n ...] :where [?e :name ?n] [?e :age ?a] [(> ?a 26)] [(< ?a 41)]]"#,
                &[],
                r#"["Ann" "Cid"]"#,
            ),
            // Stars of cardinality-one attributes on bound entities: an entity lacking one
            // attribute (Ann has no :parent) drops out; a many attribute (:tag) multiplies.
            (
                r#"[:find ?n ?p ?a :where [?e :age ?a] [?e :name ?n] [?e :parent ?x] [?x :name ?p]]"#,
                &[],
                r#"#{["Bob" "Ann" 25] ["Cid" "Bob" 30] ["Dan" "Cid" 41]}"#,
            ),
            (
                r#"[:find ?n ?m ?a :where [?e :age 30] [?e :email ?m] [?e :name ?n] [?e :age ?a]]"#,
                &[],
                r#"#{["Ann" "ann@x" 30] ["Cid" "cid@x" 30]}"#,
            ),
            (
                r#"[:find ?n ?t :where [?e :email ?m] [?e :name ?n] [?e :tag ?t]]"#,
                &[],
                r#"#{["Ann" :a] ["Ann" :b] ["Bob" :a]}"#,
            ),
            (
                r#"[:find ?n . :where [?e :email "bob@x"] [?e :name ?n]]"#,
                &[],
                r#""Bob""#,
            ),
            (
                r#"[:find [?n ?a] :where [?e :email "dan@x"] [?e :name ?n] [?e :age ?a]]"#,
                &[],
                r#"["Dan" 41]"#,
            ),
            (
                r#"[:find ?n :in $ ?min :where [?e :age ?a] [(>= ?a ?min)] [?e :name ?n]]"#,
                &["31"],
                r#"#{["Dan"]}"#,
            ),
            (
                r#"[:find ?n :in $ [?a ...] :where [?e :age ?a] [?e :name ?n]]"#,
                &["[25 41]"],
                r#"#{["Bob"] ["Dan"]}"#,
            ),
            (
                r#"[:find ?n :in $ [[?a ?t]] :where [?e :age ?a] [?e :tag ?t] [?e :name ?n]]"#,
                &["[[30 :b] [25 :b]]"],
                r#"#{["Ann"]}"#,
            ),
            (
                r#"[:find ?fn :where [?e :name "Ann"] [?e :friend ?f] [?f :name ?fn]]"#,
                &[],
                r#"#{["Bob"] ["Cid"]}"#,
            ),
            (
                r#"[:find ?n :where [?c :parent [:email "ann@x"]] [?c :name ?n]]"#,
                &[],
                r#"#{["Bob"]}"#,
            ),
            (
                r#"[:find ?n :where [?e :name ?n] (not [?e :parent _])]"#,
                &[],
                r#"#{["Ann"]}"#,
            ),
            (
                r#"[:find ?n :where [?e :name ?n] (or [?e :age 25] [?e :age 41])]"#,
                &[],
                r#"#{["Bob"] ["Dan"]}"#,
            ),
            (
                r#"[:find ?n :where [?e :name ?n] (or-join [?e] [?e :tag :b] (and [?e :age ?a] [(> ?a 40)]))]"#,
                &[],
                r#"#{["Ann"] ["Dan"]}"#,
            ),
            (
                r#"[:find ?n :where [?e :name ?n] (not-join [?e] [?c :parent ?e])]"#,
                &[],
                r#"#{["Dan"]}"#,
            ),
            (
                r#"[:find ?n ?up :where [?e :name ?n] [?e :age ?a] [(+ ?a 1) ?up] [(= ?n "Bob")]]"#,
                &[],
                r#"#{["Bob" 26]}"#,
            ),
            (
                r#"[:find ?n ?p :where [?e :name ?n] [(get-else $ ?e :parent 0) ?p] [(= ?p 0)]]"#,
                &[],
                r#"#{["Ann" 0]}"#,
            ),
            (
                r#"[:find ?n :where [?e :name ?n] [(missing? $ ?e :tag)] [(str ?n "!") ?s] [(clojure.string/starts-with? ?s "C")]]"#,
                &[],
                r#"#{["Cid"]}"#,
            ),
            (r#"[:find ?e :where [?e :name "Nobody"]]"#, &[], r#"#{}"#),
            (
                r#"{:find [?n] :where [[?e :age 41] [?e :name ?n]]}"#,
                &[],
                r#"#{["Dan"]}"#,
            ),
            (
                r#"[:find ?n :keys name :where [?e :age 25] [?e :name ?n]]"#,
                &[],
                r#"#{{:name "Bob"}}"#,
            ),
            (
                r#"[:find ?n ?a :where [?e :name ?n] [?e :age ?a] :order-by [?a :desc ?n :desc] :limit 2]"#,
                &[],
                r#"[["Dan" 41] ["Cid" 30]]"#,
            ),
        ],
    );
}

#[test]
fn aggregates() {
    let (_d, db) = sample();
    check(
        &db,
        &[
            (r#"[:find (count ?e) . :where [?e :name]]"#, &[], "4"),
            (
                r#"[:find ?a (count ?e) :where [?e :age ?a]]"#,
                &[],
                r#"#{[25 1] [30 2] [41 1]}"#,
            ),
            (
                r#"[:find (sum ?a) . :with ?e :where [?e :age ?a]]"#,
                &[],
                "126",
            ),
            (r#"[:find (sum ?a) . :where [?e :age ?a]]"#, &[], "96"),
            (
                r#"[:find (min ?a) (max ?a) :where [_ :age ?a]]"#,
                &[],
                r#"#{[25 41]}"#,
            ),
            (
                r#"[:find (count-distinct ?a) . :where [_ :age ?a]]"#,
                &[],
                "3",
            ),
            (r#"[:find (max 2 ?a) . :where [_ :age ?a]]"#, &[], "[41 30]"),
            (
                // Datomic: the median of longs is a long (the mean of the middle two, as a
                // quotient).
                r#"[:find (median ?a) . :with ?e :where [?e :age ?a]]"#,
                &[],
                "30",
            ),
            (
                r#"[:find (avg ?a) . :with ?e :where [?e :age ?a]]"#,
                &[],
                "31.5",
            ),
            (
                r#"[:find (distinct ?t) . :where [_ :tag ?t]]"#,
                &[],
                "#{:a :b}",
            ),
        ],
    );
}

#[test]
fn rules_recursive_and_not() {
    let (_d, db) = sample();
    let rules = r#"[[(anc ?a ?d) [?d :parent ?a]]
                    [(anc ?a ?d) [?d :parent ?x] (anc ?a ?x)]]"#;
    check(
        &db,
        &[
            (
                r#"[:find ?n :in $ % :where [?a :name "Ann"] (anc ?a ?d) [?d :name ?n]]"#,
                &[rules],
                r#"#{["Bob"] ["Cid"] ["Dan"]}"#,
            ),
            (
                r#"[:find ?n :in $ % :where [?d :name "Dan"] (anc ?a ?d) [?a :name ?n]]"#,
                &[rules],
                r#"#{["Ann"] ["Bob"] ["Cid"]}"#,
            ),
            (
                r#"[:find (count ?d) . :with ?a :in $ % :where (anc ?a ?d)]"#,
                &[rules],
                "6",
            ),
            (
                r#"[:find ?n :in $ % :where [?e :name ?n] (not-join [?e] (anc ?e ?x))]"#,
                &[rules],
                r#"#{["Dan"]}"#,
            ),
        ],
    );
}

#[test]
fn pull_patterns() {
    let (_d, db) = sample();
    let snap = db.db().unwrap();
    let ann = match snap
        .q(r#"[:find ?e . :where [?e :email "ann@x"]]"#, &[])
        .unwrap()
    {
        Edn::Long(e) => e as u64,
        other => panic!("{other:?}"),
    };
    let cases = [
        ("[:name :age]", r#"{:name "Ann" :age 30}"#),
        (
            "[:name {:friend [:name]}]",
            r#"{:name "Ann" :friend [{:name "Bob"} {:name "Cid"}]}"#,
        ),
        (
            "[:name {:_parent [:name]}]",
            r#"{:name "Ann" :_parent [{:name "Bob"}]}"#,
        ),
        (
            "[[:name :as \"n\"] [:age :default 7] [:missing :default 7]]",
            r#"{"n" "Ann" :age 30 :missing 7}"#,
        ),
        ("[[:tag :limit 1]]", r#"{:tag [:a]}"#),
        (
            "[:name {:_parent ...}]",
            r#"{:name "Ann" :_parent [{:name "Bob" :_parent [{:name "Cid" :_parent [{:name "Dan"}]}]}]}"#,
        ),
    ];
    for (pattern, want) in cases {
        assert_eq!(snap.pull(pattern, ann).unwrap(), edn(want), "{pattern}");
    }
    let r = snap
        .q(r#"[:find (pull ?e [:name]) . :where [?e :age 41]]"#, &[])
        .unwrap();
    assert_eq!(r, edn(r#"{:name "Dan"}"#));
}

#[test]
fn errors_are_typed() {
    let (_d, db) = sample();
    let snap = db.db().unwrap();
    let cases: &[(&str, &str)] = &[
        ("[:find ?e :where [?e :name", "unclosed"),
        ("[:find ?x :where [?e :name]]", "unbound variables: #{?x}"),
        (
            r#"[:find ?e :where [?e :no-such-attr "x"]]"#,
            "Unable to resolve entity: :no-such-attr",
        ),
        (
            "[:find ?e :where [?e :name ?n] [(frobnicate ?n)]]",
            "unknown function",
        ),
        ("[:find ?e :where (nope ?e)]", "unknown rule"),
        ("[:where [?e :name]]", "no :find"),
    ];
    for (q, want) in cases {
        let err = snap.q(q, &[]).unwrap_err().to_string();
        assert!(err.contains(want), "{q}: {err}");
    }
}

#[test]
fn lazy_entities_navigate_both_ways() {
    use datalith::api::EntityValue;
    use datalith::codec::{Keyword, Value};
    let (_d, db) = sample();
    let snap = db.db().unwrap();
    let ann = snap
        .entity_by(&Keyword::parse(":email"), &Value::string("ann@x"))
        .unwrap()
        .unwrap();
    assert!(
        matches!(ann.get(":name").unwrap(), Some(EntityValue::One(Value::String(s))) if &*s == "Ann")
    );
    let Some(EntityValue::Refs(friends)) = ann.get(":friend").unwrap() else {
        panic!("friends")
    };
    let mut names: Vec<String> = friends
        .iter()
        .map(|f| match f.get(":name").unwrap() {
            Some(EntityValue::One(Value::String(s))) => s.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    names.sort();
    assert_eq!(names, ["Bob", "Cid"]);
    // Reverse: who has Ann as parent.
    let Some(EntityValue::Refs(children)) = ann.get(":_parent").unwrap() else {
        panic!("children")
    };
    assert_eq!(children.len(), 1);
    assert!(ann.get(":missing").unwrap().is_none());
    assert!(ann.keys().unwrap().contains(&Keyword::parse(":tag")));
    let touched = ann.touch().unwrap();
    assert!(
        to_edn_string(&touched).contains(":email \"ann@x\""),
        "{}",
        to_edn_string(&touched)
    );
    // Not unique: a typed error, not a guess.
    assert!(snap
        .entity_by(&Keyword::parse(":name"), &Value::string("Ann"))
        .is_err());
}
