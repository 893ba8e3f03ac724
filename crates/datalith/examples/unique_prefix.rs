//! How fast transactions of 100 entities upsert on a unique string whose values share a
//! beginning: `cargo run --release -p datalith --example unique_prefix -- [PREFIX] [TXS]
//! [sync|async]`. Each value is `PREFIX` and a 10-digit number, ascending. `sync` calls
//! `transact` one after another; `async` queues them all at once (the committer then takes
//! many in a batch). The committer tells a uniqueness check from a read that may meet a write
//! still waiting for LMDB by the keys' first bytes (`kv::pending`): with a long `PREFIX`
//! (`https://data.example.org/people/`) this shows whether those bytes are enough.

use datalith::{Database, DbOptions};
use std::time::Instant;
const SCHEMA: &str = r#"[{:db/ident :u :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let prefix = args.get(1).cloned().unwrap_or_default();
    let txs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3000);
    let mode = args.get(3).cloned().unwrap_or_else(|| "sync".into());
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(SCHEMA).unwrap();
    let texts: Vec<String> = (0..txs)
        .map(|i| {
            let maps: Vec<String> = (0..100)
                .map(|j| {
                    let k = i * 100 + j;
                    format!(r#"{{:u "{prefix}{k:010}" :n {k}}}"#)
                })
                .collect();
            format!("[{}]", maps.join(" "))
        })
        .collect();
    let t = Instant::now();
    if mode == "sync" {
        for x in &texts {
            db.transact(x.as_str()).unwrap();
        }
    } else {
        let hs: Vec<_> = texts
            .iter()
            .map(|x| db.transact_async(x.as_str()))
            .collect();
        for h in hs {
            h.wait().unwrap();
        }
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "prefix={:?} mode={mode} {txs} txs {:.3} s {:.0} tx/s",
        prefix,
        s,
        txs as f64 / s
    );
}
