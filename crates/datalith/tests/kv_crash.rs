//! Durability for real: a child process writes through `transact_kv`, `transact_kv_async` and
//! the callback form, printing every key the engine acknowledged as durable; the parent kills
//! it with SIGKILL at a random moment, reopens the store, and checks every acknowledged key.
//! Every 50th write is a group of blobs, which skips the log (written once, into the data file).

mod common;

use common::crash::{cycles, run_and_kill, Acker};
use datalith::kv::{EnvOptions, Environment, KvOp, TableKind};
use std::collections::HashSet;

const DIR_VAR: &str = "DATALITH_CRASH_DIR";
const CYCLE_VAR: &str = "DATALITH_CRASH_CYCLE";

#[test]
#[ignore = "the child process of kill_9_never_loses_an_acknowledged_write"]
fn crash_child() {
    let dir = std::env::var(DIR_VAR).expect("run by the crash test");
    let cycle: u32 = std::env::var(CYCLE_VAR).unwrap().parse().unwrap();
    let env = Environment::open(&dir, EnvOptions::default()).unwrap();
    let t = env.table("acked", TableKind::Plain).unwrap();
    let out = Acker::new();
    let mut pending = std::collections::VecDeque::new();
    for i in 0u64.. {
        let key = format!("{cycle}/{i}");
        let value = vec![(i % 251) as u8; 100 + (i % 3000) as usize];
        if i % 50 == 49 {
            // A group of blobs (64 of 10 KB): it skips the log and is acknowledged after the
            // checkpoint that makes it durable (`limits::LOG_DIRECT_BLOB_BYTES`).
            let keys: Vec<String> = (0..64).map(|j| format!("{key}/blob{j}")).collect();
            let ops = keys
                .iter()
                .map(|k| KvOp::put(&t, k.clone(), vec![(i % 251) as u8; 10_000]))
                .collect();
            env.transact_kv(ops).unwrap();
            keys.iter().for_each(|k| out.ack(k));
            continue;
        }
        match i % 3 {
            0 => {
                env.transact_kv(vec![KvOp::put(&t, key.clone(), value)])
                    .unwrap();
                out.ack(&key);
            }
            1 => {
                pending.push_back((
                    key.clone(),
                    env.transact_kv_async(vec![KvOp::put(&t, key, value)]),
                ));
                if pending.len() > 64 {
                    let (k, h) = pending.pop_front().unwrap();
                    h.wait().unwrap();
                    out.ack(&k);
                }
            }
            _ => {
                let out = out.clone();
                let k = key.clone();
                env.transact_kv_with_callback(vec![KvOp::put(&t, key, value)], move |r| {
                    r.unwrap();
                    out.ack(&k);
                });
            }
        }
    }
}

#[test]
fn kill_9_never_loses_an_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut all_acked: HashSet<String> = HashSet::new();
    for cycle in 0..cycles() {
        let acked = run_and_kill(
            "crash_child",
            &[
                (DIR_VAR, dir.path().display().to_string()),
                (CYCLE_VAR, cycle.to_string()),
            ],
        );
        assert!(
            !acked.is_empty() || cycle > 0,
            "the child acknowledged nothing in cycle {cycle}"
        );
        all_acked.extend(acked);
        let env = Environment::open(dir.path(), EnvOptions::default()).expect("reopens cleanly");
        let t = env.table("acked", TableKind::Plain).unwrap();
        let txn = env.read().unwrap();
        let view = txn.view();
        let missing: Vec<_> = all_acked
            .iter()
            .filter(|k| view.get(&t, k.as_bytes()).unwrap().is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "cycle {cycle}: {} acknowledged keys lost, e.g. {:?}",
            missing.len(),
            missing.first()
        );
    }
    assert!(
        all_acked.len() > 100,
        "too few writes to mean anything: {}",
        all_acked.len()
    );
}
