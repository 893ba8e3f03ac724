//! The conformance suite's queries, transactions and pull patterns, mutated (a form dropped,
//! repeated, swapped, or replaced by one of a pool of awkward forms: extreme numbers, idents
//! of the schema itself, excisions, tempids, nested clauses) and put to Datalith: each must
//! end in an answer or a typed error, never a panic, and after every committed transaction
//! of a dataset `check` finds the indexes, statistics, history and log consistent, also after
//! a reopen. Deterministic (`MUTATION_SEED`, `MUTATIONS` to explore further). Longer runs of
//! it found a planner estimate that overflowed (`[?a ?i]` before a pattern on a bound entity;
//! its case is in `deep_input.rs`) and excisions that took the schema out of the indexes but
//! not out of the log (this run finds those without the fix).

#[allow(dead_code)]
#[path = "conformance/cases.rs"]
mod cases;

use std::panic::{catch_unwind, AssertUnwindSafe};

use cases::Action;
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::pull::Eid;
use datalith::query::QueryOptions;
use datalith::raw::{Components, Index};
use datalith::{Database, Db, DbOptions, Input};

/// Forms a mutation puts in place of another.
const POOL: &[&str] = &[
    "?x",
    "?e",
    "_",
    "$",
    "%",
    "...",
    "nil",
    "true",
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "##NaN",
    "##Inf",
    "1/2",
    "1N",
    "1.0M",
    "\"s\"",
    "\"\"",
    ":a",
    ":db/id",
    ":db/ident",
    ":db/cardinality",
    ":db.cardinality/many",
    ":db/unique",
    ":db.unique/identity",
    ":db/txInstant",
    ":db.type/tuple",
    "*",
    "[]",
    "()",
    "{}",
    "#{}",
    "[?x ...]",
    "[[?x ?y]]",
    "(count ?x)",
    "(min 2 ?v)",
    "(pull ?e [*])",
    "[(< ?x 1)]",
    "[(ground 1) ?x]",
    "(not [?e :a])",
    "(or [?e :a] [?e :b])",
    "(or-join [?e] [?e :a])",
    "(and)",
    "(or)",
    "[?e :db/ident ?v]",
    "[$ ?e ?a ?v ?t ?op]",
    "[(get-else $ ?e :a 0) ?x]",
    "[(missing? $ ?e :a)]",
    "[(range 0 3) [?x ...]]",
    "#inst \"1960-01-01\"",
    "#uuid \"00000000-0000-0000-0000-000000000001\"",
    "[:db/ident :db/doc]",
    "\"datomic.tx\"",
    "[:db/add \"t\" :db/doc \"x\"]",
    "{:db/id \"datomic.tx\" :db/doc \"m\"}",
    ":db/excise",
    "{:db/excise :db/doc}",
    "[:db/retractEntity 1]",
    "[:db/cas 1 :a 1 2]",
    "(limit :a 1)",
    "{:a ...}",
    "17592186045418",
    "1048576",
];

/// xorshift64: the same mutations for the same seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

struct Mutator {
    rng: Rng,
    pool: Vec<Edn>,
}

impl Mutator {
    fn new(seed: u64) -> Mutator {
        let pool = POOL
            .iter()
            .map(|t| read_one(t).unwrap_or_else(|e| panic!("{t}: {e}")))
            .collect();
        Mutator {
            rng: Rng(seed | 1),
            pool,
        }
    }

    fn any(&mut self) -> Edn {
        self.pool[self.rng.below(self.pool.len())].clone()
    }

