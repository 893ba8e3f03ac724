//! A KV table's whole contents, for tests that compare a store with a model.

use std::collections::BTreeMap;
use std::ops::Bound;

use datalith::kv::{Direction, Environment, Table};

/// Every key of `t` with its value, as of a snapshot begun now.
pub fn table_contents(env: &Environment, t: &Table) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let txn = env.read().unwrap();
    let view = txn.view();
    view.range(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .unwrap()
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}
