//! `explain` shows the plan in query terms: each step as the query wrote the clause (variable
//! names, attribute idents, constants as EDN, rule bodies with their own variable names),
//! with its estimated and actual rows.

use datalith::edn::read_one;
use datalith::{Database, DbOptions, TxData};

/// Options of a database that keeps every datom in AVE (`ValueIndex::All`): these plans read
/// attributes by value through AVE, which a database of the default layout keeps only for
/// declared attributes (their reads of the others are `AEV` steps, tested in
/// `value_index.rs`).
fn every_value_in_ave() -> DbOptions {
    let mut options = DbOptions::default();
    options.value_index = datalith::ValueIndex::All;
    options
}

const DATA: &[&str] = &[
    r#"[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
         :db/unique :db.unique/identity}
        {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :person/follows :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"#,
    r#"[{:db/id "a" :person/name "ann" :person/age 30 :person/follows "b"}
        {:db/id "b" :person/name "bob" :person/age 40 :person/follows "c"}
        {:db/id "c" :person/name "cy" :person/age 50}]"#,
];

#[test]
fn steps_print_in_query_terms() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), every_value_in_ave()).unwrap();
    for text in DATA {
        db.transact(datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap())
            .unwrap();
    }
    let snapshot = db.db().unwrap();
    let rules = read_one(
        "[[(reach ?from ?to) [?from :person/follows ?to]]
          [(reach ?from ?to) [?from :person/follows ?mid] (reach ?mid ?to)]]",
    )
    .unwrap();
    let everyone = read_one(r#"["ann" "bob" "cy"]"#).unwrap();
    // query, inputs, steps that must appear (in any order), result rows
    let cases: &[(&str, &[datalith::edn::Edn], &[&str], usize)] = &[
        (
            r#"[:find ?n :where [?p :person/name "ann"] [?p :person/age ?a] [(< ?a 35)]
                [?p :person/name ?n]]"#,
            &[],
            &[r#"[?p :person/name "ann"]"#, "[(< ?a 35)]"],
            1,
        ),
        (
            "[:find ?who :where [?p :person/age ?a] [(> ?a 35)] [(str ?a) ?s]
              (not [?p :person/follows _]) [?p :person/name ?who]]",
            &[],
            &["[(str ?a) ?s]", "(not-join [?p] [?p :person/follows _])"],
            1,
        ),
        // Who (of the names given) is followed by someone: only whether a follower exists
        // matters, so one AVE entry answers each person (` +exists`) instead of every
        // follower being fetched and then deduplicated away.
        (
            "[:find ?n :in $ [?n ...] :where [?p :person/name ?n] [?f :person/follows ?p]]",
            std::slice::from_ref(&everyone),
            &["[?f :person/follows ?p] +exists"],
            2,
        ),
        (
            "[:find ?n :in $ [?n ...] :where [?p :person/name ?n] [_ :person/follows ?p]]",
            std::slice::from_ref(&everyone),
            &["[_ :person/follows ?p] +exists"],
            2,
        ),
        // The follower is read after: fetched, not probed.
        (
            "[:find ?n ?f :in $ [?n ...] :where [?p :person/name ?n] [?f :person/follows ?p]]",
            std::slice::from_ref(&everyone),
            &["[?f :person/follows ?p]"],
            2,
        ),
        (
            "[:find ?to :in $ % :where [?a :person/name \"ann\"] (reach ?a ?t) [?t :person/name ?to]]",
            std::slice::from_ref(&rules),
            &["(reach ?a ?t)", "[?from :person/follows ?to]"],
            2,
        ),
    ];
    for (query, inputs, want, rows) in cases {
        let (result, plan) = snapshot
            .explain(query, inputs)
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let steps = &plan.steps;
        let shown: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        for w in *want {
            assert!(
                // A step that deduplicates after it says so (` +dedup`).
                steps
                    .iter()
                    .any(|s| s.what.trim_end_matches(" +dedup") == *w),
                "{query}: no step {w:?} in {shown:#?}"
            );
        }
        for s in &shown {
            assert!(
                !s.contains("Var(") && !s.contains("Attr(") && !s.contains("Const("),
                "{query}: {s}"
            );
            assert!(s.contains(", estimated "), "{s}");
        }
        let n = match result {
            datalith::edn::Edn::Set(v) => v.len(),
            other => panic!("{query}: {other}"),
        };
        assert_eq!(n, *rows, "{query}");
    }
}

