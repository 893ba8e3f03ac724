//! How fast the library applies W's batch-100 transactions handed to it as EDN, queued many
//! at once (as the replicated log's applier does), against the same as typed tx data:
//! `cargo run --release -p datalith --example apply_edn -- [TXS] [edn|typed] [map-gib] [ORDER]
//! [VALUES] [LMDB]`. `ORDER` `asc` (the default) queues the transactions in key order; `clients`
//! queues them as eight clients taking batches from one counter put them in a log, each
//! window of eight in a random order. `VALUES` `seq` (the default) makes values that ascend
//! with the key; `random` makes random ones (W's UUID text), written all over the AVE index.
//! `LMDB` `later` (the default) leaves LMDB to the background writer (`kv::unapplied`); `now`
//! has the committer write each group into LMDB at its commit (`log_apply_later` off). Both
//! rates are printed: transactions acknowledged (durable in the write-ahead log, visible to
//! `db()`), and in the data file (`applied_db()`).

use std::time::Instant;

use datalith::{Database, DbOptions, TxClock};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

const SCHEMA: &str = r#"[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one
  :db/unique :db.unique/identity}
 {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let txs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let mode = args.get(2).cloned().unwrap_or_else(|| "edn".into());
    let map_gib: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let order = args.get(4).cloned().unwrap_or_else(|| "asc".into());
    let values = args.get(5).cloned().unwrap_or_else(|| "seq".into());
    let lmdb = args.get(6).cloned().unwrap_or_else(|| "later".into());
    let mut rng = StdRng::seed_from_u64(7);
    let dir = tempfile::tempdir().unwrap();
    let mut options = DbOptions::default();
    options.env.initial_map_bytes = map_gib << 30;
    options.env.log_apply_later = lmdb != "now";
    let db = Database::open(dir.path(), options).unwrap();
    db.transact(SCHEMA).unwrap();
    let mut batches: Vec<usize> = (0..txs).collect();
    if order == "clients" {
        for window in batches.chunks_mut(8) {
            window.shuffle(&mut rng);
        }
    }
    let texts: Vec<String> = batches
        .iter()
        .map(|&i| {
            let maps: Vec<String> = (0..100)
                .map(|j| {
                    let k = 2 * (i * 100 + j + 1);
                    let head = match values.as_str() {
                        "random" => rng.random::<u32>() as usize,
                        _ => k * 7919,
                    };
                    format!(r#"{{:k {k} :v "{head:08x}-0000-4000-8000-{k:012x}"}}"#)
                })
                .collect();
            format!("[{}]", maps.join(" "))
        })
        .collect();
    let data: Vec<datalith::Edn> = texts.iter().map(|t| t.parse().unwrap()).collect();
    let started = Instant::now();
    for chunk in data.chunks(300) {
        let handles: Vec<_> = chunk
            .iter()
            .map(|d| match mode.as_str() {
                "edn" => db.transact_async_clocked(d, TxClock::AtLeast(0)),
                "edn-local" => db.transact_async(d),
                "typed-clocked" => db.transact_async_clocked(
                    datalith::TxData::from_edn(d).unwrap(),
                    TxClock::AtLeast(0),
                ),
                _ => db.transact_async(datalith::TxData::from_edn(d).unwrap()),
            })
            .collect();
        for h in handles {
            h.wait().unwrap();
        }
    }
    let secs = started.elapsed().as_secs_f64();
    db.env().apply_logged().unwrap();
    let file_secs = started.elapsed().as_secs_f64();
    println!(
        "{txs} transactions of 100 in {secs:.3} s: {:.1} tx/s ({} {mode} map={map_gib} GiB \
         {order} {values} lmdb {lmdb}); in the data file after {file_secs:.3} s: {:.1} tx/s",
        txs as f64 / secs,
        (txs * 100) as f64 / secs,
        txs as f64 / file_secs
    );
}
