//! Quick throughput check of Datalog writes through the group commit (the W workload's
//! shape: `{:k even-int :v uuid-string}` upserts, batch 1, 1000 in flight). No peers: use
//! `datalith-bench write` for comparisons. `cargo run --release --example write_throughput`.

use std::collections::VecDeque;
use std::time::Instant;

use datalith::codec::{Keyword, Value};
use datalith::edn::read_one;
use datalith::kv::Durability;
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxValue};
use datalith::{Database, DbOptions};

fn main() {
    let n: i64 = std::env::var("N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let batch: i64 = std::env::var("BATCH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let durability = match std::env::var("DURABLE").as_deref() {
        Ok("1") => Durability::Durable,
        _ => Durability::NoSync,
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::with_durability(durability)).unwrap();
    db.transact(
        datalith::TxData::from_edn(
            &read_one(
                "[{:db/ident :k :db/valueType :db.type/long :db/unique :db.unique/identity :db/cardinality :db.cardinality/one}
                  {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
            )
            .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let (k, v) = (Keyword::parse(":k"), Keyword::parse(":v"));
    let t = Instant::now();
    let mut inflight = VecDeque::new();
    let mut i = 0;
    while i < n {
        let mut data = TxData::default();
        for j in 0..batch {
            data = data.map(
                EntityMap::with_id(EntityRef::Temp(Tempid::Negative(-1 - j)))
                    .set(k.clone(), TxValue::Value(Value::Long(2 * (i + j) + 2)))
                    .set(
                        v.clone(),
                        TxValue::Value(Value::string("0b5e8a4c-1f0e-4a3e-9d7b-6c2f1e0a9b8c")),
                    ),
            );
        }
        i += batch;
        inflight.push_back(db.transact_async(data));
        if inflight.len() >= 1000 {
            inflight.pop_front().unwrap().wait().unwrap();
        }
    }
    for h in inflight {
        h.wait().unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    let c = db.env().commit_counters();
    println!(
        "{n} writes, batch {batch}, {durability:?}: {:.2} s, {:.0} writes/s, {} commits, largest batch {}",
        secs,
        n as f64 / secs,
        c.batches,
        c.largest_batch
    );
}

/// The bench binary's allocator, so profiles of this example match `datalith-bench write`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