#[test]
fn a_plan_prints_the_clauses_as_written_and_the_order_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), every_value_in_ave()).unwrap();
    for text in DATA {
        db.transact(TxData::from_edn(&read_one(text).unwrap()).unwrap())
            .unwrap();
    }
    let snapshot = db.db().unwrap();
    // (query, the plan printed: the clauses as written with their positions, the steps in
    // the order the engine chose, each with the written clauses it ran)
    let cases: &[(&str, &str)] = &[
        (
            "[:find ?n :where [?p :person/age ?a]\n                  [?p :person/name \"ann\"] [?p :person/name ?n]]",
            concat!(
                "query: [:find ?n :where [?p :person/age ?a] [?p :person/name \"ann\"] [?p :person/name ?n]]\n",
                "clauses, as written:\n",
                "  1. [?p :person/age ?a]  (line 1, column 18)\n",
                "  2. [?p :person/name \"ann\"]  (line 2, column 19)\n",
                "  3. [?p :person/name ?n]  (line 2, column 43)\n",
                "steps, in the order run:\n",
                "  1. [?p :person/name \"ann\"]  (AVE, estimated 1, actual 1)  (clause 2)\n",
                // One row, a few datoms: reading both attributes beats looking the entity up.
                "  2. merge scan [?p :person/name ?n] [?p :person/age ?a]  (AVE SCAN, estimated 1, actual 1)  (clauses 3, 1)\n",
                "result: 1 row",
            ),
        ),
        (
            "[:find ?who . :where [?p :person/age ?a] [(> ?a 35)] (not [?p :person/follows _])\n  [?p :person/name ?who]]",
            concat!(
                "query: [:find ?who . :where [?p :person/age ?a] [(> ?a 35)] (not [?p :person/follows _]) [?p :person/name ?who]]\n",
                "clauses, as written:\n",
                "  1. [?p :person/age ?a]  (line 1, column 22)\n",
                "  2. [(> ?a 35)]  (line 1, column 42)\n",
                "  3. (not [?p :person/follows _])  (line 1, column 54)\n",
                "  4. [?p :person/name ?who]  (line 2, column 3)\n",
                "steps, in the order run:\n",
                // The comparison bounds the scan of ages (and is answered by it): the plan
                // starts from the two people older than 35.
                "  1. [?p :person/age ?a]  (AVE SCAN, estimated 2, actual 2)  (clause 1)\n",
                "  2. [?p :person/follows _] +dedup  (AVE SCAN, estimated 4, actual 1)\n",
                "  3. (not-join [?p] [?p :person/follows _])  (NESTED, estimated 1, actual 1)  (clause 3)\n",
                "  4. [?p :person/name ?who]  (AVE SCAN, estimated 1, actual 1)  (clause 4)\n",
                "result: 1 row",
            ),
        ),
        (
            "{:find [(count ?p)] :where [[?p :person/age]]}",
            concat!(
                "query: [:find (count ?p) :where [?p :person/age]]\n",
                "clauses, as written:\n",
                "  1. [?p :person/age]  (line 1, column 29)\n",
                "steps, in the order run:\n",
                "  1. [?p :person/age _]  (AVE SCAN, estimated 3, actual 3)  (clause 1)\n",
                "result: 1 row",
            ),
        ),
    ];
    for (query, want) in cases {
        let (_, plan) = snapshot.explain(query, &[]).unwrap();
        assert_eq!(plan.to_string(), *want, "{query}");
    }
}

#[test]
fn each_step_names_the_index_it_read() {
    // The same plans whether or not the LMDB writer has written the transactions (the
    // estimates of what it has not are scaled from what it has).
    for applied in [false, true] {
        steps_name_their_indexes(applied);
    }
}

