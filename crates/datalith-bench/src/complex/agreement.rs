//! The workload's own check, run by `cargo test -p datalith-bench`: SF 0.01 generated,
//! loaded into Datalith and SQLite, every query run on both, and Datalith's answer compared
//! with SQLite's (the reference here: PostgreSQL is not started in tests).

use std::time::Duration;

use super::answer::compare;
use super::datalith_peer::DatalithPeer;
use super::peer::Peer;
use super::queries::{self, NAMES};
use super::sqlite_peer::SqlitePeer;
use super::{generate, steps};

const SF: f64 = 0.01;

#[test]
fn datalith_agrees_with_sqlite_at_sf_001() {
    let tmp = tempfile::tempdir().unwrap();
    let only: Vec<String> = std::env::var("COMPLEX_QUERIES")
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let names = queries::pick(&only).unwrap();
    let (data, _) = generate::ensure(tmp.path(), SF, |l| eprintln!("{l}")).unwrap();
    let (mut sqlite, _) =
        SqlitePeer::open_or_load(&data.join("sqlite"), &data, SF, |l| eprintln!("{l}")).unwrap();
    let (mut dl, _) =
        DatalithPeer::open_or_load(&data.join("datalith"), &data, SF, |l| eprintln!("{l}"))
            .unwrap();
    let qs = queries::load(&queries::default_dir(), &names, SF).unwrap();
    let limit = Duration::from_secs(300);
    let mut failures = Vec::new();
    for q in &qs {
        steps::parse(&q.datalog).unwrap_or_else(|e| panic!("{}: {e}", q.name));
        let want = sqlite
            .run(q, limit)
            .unwrap_or_else(|e| panic!("{} on sqlite: {e:?}", q.name));
        assert!(!want.rows.is_empty(), "{}: sqlite found no rows", q.name);
        let t = std::time::Instant::now();
        match dl.run(q, limit) {
            Ok(got) => {
                eprintln!(
                    "{}: {} rows, datalith {:.1} ms",
                    q.name,
                    got.rows.len(),
                    t.elapsed().as_secs_f64() * 1e3
                );
                if let Err(e) = compare(&want, &got, q.ordered) {
                    failures.push(format!("{}: {e}", q.name));
                }
            }
            Err(e) => failures.push(format!("{}: {e:?}", q.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = NAMES;
}
