//! An `or` of tests spread over its conjunction (one plan per branch, the union of their
//! answers) gives the answer the filter gives: checked against the same rows filtered in Rust,
//! with branches that overlap (a row passing two branches counts once), with aggregates over
//! `:with`, and with `explain` showing that the spread plan ran.

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions, TxData};

const PARTS: i64 = 400;
const LINES: i64 = 4000;
const BRANDS: i64 = 20;

/// Part `p`'s brand and size, line `l`'s part and quantity.
fn brand(p: i64) -> i64 {
    p % BRANDS
}
fn size(p: i64) -> i64 {
    (p * 7) % 50
}
fn part_of(l: i64) -> i64 {
    (l * 13) % PARTS
}
fn qty(l: i64) -> i64 {
    (l * 31) % 11
}

fn database() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let schema = r#"[{:db/ident :part/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :part/brand :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
        {:db/ident :part/size :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :line/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :line/part :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
        {:db/ident :line/qty :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#;
    db.transact(TxData::from_edn(&read_one(schema).unwrap()).unwrap())
        .unwrap();
    let mut tx = String::from("[");
    for p in 0..PARTS {
        tx.push_str(&format!(
            "{{:db/id \"p{p}\" :part/no {p} :part/brand \"B{}\" :part/size {}}}",
            brand(p),
            size(p)
        ));
    }
    for l in 0..LINES {
        tx.push_str(&format!(
            "{{:line/no {l} :line/part \"p{}\" :line/qty {}}}",
            part_of(l),
            qty(l)
        ));
    }
    tx.push(']');
    db.transact(TxData::from_edn(&read_one(&tx).unwrap()).unwrap())
        .unwrap();
    (dir, db)
}

/// The line numbers a query answered (`[:find ?n ...]`), sorted.
fn numbers(e: &Edn) -> Vec<i64> {
    let (Edn::Set(rows) | Edn::Vector(rows)) = e else {
        panic!("not a collection: {e:?}")
    };
    let mut out: Vec<i64> = rows
        .iter()
        .map(|r| match r {
            Edn::Vector(v) => match v.as_slice() {
                [Edn::Long(n)] => *n,
                other => panic!("not one long: {other:?}"),
            },
            other => panic!("not a row: {other:?}"),
        })
        .collect();
    out.sort_unstable();
    out
}

type Test = fn(i64, i64, i64) -> bool;

#[test]
fn a_spread_or_answers_as_the_filter_does() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // (the or's branches, the same tests on (brand, size, quantity))
    let cases: &[(&str, Test)] = &[
        (
            r#"(or-join [?b ?s ?q]
                   (and [(= ?b "B1")] [(< ?s 10)] [(< ?q 5)])
                   (and [(= ?b "B2")] [(>= ?s 40)])
                   (and [(= ?b "B1")] [(> ?q 7)]))"#,
            |b, s, q| (b == 1 && s < 10 && q < 5) || (b == 2 && s >= 40) || (b == 1 && q > 7),
        ),
        // Overlapping branches: a line of brand 3 with quantity 2 passes both (the answer is
        // brand 3's lines, each once).
        (
            r#"(or-join [?b ?q] [(= ?b "B3")] (and [(= ?b "B3")] [(= ?q 2)]))"#,
            |b, _, _| b == 3,
        ),
        (
            r#"(or-join [?b ?q] [(= ?b "B4")] [(= ?b "B5")] [(= ?b "B6")] [(= ?b "B7")])"#,
            |b, _, _| (4..=7).contains(&b),
        ),
    ];
    for (or, test) in cases {
        let query = format!(
            "[:find ?n :where [?l :line/no ?n] [?l :line/part ?p] [?l :line/qty ?q]
              [?p :part/brand ?b] [?p :part/size ?s] {or}]"
        );
        let (result, plan) = snapshot.explain(&query, &[]).unwrap();
        let want: Vec<i64> = (0..LINES)
            .filter(|&l| test(brand(part_of(l)), size(part_of(l)), qty(l)))
            .collect();
        assert!(!want.is_empty(), "{or}: the case selects some lines");
        assert_eq!(numbers(&result), want, "{or}");
        let shown: Vec<String> = plan.steps.iter().map(|s| s.to_string()).collect();
        assert!(
            shown.iter().any(|s| s.contains("union of the")),
            "{or}: the spread plan ran: {shown:#?}"
        );
        // The sum over :with: each line once, whichever branches it passes.
        let sum_query = format!(
            "[:find (sum ?q) . :with ?l :where [?l :line/part ?p] [?l :line/qty ?q]
              [?p :part/brand ?b] [?p :part/size ?s] {or}]"
        );
        let sum = snapshot.q(&sum_query, &[]).unwrap();
        let want_sum: i64 = want.iter().map(|&l| qty(l)).sum();
        assert_eq!(sum, Edn::Long(want_sum), "{or}");
    }
}

#[test]
fn an_or_that_gives_no_cheaper_start_runs_as_a_filter() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // Tests on the quantity only: every branch still starts from a whole attribute.
    let query = "[:find ?n :where [?l :line/no ?n] [?l :line/qty ?q]
                  (or [(< ?q 2)] [(> ?q 8)])]";
    let (result, plan) = snapshot.explain(query, &[]).unwrap();
    let want: Vec<i64> = (0..LINES).filter(|&l| qty(l) < 2 || qty(l) > 8).collect();
    assert_eq!(numbers(&result), want);
    assert!(
        !plan
            .steps
            .iter()
            .any(|s| s.to_string().contains("union of the")),
        "no spread"
    );
}
