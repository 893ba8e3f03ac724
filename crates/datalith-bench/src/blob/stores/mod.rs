//! The stores under test, behind one small trait, and the names `--stores` accepts.
//!
//! - [`datalith`]: Datalith KV in several ways of making 500 ms of puts durable.
//! - [`sqlite`]: SQLite, WAL, `synchronous=FULL`, one transaction per flush.
//! - [`rocks`]: RocksDB, `sync=false` puts and `FlushWAL(true)` per flush (feature `rocksdb`).

pub mod datalith;
#[cfg(feature = "rocksdb")]
pub mod rocks;
pub mod sqlite;

use std::path::Path;
use std::time::Instant;

use crate::common::BenchError;

/// A store the paced writer drives. Puts are not durable until a flush covering them has
/// completed; the store counts how many are.
pub trait BlobStore {
    /// Writes `blob` under `key` (not yet durable).
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError>;

    /// Makes every earlier put durable. A pipelined store may only start the work and return;
    /// [`BlobStore::durable_puts`] tells when it is done.
    fn flush(&mut self) -> Result<(), BenchError>;

    /// Blocks until every flush started so far has completed.
    fn finish(&mut self) -> Result<(), BenchError>;

    /// Puts known to be durable.
    fn durable_puts(&mut self) -> u64;

    /// Latencies (seconds) of the completed flushes, from the call to the durable completion.
    fn flush_latencies(&self) -> Vec<f64>;

    /// Reads `key` back: `(length, first 8 bytes)` of its value, or `None` if absent.
    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError>;

    /// Number of keys stored.
    fn count(&mut self) -> Result<u64, BenchError>;
}

/// A store whose flush has completed when it returns (SQLite's commit, RocksDB's
/// `FlushWAL`): what it does itself. [`Synchronous`] makes it a [`BlobStore`], counting its
/// puts and timing its flushes.
pub trait SyncEngine {
    /// Writes `blob` under `key` (not yet durable).
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError>;

    /// Makes every earlier put durable, returning when they are.
    fn flush(&mut self) -> Result<(), BenchError>;

    /// As [`BlobStore::read_back`].
    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError>;

    /// As [`BlobStore::count`].
    fn count(&mut self) -> Result<u64, BenchError>;
}

/// A [`SyncEngine`] as a [`BlobStore`]: the puts since the last flush, those made durable,
/// and the latency of each flush (one that has puts to flush).
pub struct Synchronous<E> {
    engine: E,
    window: u64,
    durable: u64,
    latencies: Vec<f64>,
}

impl<E: SyncEngine> Synchronous<E> {
    /// `engine`, with nothing written yet.
    pub fn new(engine: E) -> Synchronous<E> {
        Synchronous {
            engine,
            window: 0,
            durable: 0,
            latencies: Vec::new(),
        }
    }
}

impl<E: SyncEngine> BlobStore for Synchronous<E> {
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError> {
        self.engine.put(key, blob)?;
        self.window += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BenchError> {
        if self.window == 0 {
            return Ok(());
        }
        let started = Instant::now();
        self.engine.flush()?;
        self.durable += std::mem::take(&mut self.window);
        self.latencies.push(started.elapsed().as_secs_f64());
        Ok(())
    }

    fn finish(&mut self) -> Result<(), BenchError> {
        self.flush()
    }

    fn durable_puts(&mut self) -> u64 {
        self.durable
    }

    fn flush_latencies(&self) -> Vec<f64> {
        self.latencies.clone()
    }

    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError> {
        self.engine.read_back(key)
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        self.engine.count()
    }
}

/// Every store `--stores` accepts, with what it is.
pub const STORES: &[(&str, &str)] = &[
    (
        "datalith",
        "Datalith KV, durable (fdatasync per commit); one transact_kv_with_callback of the \
         puts of each 500 ms, pipelined: the writer keeps writing while it commits",
    ),
    (
        "datalith-blocking",
        "Datalith KV, durable; one blocking transact_kv of the puts of each 500 ms",
    ),
    (
        "datalith-nordahead",
        "as `datalith`, opened with no_read_ahead (MDB_NORDAHEAD)",
    ),
    (
        "datalith-writemap-fsync",
        "Datalith KV, WriteMapAsync; one commit per 500 ms, then fdatasync of data.mdb by the \
         benchmark (NOT power-safe: meta and data pages reach the disk in no set order)",
    ),
    (
        "datalith-nosync-fsync",
        "Datalith KV, NoSync; one commit per 500 ms, then fdatasync of data.mdb by the \
         benchmark (NOT power-safe for the same reason)",
    ),
    (
        "sqlite",
        "SQLite, journal_mode=WAL, synchronous=FULL, INTEGER PRIMARY KEY + BLOB, \
         INSERT OR REPLACE, one transaction per 500 ms",
    ),
    (
        "rocksdb",
        "RocksDB, compression off, WriteOptions sync=false, FlushWAL(true) every 500 ms",
    ),
];

/// Whether `name` can run in this build (RocksDB needs the `rocksdb` feature).
pub fn available(name: &str) -> bool {
    name != "rocksdb" || cfg!(feature = "rocksdb")
}

/// fsync-family calls the store's own flush path makes per flush, as documented by its
/// engine, for when no tracer can count them. An LMDB durable commit is an fdatasync of the
/// data file plus one write to the `O_DSYNC` meta descriptor (counted as a sync here); a SQLite
/// commit fsyncs the WAL; `FlushWAL(true)` fsyncs RocksDB's WAL. Checkpoints and compactions
/// add more.
pub fn nominal_syncs_per_flush(name: &str) -> f64 {
    match name {
        "datalith" | "datalith-blocking" | "datalith-nordahead" => 2.0,
        _ => 1.0,
    }
}

/// Opens store `name` in `dir` (created empty by the caller).
pub fn open(name: &str, dir: &Path) -> Result<Box<dyn BlobStore>, BenchError> {
    match name {
        "sqlite" => Ok(Box::new(Synchronous::new(sqlite::Sqlite::open(dir)?))),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(Synchronous::new(rocks::Rocks::open(dir)?))),
        other => match datalith::Variant::from_name(other) {
            Some(v) => Ok(Box::new(datalith::DatalithKv::open(dir, v)?)),
            None => Err(BenchError::Arg {
                arg: "--stores",
                message: format!("unknown or unavailable store {other:?}"),
            }),
        },
    }
}

/// The first 8 bytes of a blob (random, so with the length they identify it well enough for
/// the read-back check).
pub fn fingerprint(blob: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = blob.len().min(8);
    b[..n].copy_from_slice(&blob[..n]);
    u64::from_le_bytes(b)
}
