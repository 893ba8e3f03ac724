//! Tests and functions that follow one another run as one pass over the rows (a chain,
//! `query::exec::chain`): the answer must be the one of running them clause by clause.
//!
//! Random chains of `+ - *` and `< > !=` over longs and doubles are checked against a model
//! computed here, in random clause orders; a table covers what a chain must keep from the
//! single-clause steps (nil drops a row, errors surface, user functions and a user's
//! redefinition of a built-in are called).

use std::collections::BTreeSet;

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::query::QueryOptions;
use datalith::Database;
use proptest::prelude::*;

#[path = "common/open.rs"]
mod open;
use open::open_with;

/// A number as the model computes it: a long stays exact, a double is contagious.
#[derive(Debug, Clone, Copy, PartialEq)]
enum N {
    L(i64),
    D(f64),
}

impl N {
    fn f(self) -> f64 {
        match self {
            N::L(x) => x as f64,
            N::D(x) => x,
        }
    }

    fn edn(self) -> String {
        match self {
            N::L(x) => x.to_string(),
            // Datalith keeps one zero (`Value::double`): -0.0 is 0.0.
            N::D(0.0) => "0.0".into(),
            N::D(x) => format!("{x:?}"),
        }
    }
}

/// An argument: one of the variables bound so far, or a constant.
#[derive(Debug, Clone)]
enum Arg {
    Var(usize),
    Const(N),
}

#[derive(Debug, Clone)]
enum Link {
    /// `[(op a b) ?rK]`
    Fn(&'static str, Arg, Arg),
    /// `[(op a b)]`
    Test(&'static str, Arg, Arg),
}

/// Up to six links; function `k` binds variable `2 + k` (`?a` and `?b` are 0 and 1).
fn links() -> impl Strategy<Value = Vec<Link>> {
    proptest::collection::vec(
        (
            any::<bool>(),
            0usize..3,
            any::<u16>(),
            any::<u16>(),
            any::<i8>(),
        ),
        1..7,
    )
    .prop_map(|raw| {
        let mut bound = 2;
        let mut out = Vec::new();
        for (is_fn, op, x, y, k) in raw {
            let pick = |r: u16| {
                if r % 4 == 3 {
                    if r % 8 == 3 {
                        Arg::Const(N::L(k as i64 % 4))
                    } else {
                        Arg::Const(N::D(k as f64 / 4.0))
                    }
                } else {
                    Arg::Var(r as usize % bound)
                }
            };
            if is_fn {
                out.push(Link::Fn(["+", "-", "*"][op], pick(x), pick(y)));
                bound += 1;
            } else {
                out.push(Link::Test(["<", ">", "!="][op], pick(x), pick(y)));
            }
        }
        out
    })
}

fn show(a: &Arg) -> String {
    match a {
        Arg::Var(v) => format!("?v{v}"),
        Arg::Const(n) => n.edn(),
    }
}

fn clause(l: &Link, fns_before: usize) -> String {
    match l {
        Link::Fn(op, a, b) => format!("[({op} {} {}) ?v{}]", show(a), show(b), 2 + fns_before),
        Link::Test(op, a, b) => format!("[({op} {} {})]", show(a), show(b)),
    }
}

/// The rows the model keeps: each entity's `?a ?b` and every function's value.
fn model(rows: &[(i64, f64)], links: &[Link]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    'rows: for (a, b) in rows {
        let mut vals = vec![N::L(*a), N::D(*b)];
        for l in links {
            let get = |x: &Arg| match x {
                Arg::Var(v) => vals[*v],
                Arg::Const(n) => *n,
            };
            match l {
                Link::Fn(op, x, y) => {
                    let (x, y) = (get(x), get(y));
                    let v = match (x, y) {
                        (N::L(x), N::L(y)) => N::L(match *op {
                            "+" => x + y,
                            "-" => x - y,
                            _ => x * y,
                        }),
                        _ => N::D(match *op {
                            "+" => x.f() + y.f(),
                            "-" => x.f() - y.f(),
                            _ => x.f() * y.f(),
                        }),
                    };
                    vals.push(v);
                }
                Link::Test(op, x, y) => {
                    let (x, y) = (get(x), get(y));
                    let pass = match *op {
                        "<" => x.f() < y.f(),
                        ">" => x.f() > y.f(),
                        // Clojure's `=`: a long and a double are never equal.
                        _ => x != y,
                    };
                    if !pass {
                        continue 'rows;
                    }
                }
            }
        }
        let cells: Vec<String> = vals.iter().map(|v| v.edn()).collect();
        out.insert(format!("[{}]", cells.join(" ")));
    }
    out
}

fn rows_of(result: &Edn) -> BTreeSet<String> {
    let Edn::Set(rows) = result else {
        panic!("not a set: {}", to_edn_string(result))
    };
    rows.iter().map(to_edn_string).collect()
}

fn sample(rows: &[(i64, f64)]) -> (tempfile::TempDir, Database) {
    let schema = r#"[{:db/ident :a :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
                     {:db/ident :b :db/valueType :db.type/double :db/cardinality :db.cardinality/one}]"#;
    let data: Vec<String> = rows
        .iter()
        .map(|(a, b)| format!("{{:a {a} :b {b:?}}}"))
        .collect();
    let data = format!("[{}]", data.join(" "));
    open_with(&[schema, &data])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    #[test]
    fn a_chain_gives_the_answer_of_its_clauses_one_by_one(
        rows in proptest::collection::btree_map(-5i64..6, -4i64..5, 1..12),
        links in links(),
        order in any::<u64>(),
    ) {
        // Distinct `?a`: the find set has one row per entity (no `:with` needed).
        let rows: Vec<(i64, f64)> = rows.into_iter().map(|(a, b)| (a, b as f64 * 0.75)).collect();
        let (_dir, db) = sample(&rows);
        let fns = links.iter().filter(|l| matches!(l, Link::Fn(..))).count();
        let mut clauses = vec!["[?e :a ?v0]".to_string(), "[?e :b ?v1]".to_string()];
        let mut before = 0;
        for l in &links {
            clauses.push(clause(l, before));
            before += usize::from(matches!(l, Link::Fn(..)));
        }
        // Any clause order: the engine orders them itself.
        let n = clauses.len();
        for i in 0..n {
            clauses.swap(i, (order as usize >> ((i * 5) % 60)) % n);
        }
        let find: Vec<String> = (0..2 + fns).map(|v| format!("?v{v}")).collect();
        let q = format!("[:find {} :where {}]", find.join(" "), clauses.join(" "));
        let want = model(&rows, &links);
        let snap = db.db().unwrap();
        prop_assert_eq!(rows_of(&snap.q(&q, &[]).unwrap()), want.clone(), "{}", q);
        // `explain` runs one clause a step: the same answer.
        let traced = snap.q_with(&q, &[], &QueryOptions::default().explain(true)).unwrap();
        prop_assert_eq!(rows_of(&traced.result), want, "explain: {}", q);
    }
}

