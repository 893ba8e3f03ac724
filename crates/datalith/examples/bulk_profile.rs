//! Bulk-load profile: `fill_db` of workload Q's 100K datoms (20,000 generated people) into a
//! fresh `NoSync` database, N times (default 20); prints the median and minimum wall and CPU
//! milliseconds. `cargo run --release --example bulk_profile -- 40`, or under `perf record`.
//! (No peers: `datalith-bench query --tasks init` compares with SQLite.)

use std::time::Instant;

use datalith::kv::Durability;
use datalith::{Database, DbOptions};

mod common;

fn main() {
    let runs: usize = std::env::args().nth(1).map_or(20, |s| s.parse().unwrap());
    let datoms = common::people_datoms(20_000);
    let mut times = Vec::new();
    let mut cpus = Vec::new();
    for _ in 0..runs {
        let dir = tempfile::tempdir().unwrap();
        let db =
            Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
        db.transact(common::people_schema()).unwrap();
        let c0 = cpu();
        let t = Instant::now();
        db.fill_db(&datoms).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        cpus.push(cpu() - c0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    cpus.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "cpu ms: median {:.1} min {:.1}",
        cpus[cpus.len() / 2],
        cpus[0]
    );
    println!(
        "fill 100K datoms nosync: median {:.1} ms min {:.1} ms",
        times[times.len() / 2],
        times[0]
    );
}

/// CPU milliseconds of the whole process (every thread) so far.
fn cpu() -> f64 {
    // SAFETY: `getrusage` only writes into the zeroed struct it is handed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF is valid and `ru` is a valid, writable `rusage`.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |x: libc::timeval| x.tv_sec as f64 * 1e3 + x.tv_usec as f64 / 1e3;
    t(ru.ru_utime) + t(ru.ru_stime)
}
