//! The data file under churn: `ENTITIES` entities (10,000) whose one cardinality-one
//! attribute is updated `UPDATES` times in all (1,000,000), `BATCH` updates a transaction
//! (100), `INFLIGHT` transactions in flight (4), on a `Durable` database without the
//! transaction log (whose table keeps every update for good) and with no reader held. The
//! live data stays the same size, so the data file should too (issue 57). Prints the sizes
//! of the data file, the log and the lock file every tenth of the run and at the end (after
//! closing, and after a compacting copy).
//!
//! `cargo run --release -p datalith --example churn` (`DIR=path` keeps the database there; `TXLOG=1`
//! keeps the transaction log; `APPLY_MS=0` writes each group into LMDB at once, as many LMDB
//! commits as transactions, each copying the pages it touches: the worst case for the file).

use std::collections::VecDeque;
use std::path::Path;
use std::time::Instant;

use datalith::codec::{Keyword, Value};
use datalith::edn::read_one;
use datalith::kv::Durability;
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxValue};
use datalith::{Database, DbOptions};

fn var(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn sizes(dir: &Path) -> String {
    let mb = |name: &str| size(&dir.join(name)) as f64 / 1e6;
    format!(
        "data.mdb {:.2} MB, txlog.dlog {:.2} MB, lock.mdb {:.2} MB",
        mb("data.mdb"),
        mb(datalith::kv::wal::LOG_FILE),
        mb("lock.mdb")
    )
}

fn main() {
    let entities = var("ENTITIES", 10_000) as i64;
    let updates = var("UPDATES", 1_000_000);
    let batch = var("BATCH", 100).max(1);
    let inflight = var("INFLIGHT", 4).max(1) as usize;
    let temp = tempfile::tempdir().unwrap();
    let dir = std::env::var("DIR").map_or_else(|_| temp.path().to_path_buf(), Into::into);
    let mut options = DbOptions::with_durability(Durability::Durable);
    options.skip_tx_log = var("TXLOG", 0) == 0;
    if let Ok(ms) = std::env::var("APPLY_MS") {
        options.env.log_apply_delay =
            std::time::Duration::from_millis(ms.parse().expect("APPLY_MS: milliseconds"));
    }
    let apply_delay = options.env.log_apply_delay;
    let db = Database::open(&dir, options).unwrap();
    let schema = "[{:db/ident :e/id :db/valueType :db.type/long :db/unique :db.unique/identity :db/cardinality :db.cardinality/one}
                   {:db/ident :e/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";
    db.transact(TxData::from_edn(&read_one(schema).unwrap()).unwrap())
        .unwrap();
    let (id, v) = (Keyword::parse(":e/id"), Keyword::parse(":e/v"));
    for chunk in (0..entities).collect::<Vec<_>>().chunks(1000) {
        let mut data = TxData::default();
        for &e in chunk {
            data = data.map(
                EntityMap::with_id(EntityRef::Temp(Tempid::Negative(-1 - e)))
                    .set(id.clone(), TxValue::Value(Value::Long(e)))
                    .set(v.clone(), TxValue::Value(Value::Long(0))),
            );
        }
        db.transact(data).unwrap();
    }
    println!(
        "{entities} entities, {updates} updates, batch {batch}, {inflight} in flight, tx log {}, apply delay {:?}",
        !options_skip(&db),
        apply_delay
    );
    println!("loaded: {}", sizes(&dir));
    let started = Instant::now();
    let mut pending = VecDeque::new();
    let mut done = 0u64;
    let mut next_report = updates / 10;
    // A cheap generator: every entity gets updated about equally often, in no order, and at
    // most once a transaction (a second value in one transaction would conflict).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while done < updates {
        let mut data = TxData::default();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let start = x % entities as u64;
        for j in 0..batch.min(updates - done) {
            // A stride coprime with 10,000 spreads the batch over the entities, each once.
            let e = ((start + j * 7_919) % entities as u64) as i64;
            data = data.map(
                EntityMap::with_id(EntityRef::Lookup(id.clone(), Value::Long(e))).set(
                    v.clone(),
                    TxValue::Value(Value::Long((x >> 20) as i64 + j as i64)),
                ),
            );
            done += 1;
        }
        pending.push_back(db.transact_async(data));
        if pending.len() >= inflight {
            pending.pop_front().unwrap().wait().unwrap();
        }
        if done >= next_report {
            next_report += updates / 10;
            println!(
                "{done} updates, {:.1} s: {}",
                started.elapsed().as_secs_f64(),
                sizes(&dir)
            );
        }
    }
    for h in pending {
        h.wait().unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{updates} updates in {secs:.1} s ({:.0} updates/s): {}",
        updates as f64 / secs,
        sizes(&dir)
    );
    let copy = tempfile::tempdir().unwrap();
    db.env().copy_compacted(copy.path()).unwrap();
    drop(db);
    println!("closed: {}", sizes(&dir));
    println!(
        "compacted copy: data.mdb {:.2} MB",
        size(&copy.path().join("data.mdb")) as f64 / 1e6
    );
}

fn options_skip(db: &Database) -> bool {
    !db.keeps_tx_log()
}

/// The bench binary's allocator, as in the other examples.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
