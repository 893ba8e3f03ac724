//! Query inputs, table by table: every binding form with entity ids, lookup refs and idents;
//! relations as data sources; several databases in one query; input errors. Expected results
//! follow the Datomic peer (an input keeps its own value in the result, a lookup ref stays a
//! lookup ref; it names its entity where a clause uses it as one).
//!
//! Two databases: `A` (people) and `B` (scores, and people of its own). Their attributes are
//! installed in different orders, so the same attribute has different ids in each.

#[path = "common/unordered.rs"]
mod unordered;
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::query::QueryError;
use datalith::{Database, Db, DbOptions, Input};
use unordered::{assert_same, normalize};

fn edn(s: &str) -> Edn {
    read_one(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn transact(db: &Database, text: &str) {
    db.transact(datalith::TxData::from_edn(&edn(text)).unwrap())
        .unwrap();
}

const STRING_ID: &str = ":db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity";
const STRING: &str = ":db/valueType :db.type/string :db/cardinality :db.cardinality/one";
const LONG: &str = ":db/valueType :db.type/long :db/cardinality :db.cardinality/one";
const REFS: &str = ":db/valueType :db.type/ref :db/cardinality :db.cardinality/many";
const REF: &str = ":db/valueType :db.type/ref :db/cardinality :db.cardinality/one";

struct Fixture {
    _dirs: Vec<tempfile::TempDir>,
    a: Db,
    b: Db,
    /// Text substitutions: entity ids of `A` by name (`{p1}`, `{red}`, ...).
    ids: Vec<(String, String)>,
}

fn fixture() -> Fixture {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Database::open(da.path(), DbOptions::default()).unwrap();
    transact(
        &a,
        &format!(
            "[{{:db/ident :person/id {STRING_ID}}} {{:db/ident :person/name {STRING}}}
              {{:db/ident :person/friend {REFS}}} {{:db/ident :person/color {REF}}}
              {{:db/ident :color/label {STRING}}}]"
        ),
    );
    transact(
        &a,
        r#"[{:db/id "red" :db/ident :color/red :color/label "Red"}
            {:db/id "blue" :db/ident :color/blue :color/label "Blue"}
            {:db/id "ann" :person/id "p1" :person/name "Ann" :person/color "red"}
            {:db/id "bob" :person/id "p2" :person/name "Bob" :person/friend "ann" :person/color "blue"}
            {:db/id "cid" :person/id "p3" :person/name "Cid" :person/friend ["ann" "bob"]}]"#,
    );
    let b = Database::open(db.path(), DbOptions::default()).unwrap();
    transact(
        &b,
        &format!(
            "[{{:db/ident :score/person {STRING}}} {{:db/ident :score/points {LONG}}}
              {{:db/ident :person/name {STRING}}} {{:db/ident :person/id {STRING_ID}}}]"
        ),
    );
    transact(
        &b,
        r#"[{:person/id "p1" :person/name "Ann"} {:person/id "z1" :person/name "Zed"}
            {:score/person "p1" :score/points 10} {:score/person "p2" :score/points 20}
            {:score/person "p9" :score/points 5}]"#,
    );
    let (a, b) = (a.db().unwrap(), b.db().unwrap());
    assert_ne!(
        a.attr(&datalith::codec::Keyword::parse(":person/name"))
            .unwrap()
            .id,
        b.attr(&datalith::codec::Keyword::parse(":person/name"))
            .unwrap()
            .id,
        "the fixture needs attribute ids that differ between the databases"
    );
    let mut ids = Vec::new();
    for name in ["p1", "p2", "p3"] {
        let q = format!("[:find ?e . :where [?e :person/id \"{name}\"]]");
        let e = a.q(&q, &[]).unwrap();
        ids.push((format!("{{{name}}}"), to_edn_string(&e)));
    }
    for (name, ident) in [("red", ":color/red"), ("blue", ":color/blue")] {
        let e = a
            .ident_entity(&datalith::codec::Keyword::parse(ident))
            .unwrap()
            .unwrap();
        ids.push((format!("{{{name}}}"), e.to_string()));
    }
    Fixture {
        _dirs: vec![da, db],
        a,
        b,
        ids,
    }
}

impl Fixture {
    fn text(&self, s: &str) -> String {
        let mut s = s.to_string();
        for (k, v) in &self.ids {
            s = s.replace(k, v);
        }
        s
    }

    /// `"A"` and `"B"` are the databases; anything else is EDN.
    fn inputs(&self, given: &[&str]) -> Vec<Input> {
        given
            .iter()
            .map(|g| match *g {
                "A" => Input::from(&self.a),
                "B" => Input::from(&self.b),
                text => Input::from(edn(&self.text(text))),
            })
            .collect()
    }

    fn check(&self, cases: &[(&str, &[&str], &str)]) {
        for (q, given, want) in cases {
            let q = &self.text(q);
            let got = datalith::q(q, &self.inputs(given))
                .unwrap_or_else(|e| panic!("{q} {given:?}: {e}"));
            let want = edn(&self.text(want));
            assert_same(&format!("{q} {given:?}"), &got, &want);
        }
    }
}

