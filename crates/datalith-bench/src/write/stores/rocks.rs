//! RocksDB peer (cargo feature `rocksdb`): one `WriteBatch` per call, written with
//! `sync = true` (the WAL is fsynced per batch), compression off.

use rocksdb::{DBCompressionType, IteratorMode, Options, WriteBatch, WriteOptions, DB};
use std::path::Path;

use super::key_bytes;
use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "rocksdb";

pub struct Rocks {
    db: DB,
    sync: WriteOptions,
}

impl Rocks {
    pub fn open(dir: &Path) -> Result<Self, BenchError> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::None);
        let db = DB::open(&opts, dir).map_err(BenchError::store(STORE, "open"))?;
        let mut sync = WriteOptions::default();
        sync.set_sync(true);
        Ok(Rocks { db, sync })
    }
}

impl Condition for Rocks {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let mut batch = WriteBatch::default();
        for r in &records {
            batch.put(key_bytes(r.key), r.value.as_bytes());
        }
        let result = self.db.write_opt(batch, &self.sync);
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "write"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let v = self
            .db
            .get(key_bytes(key))
            .map_err(BenchError::store(STORE, "get"))?;
        Ok(v.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let mut n = 0u64;
        for item in self.db.iterator(IteratorMode::Start) {
            item.map_err(BenchError::store(STORE, "iterate"))?;
            n += 1;
        }
        Ok(n)
    }
}
