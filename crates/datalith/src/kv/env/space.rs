//! What the environment's files hold and how much of it is unused (files no bigger than they
//! need to be), for `datalith stat` and tests: the log's length and the data file's free
//! pages.

use super::Environment;
use crate::kv::error::KvError;
use crate::kv::lmdb::free_list::{freed_after, Freed};
use crate::kv::wal::LOG_FILE;

impl Environment {
    /// The length of the write-ahead log file (`txlog.dlog`) in bytes, `None` when the
    /// directory has none (durability other than `Durable`). It starts small and grows with
    /// use (`kv::wal::file`).
    pub fn log_bytes(&self) -> Result<Option<u64>, KvError> {
        match std::fs::metadata(self.path().join(LOG_FILE)) {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The data file's page size in bytes.
    pub fn page_bytes(&self) -> Result<usize, KvError> {
        Ok(self.shared().core.env.page_bytes()?)
    }

    /// Pages of the data file on LMDB's free list in the newest committed state: written once,
    /// free now, reused by later commits (a compacting copy, `copy_compacted`, leaves them
    /// out). Counts every entry of the free-page table, whatever readers may still need.
    pub fn free_pages(&self) -> Result<u64, KvError> {
        let (pages, _) = freed_after(&self.shared().core.env, 0).map_err(|e| match e {
            Freed::Lmdb(e) => KvError::from(e),
            Freed::Entry(len) => KvError::Corrupt {
                path: self.path().join("data.mdb"),
                detail: format!("a free-list entry of {len} bytes"),
            },
        })?;
        Ok(pages)
    }
}