/// (query, expected result as EDN, or `!text` for an error whose message holds `text`).
#[test]
fn a_chain_keeps_what_each_clause_does() {
    let (_dir, db) = open_with(&[
        r#"[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#,
        r#"[{:n 1} {:n 2} {:n 3} {:n 9223372036854775807}]"#,
    ]);
    db.register_query_fn("half", |args| match &args[0] {
        datalith::codec::Value::Long(x) => Ok(datalith::codec::Value::Long(x / 2)),
        _ => Err("not a long".into()),
    });
    let rows: &[(&str, &str)] = &[
        // Plain arithmetic in place, then a test on its result.
        (
            "[:find ?n ?m ?k :where [?e :n ?n] [(< ?n 4)] [(* ?n 2) ?m] [(- ?m 1) ?k] [(> ?k 2)]]",
            "#{[2 4 3] [3 6 5]}",
        ),
        // A long that overflows is the call's to answer (here an error), not the fast path's.
        (
            "[:find ?m :where [?e :n ?n] [(> ?n 3)] [(+ ?n 1) ?m]]",
            "!overflow",
        ),
        // A nil result drops the row mid-chain; a user's function is called in one.
        (
            r#"[:find ?n ?h ?g :where [?e :n ?n] [(< ?n 4)] [(str ?n) ?s]
                [(re-pattern "^[13]$") ?re] [(re-find ?re ?s) ?m] [(half ?n) ?h] [(inc ?h) ?g]]"#,
            "#{[1 0 1] [3 1 2]}",
        ),
        // A user's function that fails fails the query.
        (
            r#"[:find ?h :where [?e :n ?n] [(< ?n 4)] [(str ?n) ?s] [(half ?s) ?h] [(inc ?h) ?g]]"#,
            "!not a long",
        ),
        // Mixed kinds: a double is contagious.
        (
            "[:find ?n ?x :where [?e :n ?n] [(< ?n 3)] [(* ?n 1.5) ?x] [(+ ?x 1) ?y] [(> ?y 3.0)]]",
            "#{[2 3.0]}",
        ),
    ];
    let snap = db.db().unwrap();
    for (q, want) in rows {
        match (want.strip_prefix('!'), snap.q(q, &[])) {
            (Some(text), Err(e)) => {
                assert!(e.to_string().to_lowercase().contains(text), "{q}: {e}")
            }
            (None, Ok(got)) => assert_eq!(rows_of(&got), rows_of(&read_one(want).unwrap()), "{q}"),
            (_, got) => panic!("{q}: got {got:?}, want {want}"),
        }
    }
    // A built-in redefined by the user is the user's in a chain too.
    db.register_query_fn("+", |_| Ok(datalith::codec::Value::Long(0)));
    let got = snap.q(
        "[:find ?n ?m :where [?e :n ?n] [(< ?n 3)] [(+ ?n 1) ?m] [(* ?m 2) ?k]]",
        &[],
    );
    // The snapshot took the functions when it was made: a new one sees the redefinition.
    drop(got);
    let snap = db.db().unwrap();
    let got = snap
        .q(
            "[:find ?n ?m :where [?e :n ?n] [(< ?n 3)] [(+ ?n 1) ?m] [(* ?m 2) ?k]]",
            &[],
        )
        .unwrap();
    assert_eq!(rows_of(&got), rows_of(&read_one("#{[1 0] [2 0]}").unwrap()));
}