    fn mutate(&mut self, e: &Edn, depth: usize) -> Edn {
        if depth > 0 && self.rng.below(100) < 7 {
            return self.any();
        }
        match e {
            Edn::Vector(items) | Edn::List(items) => {
                let mut items: Vec<Edn> = items
                    .iter()
                    .map(|i| match self.rng.below(3) {
                        0 => self.mutate(i, depth + 1),
                        _ => i.clone(),
                    })
                    .collect();
                let n = items.len();
                match self.rng.below(10) {
                    0 if n > 0 => {
                        items.remove(self.rng.below(n));
                    }
                    1 => {
                        let any = self.any();
                        items.insert(self.rng.below(n + 1), any);
                    }
                    2 if n > 1 => items.swap(self.rng.below(n), self.rng.below(n)),
                    3 if n > 0 => {
                        let i = self.rng.below(n);
                        items.insert(i, items[i].clone());
                    }
                    _ => {}
                }
                match e {
                    Edn::Vector(_) => Edn::Vector(items),
                    _ => Edn::List(items),
                }
            }
            Edn::Map(pairs) => {
                let mut pairs: Vec<(Edn, Edn)> = pairs
                    .iter()
                    .map(|(k, v)| {
                        let k = match self.rng.below(8) {
                            0 => self.mutate(k, depth + 1),
                            _ => k.clone(),
                        };
                        let v = match self.rng.below(3) {
                            0 => self.mutate(v, depth + 1),
                            _ => v.clone(),
                        };
                        (k, v)
                    })
                    .collect();
                if self.rng.below(6) == 0 {
                    pairs.push((self.any(), self.any()));
                }
                Edn::Map(pairs)
            }
            _ if self.rng.below(100) < 15 => self.any(),
            other => other.clone(),
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Runs `f`; a panic is a finding, with what was put to it.
fn no_panic<T>(findings: &mut Vec<String>, what: impl Fn() -> String, f: impl FnOnce() -> T) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        findings.push(what());
    }
}

fn check_clean(findings: &mut Vec<String>, when: &str, db: &Db) {
    match db.check() {
        Ok(report) if report.is_ok() => {}
        Ok(report) => findings.push(format!("{when}: check found {:?}", report.problems)),
        Err(e) => findings.push(format!("{when}: check failed: {e}")),
    }
}

#[test]
fn mutated_inputs_end_in_answers_or_typed_errors_and_keep_the_database_consistent() {
    let rounds = env_number("MUTATIONS", 10) as usize;
    let mut m = Mutator::new(env_number("MUTATION_SEED", 20261207));
    let datasets = cases::datasets();
    let all = cases::cases();
    let mut findings = Vec::new();
    let mut committed = 0;
    for (name, dataset) in &datasets {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        for tx in [&dataset.schema, &dataset.data]
            .into_iter()
            .chain(&dataset.txs)
        {
            if tx.as_seq().is_some_and(|s| !s.is_empty()) {
                db.transact(tx).unwrap();
            }
        }
        let mine = || all.iter().filter(|c| c.dataset == *name);
        let txs: Vec<&Edn> = mine()
            .flat_map(|c| match &c.action {
                Action::Tx { txs, .. } | Action::Report { txs, .. } | Action::Time { txs, .. } => {
                    txs.iter().collect()
                }
                _ => Vec::new(),
            })
            .chain([&dataset.data])
            .collect();
        let queries: Vec<&Edn> = mine()
            .filter_map(|c| match &c.action {
                Action::Query { query, .. } => Some(query),
                Action::Tx { then, .. } => Some(then),
                _ => None,
            })
            .collect();
        let patterns: Vec<&Edn> = mine()
            .filter_map(|c| match &c.action {
                Action::Pull { pattern, .. } => Some(pattern),
                _ => None,
            })
            .collect();
        // Transactions, committed for real.
        let mut points = Vec::new();
        for _ in 0..rounds * txs.len().min(40) {
            let pick = m.rng.below(txs.len());
            let tx = m.mutate(txs[pick], 0);
            let text = || format!("transact on {name}: {}", to_edn_string(&tx));
            match catch_unwind(AssertUnwindSafe(|| db.transact(&tx))) {
                Ok(Ok(report)) => {
                    committed += 1;
                    points.push(report.tx);
                }
                Ok(Err(_)) => {}
                Err(_) => findings.push(text()),
            }
        }
        let now = db.db().unwrap();
        check_clean(
            &mut findings,
            &format!("{name} after its transactions"),
            &now,
        );
        // Queries on the database now and in time, raw index walks, pulls.
        for _ in 0..rounds * queries.len().max(patterns.len()).min(60) {
            let view = match (m.rng.below(4), points.is_empty()) {
                (0, false) => now.as_of(points[m.rng.below(points.len())]).unwrap(),
                (1, false) => now.since(points[m.rng.below(points.len())]).unwrap(),
                (2, _) => now.history(),
                _ => now.clone(),
            };
            let pick = m.rng.below(queries.len());
            if let Some(q) = queries.get(pick) {
                let text = to_edn_string(&m.mutate(q, 0));
                let inputs = [Input::Db(view.clone()), Input::Value(m.any())];
                let options = QueryOptions::default().timeout_ms(500);
                no_panic(
                    &mut findings,
                    || format!("query on {name}: {text}"),
                    || datalith::q_with(&text, &inputs, &options),
                );
            }
            let index = [Index::Eav, Index::Aev, Index::Ave, Index::Vae][m.rng.below(4)];
            let given: Vec<Edn> = (0..m.rng.below(4)).map(|_| m.any()).collect();
            no_panic(
                &mut findings,
                || format!("datoms on {name}: {index:?} {given:?}"),
                || {
                    if let Ok(Some(c)) = Components::from_edn(&view, index, &given) {
                        let _ = view.datoms(index, &c);
                    }
                },
            );
            let pick = m.rng.below(patterns.len());
            if let Some(p) = patterns.get(pick) {
                let pattern = to_edn_string(&m.mutate(p, 0));
                let eid = m.any();
                no_panic(
                    &mut findings,
                    || format!("pull on {name}: {pattern} of {eid}"),
                    || {
                        if let Ok(eid) = Eid::from_edn(&eid) {
                            let _ = view.pull(&pattern, eid);
                        }
                    },
                );
            }
        }
        drop(now);
        drop(db);
        let again = Database::open(dir.path(), DbOptions::default()).unwrap();
        check_clean(
            &mut findings,
            &format!("{name} reopened"),
            &again.db().unwrap(),
        );
    }
    assert!(committed > 0, "no mutated transaction committed");
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}
