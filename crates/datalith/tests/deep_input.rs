//! Input nested as deep as Datalith reads it (EDN text up to `limits::MAX_EDN_DEPTH`), and
//! input whose depth no reader bounds (rules calling rules, pulls along a chain of
//! references), ends in an answer or a typed error on a thread with the stack of an ordinary
//! Rust or tokio thread (2 MiB), in this unoptimized build. Before `stack::deep` and the
//! nesting limits, 64 nested `or`s overflowed such a stack here and 500 took a release
//! server down: a stack overflow aborts the whole process, where every other bad input is a
//! typed error.

use datalith::edn::{read_one, Edn};
use datalith::limits::{MAX_CLAUSE_DEPTH, MAX_PULL_DEPTH, MAX_RULE_DEPTH};
use datalith::{Database, Db, DbOptions};

const SCHEMA: &str = "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :next :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :part :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}]";

/// Runs `f` on a thread with 2 MiB of stack, as a server's request would.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("the thread ended without overflowing")
}

/// A database with entities `:n 0` .. `:n len`, each `:next` the one after it.
fn chain(len: usize) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(SCHEMA).unwrap();
    let mut tx = String::from("[");
    for i in 0..len {
        tx.push_str(&format!("{{:db/id \"e{i}\" :n {i} :next \"e{}\"}}", i + 1));
    }
    tx.push_str(&format!("{{:db/id \"e{len}\" :n {len}}}]"));
    db.transact(tx.as_str()).unwrap();
    (dir, db)
}

/// `n` clauses `(open ...)` one inside another around `[?e :n 1]`.
fn nested(open: &str, n: usize) -> String {
    format!(
        "[:find ?e :where [?e :n] {}[?e :n 1]{}]",
        format!("({open} ").repeat(n),
        ")".repeat(n)
    )
}

/// The answer, or the error's category code and message.
fn answer(db: &Db, query: &str, inputs: &[Edn]) -> Result<Edn, (String, String)> {
    db.q(query, inputs)
        .map_err(|e| (e.category().code.to_string(), e.to_string()))
}

#[test]
fn clauses_nest_to_the_limit_and_deeper_is_a_typed_error() {
    let (_dir, db) = chain(3);
    let db = db.db().unwrap();
    // Every form that holds clauses; `(or (and ...))` takes two levels a step.
    let deepest = MAX_CLAUSE_DEPTH - 1;
    let cases: Vec<(String, usize, bool)> = vec![
        ("or".into(), deepest, true),
        ("not".into(), deepest, true),
        ("or-join [?e]".into(), deepest, true),
        ("not-join [?e]".into(), deepest, true),
        ("or (and".into(), deepest / 2, true),
        ("or".into(), deepest + 1, false),
        ("not".into(), deepest + 1, false),
        ("not-join [?e]".into(), 200, false),
        // As deep as the reader goes.
        ("or".into(), 500, false),
    ];
    on_small_stack(move || {
        for (open, n, answers) in cases {
            let text = if open == "or (and" {
                format!(
                    "[:find ?e :where [?e :n] {}[?e :n 1]{}]",
                    "(or (and ".repeat(n),
                    "))".repeat(n)
                )
            } else {
                nested(&open, n)
            };
            let got = answer(&db, &text, &[]);
            match (answers, got) {
                // `not` an odd number of times keeps the others.
                (true, Ok(Edn::Set(rows))) => assert!(!rows.is_empty(), "({open} x{n})"),
                (false, Err((code, message))) => {
                    assert_eq!(code, ":datalith.error/invalid-query", "({open} x{n})");
                    assert!(
                        message.contains(&format!("clauses nested deeper than {MAX_CLAUSE_DEPTH}")),
                        "({open} x{n}): {message}"
                    );
                }
                (_, got) => panic!("({open} x{n}): {got:?}"),
            }
        }
    });
}

#[test]
fn rule_bodies_and_rules_calling_rules_are_bounded_too() {
    let (_dir, db) = chain(3);
    let db = db.db().unwrap();
    on_small_stack(move || {
        let body = |n: usize| {
            read_one(&format!(
                "[[(r ?e) [?e :n] {}[?e :n 1]{}]]",
                "(or ".repeat(n),
                ")".repeat(n)
            ))
            .unwrap()
        };
        let q = "[:find ?e :in $ % :where (r ?e)]";
        assert!(answer(&db, q, &[body(MAX_CLAUSE_DEPTH - 2)]).is_ok());
        let (code, _) = answer(&db, q, &[body(MAX_CLAUSE_DEPTH + 5)]).unwrap_err();
        assert_eq!(code, ":datalith.error/invalid-query");
        // r0 calls r1 ... calls rN: as many levels as the limit allows, then a refusal.
        let calls = |n: usize| {
            let mut rules: Vec<String> = (0..n)
                .map(|i| format!("[(r{i} ?e) (r{} ?e)]", i + 1))
                .collect();
            rules.push(format!("[(r{n} ?e) [?e :n 1]]"));
            read_one(&format!("[{}]", rules.join(" "))).unwrap()
        };
        let q = "[:find ?e . :in $ % :where (r0 ?e)]";
        let limit = MAX_RULE_DEPTH as usize;
        assert!(matches!(answer(&db, q, &[calls(limit)]), Ok(Edn::Long(_))));
        let (_, message) = answer(&db, q, &[calls(limit + 30)]).unwrap_err();
        assert!(message.contains("rules nested too deeply"), "{message}");
    });
}