#[test]
fn entity_inputs_in_every_binding_form() {
    let f = fixture();
    let lookup = r#"[:person/id "p1"]"#;
    let lookup2 = r#"[:person/id "p2"]"#;
    f.check(&[
        // Scalar: entity id, lookup ref, ident.
        (
            "[:find ?p ?n :in $ ?p :where [?p :person/name ?n]]",
            &["A", "{p1}"],
            r#"#{[{p1} "Ann"]}"#,
        ),
        (
            "[:find ?p ?n :in $ ?p :where [?p :person/name ?n]]",
            &["A", lookup],
            r#"#{[[:person/id "p1"] "Ann"]}"#,
        ),
        (
            "[:find ?c ?l :in $ ?c :where [?c :color/label ?l]]",
            &["A", ":color/red"],
            r#"#{[:color/red "Red"]}"#,
        ),
        // Collection.
        (
            "[:find ?p ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", "[{p1} {p2}]"],
            r#"#{[{p1} "Ann"] [{p2} "Bob"]}"#,
        ),
        (
            "[:find ?p ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", r#"[[:person/id "p1"] [:person/id "p2"]]"#],
            r#"#{[[:person/id "p1"] "Ann"] [[:person/id "p2"] "Bob"]}"#,
        ),
        (
            "[:find ?c ?l :in $ [?c ...] :where [?c :color/label ?l]]",
            &["A", "[:color/red :color/blue]"],
            r#"#{[:color/red "Red"] [:color/blue "Blue"]}"#,
        ),
        // Tuple.
        (
            "[:find ?p ?n ?x :in $ [?p ?x] :where [?p :person/name ?n]]",
            &["A", "[{p2} 5]"],
            r#"#{[{p2} "Bob" 5]}"#,
        ),
        (
            "[:find ?p ?n ?x :in $ [?p ?x] :where [?p :person/name ?n]]",
            &["A", &format!("[{lookup2} 5]")],
            r#"#{[[:person/id "p2"] "Bob" 5]}"#,
        ),
        (
            "[:find ?c ?l ?x :in $ [?c ?x] :where [?c :color/label ?l]]",
            &["A", "[:color/blue 5]"],
            r#"#{[:color/blue "Blue" 5]}"#,
        ),
        // Relation.
        (
            "[:find ?n ?x :in $ [[?p ?x]] :where [?p :person/name ?n]]",
            &["A", "[[{p1} 1] [{p3} 3]]"],
            r#"#{["Ann" 1] ["Cid" 3]}"#,
        ),
        (
            "[:find ?p ?x :in $ [[?p ?x]] :where [?p :person/name _]]",
            &["A", &format!("[[{lookup} 1] [{lookup2} 2]]")],
            r#"#{[[:person/id "p1"] 1] [[:person/id "p2"] 2]}"#,
        ),
        (
            "[:find ?l ?x :in $ [[?c ?x]] :where [?c :color/label ?l]]",
            &["A", "[[:color/red 1] [:color/blue 2]]"],
            r#"#{["Red" 1] ["Blue" 2]}"#,
        ),
        // The value of a ref attribute: who has a friend / a color given as input.
        (
            "[:find ?n ?f :in $ [?f ...] :where [?b :person/friend ?f] [?b :person/name ?n]]",
            &["A", &format!("[{lookup2}]")],
            r#"#{["Cid" [:person/id "p2"]]}"#,
        ),
        (
            "[:find ?n :in $ ?f :where [?b :person/friend ?f] [?b :person/name ?n]]",
            &["A", "{p1}"],
            r#"#{["Bob"] ["Cid"]}"#,
        ),
        (
            "[:find ?n :in $ [?c ...] :where [?p :person/color ?c] [?p :person/name ?n]]",
            &["A", "[:color/blue]"],
            r#"#{["Bob"]}"#,
        ),
        // Attribute position: idents of attributes.
        (
            "[:find ?a ?v :in $ [?a ...] :where [{p1} ?a ?v]]",
            &["A", "[:person/name :person/id]"],
            r#"#{[:person/name "Ann"] [:person/id "p1"]}"#,
        ),
        // Inside not and or.
        (
            "[:find ?n :in $ [?p ...] :where [?x :person/name ?n] (not [?x :person/friend ?p])]",
            &["A", &format!("[{lookup}]")],
            r#"#{["Ann"]}"#,
        ),
        (
            "[:find ?n :in $ [?p ...] :where [?x :person/name ?n] (or [?x :person/friend ?p] [?x :person/color ?p])]",
            &["A", "[:color/red {p2}]"],
            r#"#{["Ann"] ["Cid"]}"#,
        ),
        // Database functions take entities given as inputs.
        (
            "[:find ?p ?c :in $ [?p ...] :where [(get-else $ ?p :person/color :none) ?c]]",
            &["A", r#"[[:person/id "p3"] {p1}]"#],
            r#"#{[[:person/id "p3"] :none] [{p1} {red}]}"#,
        ),
        (
            "[:find ?n :in $ ?p :where [(missing? $ ?p :person/friend)] [?p :person/name ?n]]",
            &["A", r#"[:person/id "p1"]"#],
            r#"#{["Ann"]}"#,
        ),
        // Rule arguments the rule uses as entities.
        (
            "[:find ?n :in $ % ?p :where (nm ?p ?n)]",
            &["A", "[[(nm ?e ?n) [?e :person/name ?n]]]", lookup2],
            r#"#{["Bob"]}"#,
        ),
        (
            "[:find ?p ?n :in $ % [?p ...] :where (nm ?p ?n)]",
            &["A", "[[(nm ?e ?n) [?e :person/name ?n]]]", &format!("[{lookup2} :color/red]")],
            r#"#{[[:person/id "p2"] "Bob"]}"#,
        ),
        (
            "[:find ?l :in $ % [?c ...] :where (label ?c ?l)]",
            &["A", "[[(label ?c ?l) [?c :color/label ?l]]]", "[:color/red :color/blue]"],
            r#"#{["Red"] ["Blue"]}"#,
        ),
        // An entity id need not name an existing entity.
        (
            "[:find ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", "[123456789 {p3}]"],
            r#"#{["Cid"]}"#,
        ),
    ]);
}

