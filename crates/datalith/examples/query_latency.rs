//! Quick latency check of the seed-003 queries on 20,000 generated people (no peers: use
//! `datalith-bench query` for the comparison). `cargo run --release --example query_latency`.

use std::time::Instant;

use datalith::codec::{Keyword, Value};
use datalith::edn::Edn;
use datalith::kv::Durability;
use datalith::{Database, DbOptions};

mod common;

/// The benchmark binary's allocator, so timings and profiles match `datalith-bench query`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let schema = common::people_schema();
    let datoms = common::people_datoms(20_000);
    let t = Instant::now();
    let db = Database::init_db(
        dir.path(),
        DbOptions::with_durability(Durability::Durable),
        schema,
        &datoms,
    )
    .unwrap();
    println!(
        "init_db 100K datoms: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let queries = [
        ("q1", r#"[:find ?e :where [?e :name "Ivan"]]"#, vec![]),
        (
            "q2",
            r#"[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a]]"#,
            vec![],
        ),
        (
            "q2-switch",
            r#"[:find ?e ?a :where [?e :age ?a] [?e :name "Ivan"]]"#,
            vec![],
        ),
        (
            "q3",
            r#"[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a] [?e :sex :male]]"#,
            vec![],
        ),
        (
            "q4",
            r#"[:find ?e ?l ?a :where [?e :name "Ivan"] [?e :last-name ?l] [?e :age ?a] [?e :sex :male]]"#,
            vec![],
        ),
        (
            "q5",
            r#"[:find ?e1 ?l ?a :where [?e :name "Ivan"] [?e :age ?a] [?e1 :age ?a] [?e1 :last-name ?l]]"#,
            vec![],
        ),
        (
            "qpred1",
            r#"[:find ?e ?s :where [?e :salary ?s] [(> ?s 50000)]]"#,
            vec![],
        ),
        (
            "qpred2",
            r#"[:find ?e ?s :in $ ?min_s :where [?e :salary ?s] [(> ?s ?min_s)]]"#,
            vec![Edn::Long(50000)],
        ),
        (
            "lookup-q",
            r#"[:find ?l :where [?e :name "Ivan"] [?e :last-name ?l]]"#,
            vec![],
        ),
    ];
    let snap = db.db().unwrap();
    let only = std::env::var("ONLY").ok();
    // Seconds per query (longer for profiling).
    let secs: f64 = std::env::var("SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.5);
    for (name, q, inputs) in &queries {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let mut times = Vec::new();
        let mut count = 0;
        let start = Instant::now();
        // RUNS: exactly that many runs (for instruction counts: `perf stat` with RUNS=n and
        // RUNS=0 and the difference over n).
        let runs: Option<usize> = std::env::var("RUNS").ok().and_then(|s| s.parse().ok());
        while match runs {
            Some(n) => times.len() < n,
            None => start.elapsed().as_secs_f64() < secs || times.len() < 5,
        } {
            let t = Instant::now();
            let r = snap.q(q, inputs).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e3);
            count = match r {
                Edn::Set(s) => s.len(),
                Edn::Vector(v) => v.len(),
                _ => 1,
            };
        }
        times.sort_by(|a, b| a.total_cmp(b));
        if times.is_empty() {
            continue;
        }
        println!(
            "{name:10} median {:8.3} ms  n={count}",
            times[times.len() / 2]
        );
        if std::env::var("EXPLAIN").is_ok() {
            for s in snap.explain(q, inputs).unwrap().1.steps {
                println!(
                    "    est {:>8} actual {:>8}  {:<8}  {}",
                    s.estimated, s.actual, s.index, s.what
                );
            }
        }
    }
    let name = snap.attr(&Keyword::parse(":name")).unwrap().id;
    let last = snap.attr(&Keyword::parse(":last-name")).unwrap().id;
    let mut times = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let r = snap.reader();
        let mut out = Vec::new();
        for e in r.entities_with(name, &Value::string("Ivan")).unwrap() {
            out.extend(r.values(e, last).unwrap());
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!out.is_empty());
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!("lookup-raw median {:8.3} ms", times[times.len() / 2]);
}
