//! Datalith's KV API: `transact_kv` (sync) or `transact_kv_with_callback` (async).

use datalith::kv::{Durability, EnvOptions, Environment, KvOp, Table, TableKind};
use std::path::Path;

use super::key_bytes;
use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "datalith-kv";

pub struct DatalithKv {
    env: Environment,
    table: Table,
    asynchronous: bool,
}

impl DatalithKv {
    pub fn open(
        dir: &Path,
        durability: Durability,
        asynchronous: bool,
    ) -> Result<Self, BenchError> {
        let mut options = EnvOptions::with_durability(durability);
        options.initial_map_bytes = super::DATALITH_MAP_BYTES;
        let env = Environment::open(dir, options).map_err(BenchError::store(STORE, "open"))?;
        let table = env
            .table("bench", TableKind::Plain)
            .map_err(BenchError::store(STORE, "create table"))?;
        Ok(DatalithKv {
            env,
            table,
            asynchronous,
        })
    }
}

impl Condition for DatalithKv {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let ops: Vec<KvOp> = records
            .into_iter()
            .map(|r| KvOp::put(&self.table, key_bytes(r.key), r.value.into_bytes()))
            .collect();
        if self.asynchronous {
            self.env
                .transact_kv_with_callback(ops, move |r| done(r.map_err(|e| e.to_string())));
            return Ok(());
        }
        let result = self.env.transact_kv(ops);
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "transact_kv"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let txn = self.env.read().map_err(BenchError::store(STORE, "read"))?;
        let value = txn
            .view()
            .get(&self.table, &key_bytes(key))
            .map_err(BenchError::store(STORE, "get"))?;
        Ok(value.map(|v| String::from_utf8_lossy(v).into_owned()))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let txn = self.env.read().map_err(BenchError::store(STORE, "read"))?;
        let n = txn
            .view()
            .len(&self.table)
            .map_err(BenchError::store(STORE, "len"))?;
        Ok(n)
    }

    fn counters(&self) -> Option<serde_json::Value> {
        let c = self.env.commit_counters();
        Some(serde_json::json!({
            "commits": c.batches,
            "requests": c.requests,
            "largest_batch": c.largest_batch,
            "map_growths": c.map_growths,
            "log_records": c.log_records,
            "log_records_derived": c.log_records_derived,
            "log_bytes": c.log_bytes,
        }))
    }
}