#[test]
fn a_pull_follows_references_to_its_depth_limit_then_refuses() {
    let deepest = MAX_PULL_DEPTH as usize;
    let (_dir, db) = chain(deepest + 39);
    let db = db.db().unwrap();
    on_small_stack(move || {
        // The depth of a pulled chain: `{:n 0 :next [{:n 1 :next [...]}]}`.
        fn depth(e: &Edn) -> usize {
            let next = match e {
                Edn::Map(pairs) => pairs.iter().find(|(k, _)| *k == Edn::kw(":next")),
                _ => None,
            };
            match next {
                Some((_, Edn::Vector(items))) => 1 + items.first().map_or(0, depth),
                _ => 1,
            }
        }
        let from = |k: usize, pattern: &str| {
            answer(
                &db,
                &format!("[:find (pull ?e {pattern}) . :where [?e :n {k}]]"),
                &[],
            )
        };
        // From `:n 40`, the last `deepest` entities: `...` reaches the end of the chain.
        let tail = from(40, "[:n {:next ...}]").unwrap();
        assert_eq!(depth(&tail), deepest);
        // The printed answer reads back (a server's client reads it).
        assert_eq!(read_one(&tail.to_string()).unwrap(), tail);
        for pattern in [
            "[:n {:next ...}]",
            &format!("[:n {{:next {}}}]", deepest + 5),
        ] {
            let (code, message) = from(0, pattern).unwrap_err();
            assert_eq!(code, ":datalith.error/limit-exceeded", "{pattern}");
            assert!(message.contains("pull nested deeper than"), "{message}");
        }
        // A depth within the limit is a depth.
        assert_eq!(depth(&from(0, "[:n {:next 100}]").unwrap()), 101);
    });
}

#[test]
fn transactions_nest_maps_as_deep_as_the_reader_goes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(SCHEMA).unwrap();
    on_small_stack(move || {
        // 255 component maps, one inside another (510 levels of forms): each a `:part`
        // datom, the innermost one's `:n`, and the transaction's instant.
        let levels = 255;
        let tx = format!(
            "[{}{{:n 5}}{}]",
            "{:part ".repeat(levels),
            "}".repeat(levels)
        );
        let report = db.transact(tx.as_str()).unwrap();
        assert_eq!(report.tx_data.len(), levels + 2);
        let top = db
            .db()
            .unwrap()
            .q("[:find ?e . :where [?e :part] (not [_ :part ?e])]", &[])
            .unwrap();
        // A wildcard pull follows components: past the limit, refused.
        let got = db.db().unwrap().q(
            "[:find (pull ?e [*]) . :in $ ?e]",
            std::slice::from_ref(&top),
        );
        assert_eq!(
            got.unwrap_err().category().code,
            ":datalith.error/limit-exceeded"
        );
        // Retracting the top retracts every component under it.
        let retract = format!("[[:db/retractEntity {top}]]");
        let report = db.transact(retract.as_str()).unwrap();
        assert_eq!(report.tx_data.len(), levels + 2);
        assert_eq!(
            db.db()
                .unwrap()
                .q("[:find (count ?e) . :where [?e :n]]", &[])
                .unwrap(),
            Edn::Nil
        );
    });
}

/// Found by mutating the conformance queries: a pattern on no bound part (`[?a ?i]`, an
/// estimate of `u64::MAX / 4` rows) before a pattern on a bound entity overflowed the
/// planner's product (a panic in a debug build, a wrong estimate in a release one).
#[test]
fn estimates_of_unbounded_patterns_saturate() {
    let (_dir, db) = chain(3);
    let db = db.db().unwrap();
    let q = "[:find ?i ?c :where [?e :n 1] [?e ?a _] [?a ?i] [?a :db/cardinality ?ce] [?ce :db/ident ?c]]";
    // `[?a ?i]`: the attributes ?i that attribute ?a has (its ident, type, cardinality...);
    // entity `:n 1` has `:n` (one) and `:next` (many).
    let Ok(Edn::Set(rows)) = answer(&db, q, &[]) else {
        panic!("{q}")
    };
    let cardinalities: std::collections::BTreeSet<String> = rows
        .iter()
        .map(|r| r.as_seq().unwrap()[1].to_string())
        .collect();
    let want = [":db.cardinality/many", ":db.cardinality/one"].map(String::from);
    assert_eq!(cardinalities.into_iter().collect::<Vec<_>>(), want);
}
