//! RocksDB as the seed ran it: compression off, `sync=false` puts (each appends to the WAL
//! with a `write` call), `FlushWAL(true)` every 500 ms (one fsync of the WAL). Everything else
//! is RocksDB's default.

use rocksdb::{DBCompressionType, Options, WriteOptions, DB};
use std::path::Path;

use super::{fingerprint, SyncEngine};
use crate::common::BenchError;

const NAME: &str = "rocksdb";

/// One RocksDB database directory (a [`super::Synchronous`] store: its counts and flush
/// latencies are kept there).
pub struct Rocks {
    db: DB,
    write: WriteOptions,
}

impl Rocks {
    /// Creates the database in `dir`.
    pub fn open(dir: &Path) -> Result<Rocks, BenchError> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::None);
        opts.set_bottommost_compression_type(DBCompressionType::None);
        let db = DB::open(&opts, dir).map_err(BenchError::store(NAME, "open"))?;
        let mut write = WriteOptions::default();
        write.set_sync(false);
        Ok(Rocks { db, write })
    }
}

impl SyncEngine for Rocks {
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError> {
        self.db
            .put_opt(u64::from(key).to_be_bytes(), blob, &self.write)
            .map_err(BenchError::store(NAME, "put"))
    }

    fn flush(&mut self) -> Result<(), BenchError> {
        self.db
            .flush_wal(true)
            .map_err(BenchError::store(NAME, "FlushWAL"))
    }

    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError> {
        let v = self
            .db
            .get(u64::from(key).to_be_bytes())
            .map_err(BenchError::store(NAME, "get"))?;
        Ok(v.map(|v| (v.len(), fingerprint(&v))))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let mut n = 0;
        for item in self.db.iterator(rocksdb::IteratorMode::Start) {
            item.map_err(BenchError::store(NAME, "iterate"))?;
            n += 1;
        }
        Ok(n)
    }
}
