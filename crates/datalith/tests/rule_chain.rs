//! A recursive rule over a long chain runs in memory proportional to its answer and in
//! work linear in the chain, for both the left- and the right-recursive way of writing it.
//! CI uses 20,000 edges; `DATALITH_CHAIN=1000000 cargo test --release --test rule_chain`
//! runs the full-size check.

use datalith::codec::{Keyword, Value};
use datalith::edn::{read_one, Edn};
use datalith::kv::Durability;
use datalith::raw::USER_PARTITION_START;
use datalith::{Database, DbOptions};

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn reachability_over_a_long_chain() {
    let n: u64 = std::env::var("DATALITH_CHAIN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let schema = datalith::TxData::from_edn(
        &read_one(
            "[{:db/ident :next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]",
        )
        .unwrap(),
    )
    .unwrap();
    let next = Keyword::parse(":next");
    let datoms: Vec<_> = (0..n)
        .map(|i| {
            (
                USER_PARTITION_START + i,
                next.clone(),
                Value::Ref(USER_PARTITION_START + i + 1),
            )
        })
        .collect();
    let db = Database::init_db(
        dir.path(),
        DbOptions::with_durability(Durability::NoSync),
        schema,
        &datoms,
    )
    .unwrap();
    let snap = db.db().unwrap();
    let rules = [
        (
            "right",
            "[[(reach ?a ?b) [?a :next ?b]] [(reach ?a ?b) [?a :next ?c] (reach ?c ?b)]]",
        ),
        (
            "left",
            "[[(reach ?a ?b) [?a :next ?b]] [(reach ?a ?b) (reach ?a ?c) [?c :next ?b]]]",
        ),
    ];
    for (name, rule) in rules {
        let before = peak_rss_kb();
        let t = std::time::Instant::now();
        let r = snap
            .q(
                "[:find (count ?y) . :in $ % ?start :where (reach ?start ?y)]",
                &[
                    read_one(rule).unwrap(),
                    Edn::Long(USER_PARTITION_START as i64),
                ],
            )
            .unwrap();
        let grew_mb = peak_rss_kb().saturating_sub(before) / 1024;
        eprintln!(
            "{name}-recursive reach over {n} edges: {:?}, peak RSS grew {grew_mb} MB",
            t.elapsed()
        );
        assert_eq!(r, Edn::Long(n as i64), "{name}");
        // Linear memory: a few hundred bytes per answer, far from the n^2 pairs of a full closure.
        assert!(
            grew_mb < 64 + n / 1000,
            "{name}: peak RSS grew {grew_mb} MB for {n} edges"
        );
    }
}
