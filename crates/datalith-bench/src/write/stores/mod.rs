//! The in-process stores, one file each.

mod datalith_bare;
mod datalith_dl;
mod datalith_kv;
mod datalith_remote;
mod lmdb_raw;
#[cfg(feature = "rocksdb")]
mod rocks;
mod sqlite;

use std::path::Path;

/// Initial map of the Datalith stores: what the Datalevin harness and the raw LMDB store size
/// theirs to, so no store of the run grows its map mid-run (a Datalith growth redoes the
/// batch it hit). Address space only without `MDB_WRITEMAP`; with it a sparse file.
pub(crate) const DATALITH_MAP_BYTES: usize = 16 << 30;

use super::condition::{Condition, ConditionSpec, Store};
use crate::common::BenchError;

/// Opens the store of `spec` in `dir`.
pub fn open(spec: &ConditionSpec, dir: &Path) -> Result<Box<dyn Condition>, BenchError> {
    match spec.store {
        Store::DatalithKv(d) => Ok(Box::new(datalith_kv::DatalithKv::open(
            dir,
            d,
            spec.asynchronous,
        )?)),
        Store::DatalithDl(d, value_index) => Ok(Box::new(datalith_dl::DatalithDl::open(
            dir,
            d,
            value_index,
            spec.asynchronous,
        )?)),
        Store::DatalithRemote => Ok(Box::new(datalith_remote::DatalithRemote::open(dir)?)),
        Store::DatalithBare => Ok(Box::new(datalith_bare::DatalithBare::open(dir)?)),
        Store::Sqlite { wal } => Ok(Box::new(sqlite::Sqlite::open(dir, wal)?)),
        Store::LmdbRaw { nosync } => Ok(Box::new(lmdb_raw::LmdbRaw::open(dir, nosync)?)),
        #[cfg(feature = "rocksdb")]
        Store::RocksDb => Ok(Box::new(rocks::Rocks::open(dir)?)),
        _ => Err(BenchError::Arg {
            arg: "--condition",
            message: format!("{} does not run in this process", spec.name),
        }),
    }
}

/// Keys are 8-byte big-endian integers (so LMDB's byte order is numeric order).
pub(crate) fn key_bytes(key: u64) -> [u8; 8] {
    key.to_be_bytes()
}