#[test]
fn input_only_variables_in_find_and_pull() {
    let f = fixture();
    let lookup = r#"[:person/id "p1"]"#;
    f.check(&[
        (
            "[:find ?p :in $ ?p]",
            &["A", lookup],
            r#"#{[[:person/id "p1"]]}"#,
        ),
        ("[:find ?p . :in $ ?p]", &["A", ":color/red"], ":color/red"),
        (
            "[:find ?p :in $ [?p ...]]",
            &["A", r#"[3 [:person/id "p1"]]"#],
            r#"#{[3] [[:person/id "p1"]]}"#,
        ),
        (
            "[:find ?p ?n :in $ ?p :where [?p :person/name ?n]]",
            &["A", "{p3}"],
            r#"#{[{p3} "Cid"]}"#,
        ),
        // Pull by entity id, lookup ref and ident, scalar and collection.
        (
            "[:find (pull ?p [:person/name]) . :in $ ?p]",
            &["A", "{p1}"],
            r#"{:person/name "Ann"}"#,
        ),
        (
            "[:find (pull ?p [:person/name]) . :in $ ?p]",
            &["A", lookup],
            r#"{:person/name "Ann"}"#,
        ),
        (
            "[:find (pull ?c [:color/label]) . :in $ ?c]",
            &["A", ":color/blue"],
            r#"{:color/label "Blue"}"#,
        ),
        (
            "[:find (pull ?p [:person/name]) :in $ [?p ...]]",
            &["A", r#"[[:person/id "p1"] {p2}]"#],
            r#"#{[{:person/name "Ann"}] [{:person/name "Bob"}]}"#,
        ),
        (
            "[:find ?p (pull ?p [:person/name]) :in $ [?p ...]]",
            &["A", r#"[[:person/id "p3"]]"#],
            r#"#{[[:person/id "p3"] {:person/name "Cid"}]}"#,
        ),
        (
            "[:find ?p ?x :in $ ?p [?x ...] :where [?p :person/name _]]",
            &["A", lookup, "[1 2]"],
            r#"#{[[:person/id "p1"] 1] [[:person/id "p1"] 2]}"#,
        ),
        // A scalar the clauses read as a constant is still returned, beside an aggregate too.
        (
            "[:find ?n ?c :in $ ?n :where [?p :person/name ?n] [?p :person/color ?c]]",
            &["A", r#""Bob""#],
            r#"#{["Bob" {blue}]}"#,
        ),
        (
            "[:find ?n (count ?p) :in $ ?n :where [?p :person/name ?n]]",
            &["A", r#""Ann""#],
            r#"#{["Ann" 1]}"#,
        ),
        // Only inputs, no :where.
        (
            "[:find ?x ?y :in $ ?x [?y ...]]",
            &["A", "2", "[3 4]"],
            "#{[2 3] [2 4]}",
        ),
        // A map is a value like any other (Datomic returns it).
        ("[:find ?x :in $ ?x]", &["A", "{:a 1}"], "#{[{:a 1}]}"),
        // The pull pattern itself as an input, named by a plain symbol.
        (
            "[:find (pull ?p pattern) :in $ pattern :where [?p :person/id \"p3\"]]",
            &["A", "[:person/name {:person/friend [:person/id]}]"],
            r#"#{[{:person/name "Cid" :person/friend [{:person/id "p1"} {:person/id "p2"}]}]}"#,
        ),
        (
            "[:find (pull ?p pattern) . :in $ ?p pattern]",
            &["A", lookup, "[:person/id :person/name]"],
            r#"{:person/id "p1" :person/name "Ann"}"#,
        ),
    ]);
}

#[test]
fn relations_as_data_sources() {
    let f = fixture();
    f.check(&[
        ("[:find ?a ?b :in $ $s :where [$s ?a ?b]]", &["A", "[[1 2] [3 4]]"], "#{[1 2] [3 4]}"),
        ("[:find ?a ?c :in $ $s :where [$s ?a _ ?c]]", &["A", "[[1 2 3] [4 5 6]]"], "#{[1 3] [4 6]}"),
        (
            "[:find ?a ?d :in $ $s :where [$s ?a ?b ?c ?d]]",
            &["A", "[[1 2 3 4] [5 6 7 8]]"],
            "#{[1 4] [5 8]}",
        ),
        // A shorter clause matches each tuple's prefix.
        ("[:find ?a ?b :in $ $s :where [$s ?a ?b]]", &["A", "[[1 2 3 4] [5 6 7 8]]"], "#{[1 2] [5 6]}"),
        // Constants in any position; sets and lists of tuples.
        ("[:find ?a :in $ $s :where [$s ?a _ _ 8]]", &["A", "[[1 2 3 4] [5 6 7 8]]"], "#{[5]}"),
        ("[:find ?a ?b :in $ $s :where [$s ?a ?b]]", &["A", "#{[1 2] [3 4]}"], "#{[1 2] [3 4]}"),
        ("[:find ?a ?b :in $ $s :where [$s ?a ?b]]", &["A", "([1 2] (3 4))"], "#{[1 2] [3 4]}"),
        // Collections may be vectors, lists or sets.
        ("[:find ?a :in $ [?a ...]]", &["A", "#{1 2}"], "#{[1] [2]}"),
        ("[:find ?a :in $ [?a ...]]", &["A", "(1 2)"], "#{[1] [2]}"),
        ("[:find ?a ?b :in $ [[?a ?b]]]", &["A", "#{[1 2]}"], "#{[1 2]}"),
        // Longer tuples bind their first values.
        ("[:find ?a ?b :in $ [[?a ?b]]]", &["A", "[[1 2 3]]"], "#{[1 2]}"),
        ("[:find ?a ?b :in $ [?a ?b]]", &["A", "[1 2 3]"], "#{[1 2]}"),
        // A relation joined with a database on a value.
        (
            "[:find ?n ?s :in $ $scores :where [?e :person/id ?id] [?e :person/name ?n] [$scores ?id ?s]]",
            &["A", r#"[["p1" 7] ["p2" 9] ["p7" 1]]"#],
            r#"#{["Ann" 7] ["Bob" 9]}"#,
        ),
        // Entity ids given back as longs join the database's ids (Datomic's ids are longs):
        // in a relation source, in a not-join on one, and in an input joined after a pattern.
        (
            "[:find ?n :in $ $picked :where [?e :person/name ?n] [$picked ?e]]",
            &["A", "[[{p1}] [{p3}]]"],
            r#"#{["Ann"] ["Cid"]}"#,
        ),
        (
            "[:find ?n :in $ $picked :where [?e :person/name ?n] (not-join [?e] [$picked ?e _])]",
            &["A", "[[{p1} 1] [{p3} 0]]"],
            r#"#{["Bob"]}"#,
        ),
        (
            "[:find ?n ?k :in $ $picked :where [?f :person/friend ?e] [?e :person/name ?n] [$picked ?e ?k]]",
            &["A", "[[{p1} 1] [{p2} 2] [{p3} 3]]"],
            r#"#{["Ann" 1] ["Bob" 2]}"#,
        ),
        // `$` itself a relation.
        ("[:find ?b :in $ $db :where [1 ?b]]", &["[[1 2] [3 4] [1 5]]", "A"], "#{[2] [5]}"),
        // Rules over a relation source.
        (
            "[:find ?y :in $ $edges % :where ($edges reach 1 ?y)]",
            &[
                "A",
                "[[1 2] [2 3] [3 4] [7 8]]",
                "[[(reach ?x ?y) [?x ?y]] [(reach ?x ?y) [?x ?z] (reach ?z ?y)]]",
            ],
            "#{[2] [3] [4]}",
        ),
    ]);
}

#[test]
fn several_databases() {
    let f = fixture();
    let rules = "[[(named ?n) [_ :person/name ?n]]
                  [(friend-of ?a ?b) [?x :person/name ?a] [?x :person/friend ?y] [?y :person/name ?b]]]";
    f.check(&[
        // Join on a value across databases.
        (
            "[:find ?name ?points :in $a $b
              :where [$a ?p :person/id ?id] [$a ?p :person/name ?name]
                     [$b ?s :score/person ?id] [$b ?s :score/points ?points]]",
            &["A", "B"],
            r#"#{["Ann" 10] ["Bob" 20]}"#,
        ),
        // Each database resolves attributes against its own schema.
        ("[:find ?n :in $a $b :where [$b _ :person/name ?n]]", &["A", "B"], r#"#{["Ann"] ["Zed"]}"#),
        ("[:find ?n :in $a $b :where [$a _ :person/name ?n]]", &["A", "B"], r#"#{["Ann"] ["Bob"] ["Cid"]}"#),
        // The default `$`, unnamed or named among others.
        ("[:find ?n :where [_ :person/name ?n]]", &["B"], r#"#{["Ann"] ["Zed"]}"#),
        (
            "[:find ?n :in $ $b :where [?e :person/name ?n] [$b ?x :person/name ?n]]",
            &["A", "B"],
            r#"#{["Ann"]}"#,
        ),
        // A named first database.
        (
            "[:find ?n :in $db ?id :where [$db ?e :person/id ?id] [$db ?e :person/name ?n]]",
            &["B", r#""z1""#],
            r#"#{["Zed"]}"#,
        ),
        // A lookup ref names its entity in the database of each clause that uses it.
        (
            "[:find ?x ?y :in $a $b ?p :where [$a ?p :person/name ?x] [$b ?p :person/id ?y]]",
            &["A", "B", r#"[:person/id "p1"]"#],
            r#"#{["Ann" "p1"]}"#,
        ),
        (
            "[:find ?e :in $a $b ?p :where [$b ?e :person/id \"p1\"] [(= ?e ?p)]]",
            &["A", "B", "[:person/id \"p1\"]"],
            "#{}",
        ),
        // Rules called with a source.
        ("[:find ?n :in $a $b % :where ($b named ?n)]", &["A", "B", rules], r#"#{["Ann"] ["Zed"]}"#),
        ("[:find ?n :in $a $b % :where ($a named ?n)]", &["A", "B", rules], r#"#{["Ann"] ["Bob"] ["Cid"]}"#),
        (
            "[:find ?n :in $a $b % :where ($a named ?n) ($b named ?n)]",
            &["A", "B", rules],
            r#"#{["Ann"]}"#,
        ),
        ("[:find ?a ?b :in $ $b % :where (friend-of ?a ?b)]", &["A", "B", rules], r#"#{["Bob" "Ann"] ["Cid" "Ann"] ["Cid" "Bob"]}"#),
        // Pull from a named database.
        (
            "[:find (pull $b ?e [:person/name]) :in $a $b :where [$b ?e :person/id \"z1\"]]",
            &["A", "B"],
            r#"#{[{:person/name "Zed"}]}"#,
        ),
        (
            "[:find (pull $b ?e [:person/name]) . :in $a $b ?e]",
            &["A", "B", r#"[:person/id "p1"]"#],
            r#"{:person/name "Ann"}"#,
        ),
        // Database functions read the source they are given.
        (
            "[:find ?n ?p :in $a $b :where [$b ?e :person/name ?n] [(get-else $b ?e :score/points 0) ?p]]",
            &["A", "B"],
            r#"#{["Ann" 0] ["Zed" 0]}"#,
        ),
        (
            "[:find ?n :in $a $b :where [$b ?e :person/id ?n] [(missing? $b ?e :score/person)]]",
            &["A", "B"],
            r#"#{["p1"] ["z1"]}"#,
        ),
        (
            "[:find ?p :in $a $b :where [$b ?e :score/person ?p] [(get-else $b ?e :score/points 0) ?s] [(> ?s 8)]]",
            &["A", "B"],
            r#"#{["p1"] ["p2"]}"#,
        ),
        (
            "[:find ?n :in $ $b :where [?e :person/name ?n] [(missing? $ ?e :person/friend)]]",
            &["A", "B"],
            r#"#{["Ann"]}"#,
        ),
        (
            "[:find ?n :in $a $b :where [$a ?e :person/name ?n] ($a or [(missing? $ ?e :person/friend)] [?e :person/id \"p3\"])]",
            &["A", "B"],
            r#"#{["Ann"] ["Cid"]}"#,
        ),
        // or / not / or-join / not-join with a source.
        (
            "[:find ?n :in $a $b :where ($b or [?e :person/name \"Zed\"] [?e :person/id \"p1\"]) [$b ?e :person/name ?n]]",
            &["A", "B"],
            r#"#{["Ann"] ["Zed"]}"#,
        ),
        (
            "[:find ?n :in $a $b :where [$a _ :person/name ?n] ($b not [_ :person/name ?n])]",
            &["A", "B"],
            r#"#{["Bob"] ["Cid"]}"#,
        ),
        (
            "[:find ?n :in $ $b :where [?e :person/name ?n] (not [$b _ :person/name ?n])]",
            &["A", "B"],
            r#"#{["Bob"] ["Cid"]}"#,
        ),
        (
            "[:find ?n :in $a $b :where [$b ?e :person/name ?n] ($b not-join [?e] [?e :person/id \"z1\"])]",
            &["A", "B"],
            r#"#{["Ann"]}"#,
        ),
        (
            "[:find ?n :in $a $b :where [$a ?e :person/name ?n] ($a or-join [?e] [?e :person/color :color/red] [?e :person/id \"p3\"])]",
            &["A", "B"],
            r#"#{["Ann"] ["Cid"]}"#,
        ),
    ]);
}

#[test]
fn the_receiver_of_db_q_is_the_first_database() {
    let f = fixture();
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "[:find ?n :where [_ :person/name ?n]]",
            &[],
            r#"#{["Ann"] ["Zed"]}"#,
        ),
        (
            "[:find ?n :in $ ?id :where [?e :person/id ?id] [?e :person/name ?n]]",
            &[r#""z1""#],
            r#"#{["Zed"]}"#,
        ),
        // A named first database takes the receiver.
        (
            "[:find ?n :in $db ?id :where [$db ?e :person/id ?id] [$db ?e :person/name ?n]]",
            &[r#""z1""#],
            r#"#{["Zed"]}"#,
        ),
        // A named first source with its own input is a relation; `$` is the receiver.
        (
            "[:find ?n ?x :in $s :where [$s ?id ?x] [?e :person/id ?id] [?e :person/name ?n]]",
            &[r#"[["z1" 1]]"#],
            r#"#{["Zed" 1]}"#,
        ),
        // No `$` in :in: the receiver is `$` all the same.
        (
            "[:find ?n :in ?id :where [?e :person/id ?id] [?e :person/name ?n]]",
            &[r#""p1""#],
            r#"#{["Ann"]}"#,
        ),
    ];
    for (q, given, want) in cases {
        let inputs: Vec<Edn> = given.iter().map(|g| edn(g)).collect();
        let got = f.b.q(q, &inputs).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(normalize(&got), normalize(&edn(want)), "{q}");
    }
}

#[test]
fn input_errors_are_typed() {
    let f = fixture();
    type Check = fn(&QueryError) -> bool;
    let cases: &[(&str, &[&str], Check, &str)] = &[
        (
            "[:find ?e :in $ :where [$x ?e :person/name]]",
            &["A"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$x"),
            "data source $x is not among the :in inputs: [$x ?e :person/name]",
        ),
        (
            "[:find ?e :in $a :where [?e :person/name]]",
            &["A"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$"),
            "data source $ is not among",
        ),
        (
            "[:find ?e :in $a % :where (r ?e)]",
            &["A", "[[(r ?e) [?e :person/name]]]"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$"),
            "data source $ is not among",
        ),
        (
            "[:find ?e :in $a :where ($b not [?e :person/name])]",
            &["A"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$b"),
            "data source $b",
        ),
        (
            "[:find (pull ?e [:person/name]) :in $a :where [$a ?e :person/name]]",
            &["A"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$"),
            "data source $ is not among",
        ),
        // What names no entity where an entity is expected, as in Datomic: an ident or lookup
        // ref naming nothing ("Cannot resolve key"), a lookup ref on a non-unique or unknown
        // attribute, a value that is no entity reference.
        (
            "[:find ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", r#"[[:person/id "nobody"] [:person/id "p3"]]"#],
            |e| matches!(e, QueryError::UnresolvedKey { key } if key == r#"[:person/id "nobody"]"#),
            r#"Cannot resolve key: [:person/id "nobody"]"#,
        ),
        (
            "[:find ?n :in $ ?p :where [?p :person/name ?n]]",
            &["A", r#"[:person/name "Ann"]"#],
            |e| matches!(e, QueryError::LookupRefNotUnique { .. }),
            r#"Attribute values not unique: :person/name in [:person/name "Ann"]"#,
        ),
        (
            "[:find ?n :in $ ?p :where [?p :person/name ?n]]",
            &["A", r#"[:person/nmae "Ann"]"#],
            |e| matches!(e, QueryError::UnknownAttribute { .. }),
            r#"Unable to resolve entity: :person/nmae in [:person/nmae "Ann"]"#,
        ),
        (
            "[:find ?b :in $ [?c ...] :where [?b :person/color ?c]]",
            &["A", "[:color/green]"],
            |e| matches!(e, QueryError::UnresolvedKey { key } if key == ":color/green"),
            "Cannot resolve key: :color/green",
        ),
        // A string there is read as a keyword (an ident), as Datomic reads it.
        (
            "[:find ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", r#"["p1"]"#],
            |e| matches!(e, QueryError::NotAKeyword { value } if value == r#""p1""#),
            r#"cannot read "p1" as a keyword: it has no leading :"#,
        ),
        (
            "[:find ?n :in $ [?p ...] :where [?p :person/name ?n]]",
            &["A", r#"[1.5]"#],
            |e| matches!(e, QueryError::UnresolvedEntity { value } if value == "1.5"),
            "1.5 names no entity",
        ),
        (
            "[:find ?n :where [:color/green :color/label ?n]]",
            &["A"],
            |e| matches!(e, QueryError::UnresolvedKey { .. }),
            "Cannot resolve key: :color/green",
        ),
        (
            "[:find ?b :where [?b :person/friend [:person/id \"nobody\"]]]",
            &["A"],
            |e| matches!(e, QueryError::UnresolvedKey { .. }),
            r#"Cannot resolve key: [:person/id "nobody"]"#,
        ),
        // Binding forms given too little.
        (
            "[:find ?a ?b :in $ [?a ?b]]",
            &["A", "[1]"],
            |e| matches!(e, QueryError::InputKind { got, .. } if got == "[1]"),
            "input [?a ?b] takes tuples of 2 values, got [1]",
        ),
        (
            "[:find ?a ?b :in $ [[?a ?b]]]",
            &["A", "[[1 2] [3]]"],
            |e| matches!(e, QueryError::InputKind { got, .. } if got == "[3]"),
            "input [[?a ?b]] takes tuples of 2 values, got [3]",
        ),
        (
            "[:find ?a :in $ [?a ...]]",
            &["A", "5"],
            |e| matches!(e, QueryError::InputKind { got, .. } if got == "5"),
            "input [?a ...] takes a collection, got 5",
        ),
        (
            // A rule body reads only its own `$`.
            "[:find ?n :in $a $b % :where ($b named ?n)]",
            &["A", "B", "[[(named ?n) [$a _ :person/name ?n]]]"],
            |e| matches!(e, QueryError::UnknownSource { name, .. } if name == "$a"),
            "data source $a is not among the :in inputs: [$a _ :person/name ?n]",
        ),
        (
            "[:find ?x :in $ ?x]",
            &["A", "B"],
            |e| matches!(e, QueryError::InputKind { input, .. } if input == "?x"),
            "input ?x takes a value, got a database",
        ),
        (
            "[:find ?x :in $ [?x ...]]",
            &["A", "B"],
            |e| matches!(e, QueryError::InputKind { .. }),
            "input [?x ...] takes a collection, got a database",
        ),
        (
            "[:find ?x :in $ % :where (r ?x)]",
            &["A", "B"],
            |e| matches!(e, QueryError::InputKind { .. }),
            "input % takes rules, got a database",
        ),
        (
            "[:find ?e :in $ :where [?e :person/name]]",
            &["5"],
            |e| matches!(e, QueryError::InputKind { got, .. } if got == "5"),
            "input $ takes a database or a collection of tuples, got 5",
        ),
        (
            "[:find ?e :in $ $s :where [$s ?e]]",
            &["A", "[[1] 2]"],
            |e| matches!(e, QueryError::InputKind { got, .. } if got == "2"),
            "input $s takes a database or a collection of tuples, got 2",
        ),
        (
            "[:find ?e :in $ ?x :where [?e :person/name ?x]]",
            &["A"],
            |e| {
                matches!(
                    e,
                    QueryError::InputCount {
                        expected: 2,
                        got: 1,
                        ..
                    }
                )
            },
            "the query's :in [$ ?x] takes 2 inputs, got 1",
        ),
        (
            "[:find ?e :where [?e :person/name]]",
            &["A", "1"],
            |e| {
                matches!(
                    e,
                    QueryError::InputCount {
                        expected: 1,
                        got: 2,
                        ..
                    }
                )
            },
            "takes 1 inputs, got 2",
        ),
        (
            "[:find ?a :in $ $s :where [$s ?a ?b ?c]]",
            &["A", "[[1 2 3] [4 5]]"],
            |e| {
                matches!(
                    e,
                    QueryError::SourceArity {
                        terms: 3,
                        width: 2,
                        ..
                    }
                )
            },
            "[?a ?b ?c] has 3 terms but the tuple [4 5] of $s has 2",
        ),
        (
            "[:find ?a :in [?a ...]]",
            &["[1 2]"],
            |e| matches!(e, QueryError::NoDatabase),
            "a query needs a database",
        ),
        // A rule called on a database that lacks an attribute its body names (Datomic).
        (
            "[:find ?a :in $a $b % :where ($b friend-of ?a)]",
            &[
                "A",
                "B",
                "[[(friend-of ?a) [?x :person/name ?a] [?x :person/friend _]]]",
            ],
            |e| matches!(e, QueryError::UnknownAttribute { attr, .. } if attr == ":person/friend"),
            "Unable to resolve entity: :person/friend in [?x :person/friend _]",
        ),
        (
            "[:find (pull ?p pattern) :in $ pattern :where [?p :person/id]]",
            &["A", "B"],
            |e| matches!(e, QueryError::InputKind { input, .. } if input == "pattern"),
            "input pattern takes a pull pattern, got a database",
        ),
    ];
    for (q, given, check, message) in cases {
        let err = datalith::q(q, &f.inputs(given)).expect_err(q);
        assert!(check(&err), "{q}: {err}");
        assert!(err.to_string().contains(message), "{q}: {err}");
    }
}

#[test]
fn each_pattern_is_planned_on_its_own_database() {
    let f = fixture();
    // `A` gets many more names than `B` has (2): the join starts from `B`'s names, with
    // `B`'s own count as the estimate.
    let dir = tempfile::tempdir().unwrap();
    let big = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(
        &big,
        &format!("[{{:db/ident :person/id {STRING_ID}}} {{:db/ident :person/name {STRING}}}]"),
    );
    let people: Vec<String> = (0..40)
        .map(|i| format!("{{:person/id \"x{i}\" :person/name \"N{i}\"}}"))
        .collect();
    transact(
        &big,
        &format!("[{} {{:person/name \"Zed\"}}]", people.join(" ")),
    );
    let big = big.db().unwrap();
    for query in [
        "[:find ?n :in $a $b :where [$a _ :person/name ?n] [$b _ :person/name ?n]]",
        "[:find ?n :in $a $b :where [$b _ :person/name ?n] [$a _ :person/name ?n]]",
    ] {
        let (result, steps) =
            datalith::explain(query, &[Input::from(&big), Input::from(&f.b)]).unwrap();
        assert_eq!(result, edn(r#"#{["Zed"]}"#), "{query}");
        assert_eq!(
            steps.steps.iter().map(|s| (s.estimated, s.actual)).next(),
            Some((2, 2)),
            "{query}: {steps:?}"
        );
    }
}

#[test]
fn recursive_rules_read_the_source_they_are_called_with() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let chain = |dir: &tempfile::TempDir, n: usize| {
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        transact(
            &db,
            &format!("[{{:db/ident :node/id {LONG}}} {{:db/ident :node/next {REFS}}}]"),
        );
        let nodes: Vec<String> = (1..=n)
            .map(|i| match i < n {
                true => format!("{{:db/id \"n{i}\" :node/id {i} :node/next \"n{}\"}}", i + 1),
                false => format!("{{:db/id \"n{i}\" :node/id {i}}}"),
            })
            .collect();
        transact(&db, &format!("[{}]", nodes.join(" ")));
        db.db().unwrap()
    };
    let (a, b) = (chain(&dirs.0, 2), chain(&dirs.1, 4));
    let rules = edn(
        "[[(reach ?x ?y) [?x :node/next ?y]] [(reach ?x ?y) [?x :node/next ?z] (reach ?z ?y)]]",
    );
    let cases = [
        (
            "[:find ?i :in $ $b % :where [$b ?s :node/id 1] ($b reach ?s ?y) [$b ?y :node/id ?i]]",
            "#{[2] [3] [4]}",
        ),
        (
            "[:find ?i :in $ $b % :where [?s :node/id 1] (reach ?s ?y) [?y :node/id ?i]]",
            "#{[2]}",
        ),
        (
            "[:find ?i :in $ $b % :where ($b reach ?s ?y) [$b ?s :node/id 3] [$b ?y :node/id ?i]]",
            "#{[4]}",
        ),
    ];
    for (q, want) in cases {
        let inputs = [Input::from(&a), Input::from(&b), Input::from(rules.clone())];
        let got = datalith::q(q, &inputs).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(normalize(&got), normalize(&edn(want)), "{q}");
    }
}

/// Groups are the same whether the rows come sorted by their key (each new key then makes a
/// group without a look in the index) or not (the first key out of order indexes the keys so
/// far); a long and a double of one number are two keys, as in Datomic.
#[test]
fn groups_do_not_depend_on_the_order_of_rows() {
    let f = fixture();
    let by_one = "[:find ?k (sum ?v) (count ?v) :with ?i :in $ [[?i ?k ?v]]]";
    let by_two = "[:find ?k ?j (sum ?v) :with ?i :in $ [[?i ?k ?j ?v]]]";
    f.check(&[
        (
            by_one,
            &["A", "[[1 1 10] [2 1 5] [3 2 1] [4 3 4]]"],
            "#{[1 15 2] [2 1 1] [3 4 1]}",
        ),
        (
            by_one,
            &["A", "[[1 2 1] [2 1 10] [3 2 5] [4 1 1] [5 3 3]]"],
            "#{[2 6 2] [1 11 2] [3 3 1]}",
        ),
        // Ascending, then a key seen before, then a new one and a repeat of the first.
        (
            by_one,
            &["A", "[[1 1 1] [2 2 2] [3 3 3] [4 2 20] [5 4 4] [6 1 10]]"],
            "#{[1 11 2] [2 22 2] [3 3 1] [4 4 1]}",
        ),
        (
            by_one,
            &["A", "[[1 1 1] [2 1.0 2] [3 1 3]]"],
            "#{[1 4 2] [1.0 2 1]}",
        ),
        (
            by_two,
            &["A", "[[1 1 1 1] [2 1 2 2] [3 2 1 3] [4 1 1 4] [5 2 1 5]]"],
            "#{[1 1 5] [1 2 2] [2 1 8]}",
        ),
    ]);
}

/// Tests on input variables alone run as the inputs are read (before deduplication and
/// entity resolution): the answers are those of running them in the query.
#[test]
fn tests_on_inputs_alone() {
    let f = fixture();
    f.check(&[
        // A relation with a repeated row, filtered.
        (
            "[:find ?x ?y :in $ [[?x ?y]] :where [(> ?y 1)]]",
            &["A", "[[1 2] [1 2] [3 0] [4 5]]"],
            "#{[1 2] [4 5]}",
        ),
        // A test over two bindings.
        (
            "[:find ?x :in $ [?x ...] ?lim :where [(< ?x ?lim)]]",
            &["A", "[1 5 9]", "6"],
            "#{[1] [5]}",
        ),
        // Two tests, one on a binding, one across bindings.
        (
            "[:find ?x :in $ [?x ...] ?lim :where [(< ?x ?lim)] [(not= ?x 1)]]",
            &["A", "[1 5 9 1]", "6"],
            "#{[5]}",
        ),
        // Inputs used as entities (lookup refs, ids), filtered on another column first.
        (
            "[:find ?n :in $ [[?p ?min]] :where [?p :person/name ?n] [(>= ?min 2)]]",
            &[
                "A",
                r#"[[[:person/id "p1"] 1] [[:person/id "p2"] 2] [{p3} 3]]"#,
            ],
            r#"#{["Bob"] ["Cid"]}"#,
        ),
        // A test on a value the database binds is not an input's alone.
        (
            r#"[:find ?n :in $ [?p ...] :where [?p :person/name ?n] [(not= ?n "Ann")]]"#,
            &["A", "[{p1} {p2}]"],
            r#"#{["Bob"]}"#,
        ),
        // A scalar the test rejects leaves nothing.
        (
            "[:find ?n :in $ ?min :where [?p :person/name ?n] [(> ?min 5)]]",
            &["A", "3"],
            "#{}",
        ),
        (
            "[:find ?n :in $ ?min :where [?p :person/name ?n] [(> ?min 5)]]",
            &["A", "7"],
            r#"#{["Ann"] ["Bob"] ["Cid"]}"#,
        ),
        // A constant matched in the binding, and a string test.
        (
            r#"[:find ?s :in $ [[?s 1]] :where [(clojure.string/starts-with? ?s "a")]]"#,
            &["A", r#"[["ab" 1] ["ac" 2] ["ba" 1] ["ad" 1]]"#],
            r#"#{["ab"] ["ad"]}"#,
        ),
        // A test on a tuple's column the binding ignores is no test of the input.
        (
            "[:find ?x :in $ [[?x _]] :where [(> ?x 1)]]",
            &["A", "[[1 9] [2 0] [3 3]]"],
            "#{[2] [3]}",
        ),
    ]);
}

/// A user's function under a built-in test's name runs in the query, never replaced by the
/// built-in on the inputs.
#[test]
fn a_users_function_named_like_a_test_judges_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.register_query_fn("<", |_| Ok(datalith::codec::Value::Boolean(true)));
    let got = db
        .db()
        .unwrap()
        .q(
            "[:find ?x :in $ [?x ...] :where [(< ?x 0)]]",
            &[edn("[1 2]")],
        )
        .unwrap();
    assert_same("user <", &got, &edn("#{[1] [2]}"));
}