fn steps_name_their_indexes(applied: bool) {
    use datalith::query::PlanIndex;
    let dir = tempfile::tempdir().unwrap();
    let mut options = every_value_in_ave();
    // Nothing written into LMDB by its writer or by readers until `apply_logged`.
    options.env.log_apply_delay = std::time::Duration::from_secs(3600);
    options.env.log_readers_apply = false;
    let db = Database::open(dir.path(), options).unwrap();
    for text in DATA {
        db.transact(TxData::from_edn(&read_one(text).unwrap()).unwrap())
            .unwrap();
    }
    // Enough ages that reading them all costs more than a few entity lookups (a step on a
    // bound entity then reads EAV instead of scanning the attribute).
    let ages: Vec<String> = (0..60).map(|i| format!("{{:person/age {i}}}")).collect();
    db.transact(TxData::from_edn(&read_one(&format!("[{}]", ages.join(" "))).unwrap()).unwrap())
        .unwrap();
    if applied {
        db.env().apply_logged().unwrap();
    }
    let snapshot = db.db().unwrap();
    let ann = snapshot
        .q(r#"[:find ?p . :where [?p :person/name "ann"]]"#, &[])
        .unwrap();
    // A lookup ref is read once, before the run: the step prints the entity id it names.
    let by_ref = format!("[{ann} :person/age ?a]");
    let rules = read_one("[[(old ?p) [?p :person/age ?a] [(> ?a 45)]]]").unwrap();
    let names = read_one(r#"["ann" "bob"]"#).unwrap();
    let name_tuples = read_one(r#"[["ann"] ["bob"]]"#).unwrap();
    // (query, inputs, each step run: what, the index it read)
    let cases: &[(&str, &[datalith::edn::Edn], &[(&str, PlanIndex)])] = &[
        // Bound entity: EAV.
        (
            r#"[:find ?a :where [[:person/name "ann"] :person/age ?a]]"#,
            &[],
            &[(&by_ref, PlanIndex::Eav)],
        ),
        // Bound attribute and value: AVE; then the entity it bound: EAV.
        (
            r#"[:find ?a :where [?p :person/name "ann"] [?p :person/age ?a]]"#,
            &[],
            &[
                (r#"[?p :person/name "ann"]"#, PlanIndex::Ave),
                ("[?p :person/age ?a]", PlanIndex::Eav),
            ],
        ),
        // The attribute alone: a scan of it; a predicate reads no index.
        (
            "[:find ?p :where [?p :person/age ?a] [(odd? ?a)]]",
            &[],
            &[
                ("[?p :person/age ?a]", PlanIndex::AttrScan),
                ("[(odd? ?a)]", PlanIndex::None),
            ],
        ),
        // A comparison on the value bounds the attribute's scan and needs no step of its own.
        (
            "[:find ?p :where [?p :person/age ?a] [(>= ?a 58)]]",
            &[],
            &[("[?p :person/age ?a]", PlanIndex::AttrScan)],
        ),
        // The value bound by an earlier step: one AVE lookup per value.
        (
            "[:find ?q :where [?p :person/name \"ann\"] [?p :person/age ?a] [?q :person/age ?a]]",
            &[],
            &[
                (r#"[?p :person/name "ann"]"#, PlanIndex::Ave),
                ("[?p :person/age ?a]", PlanIndex::Eav),
                ("[?q :person/age ?a]", PlanIndex::Ave),
            ],
        ),
        // Neither entity nor attribute known: the whole EAV index.
        (
            "[:find ?e :where [?e ?attr 45]]",
            &[],
            &[("[?e ?attr 45]", PlanIndex::FullScan)],
        ),
        // A function binding a variable, an input relation, a rule and a `not`.
        (
            "[:find ?n ?s :in $ [?n ...] :where [?p :person/name ?n] [(str ?n \"!\") ?s]]",
            std::slice::from_ref(&names),
            &[
                ("[?p :person/name ?n]", PlanIndex::Ave),
                ("[(str ?n \"!\") ?s]", PlanIndex::Function),
            ],
        ),
        (
            "[:find ?n :in $ $names :where [$names ?n] [?p :person/name ?n]]",
            std::slice::from_ref(&name_tuples),
            &[
                // (a named source prints by its number)
                ("[$1 ?n]", PlanIndex::Input),
                ("[?p :person/name ?n]", PlanIndex::Ave),
            ],
        ),
        (
            "[:find ?p :in $ % :where [?p :person/name ?n] (old ?p)]",
            std::slice::from_ref(&rules),
            &[
                ("[?p :person/name ?n]", PlanIndex::AttrScan),
                ("(old ?p)", PlanIndex::Rule),
            ],
        ),
        (
            "[:find ?n :where [?p :person/name ?n] (not [?p :person/follows _])]",
            &[],
            &[
                ("[?p :person/name ?n]", PlanIndex::AttrScan),
                ("(not-join [?p] [?p :person/follows _])", PlanIndex::Nested),
            ],
        ),
    ];
    for (query, inputs, want) in cases {
        let (_, plan) = snapshot
            .explain(query, inputs)
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let got: Vec<(&str, PlanIndex)> = plan
            .steps
            .iter()
            .map(|s| {
                let what = s.what.trim_end_matches(" +dedup");
                (what.trim_end_matches(" +exists"), s.index)
            })
            .collect();
        for w in *want {
            assert!(
                got.contains(w),
                "{query} (applied: {applied}): no step {w:?} in\n{plan}"
            );
        }
        // Printed in uppercase with each step.
        for s in &plan.steps {
            assert!(
                s.to_string()
                    .contains(&format!("({}, estimated ", s.index.as_str())),
                "{s}"
            );
        }
    }
    assert_eq!(PlanIndex::AttrScan.to_string(), "AVE SCAN");
    assert_eq!(PlanIndex::Input.to_string(), "INPUT RELATION");
}
