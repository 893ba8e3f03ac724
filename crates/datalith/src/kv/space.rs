//! What the environment's files hold and how much of it is unused (issue 57: files no bigger
//! than they need to be), for `datalith stat`, the checkpointer and tests: the log's length
//! and the data file's free pages. Kept apart from `env` (opening, closing, the committer's
//! hooks).

use super::env::Environment;
use super::error::KvError;
use super::lmdb::cursor::Op;
use super::lmdb::{Cursor, Dbi, Env, LmdbError};

/// LMDB's free-page table: its handle 0 in every transaction.
const FREE_DBI: Dbi = Dbi(0);

impl Environment {
    /// The length of the write-ahead log file (`txlog.dlog`) in bytes, `None` when the
    /// directory has none (durability other than `Durable`). It starts small and grows with
    /// use (`kv::wal::file`).
    pub fn log_bytes(&self) -> Result<Option<u64>, KvError> {
        match std::fs::metadata(self.path().join(super::wal::LOG_FILE)) {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The data file's page size in bytes.
    pub fn page_bytes(&self) -> Result<usize, KvError> {
        Ok(self.shared().env.page_bytes()?)
    }

    /// Pages of the data file on LMDB's free list in the newest committed state: written once,
    /// free now, reused by later commits (a compacting copy, `copy_compacted`, leaves them
    /// out). Counts every entry of the free-page table, whatever readers may still need.
    pub fn free_pages(&self) -> Result<u64, KvError> {
        let (pages, _) = freed_after(&self.shared().env, 0).map_err(|e| match e {
            Freed::Lmdb(e) => KvError::from(e),
            Freed::Entry(len) => KvError::Corrupt {
                path: self.path().join("data.mdb"),
                detail: format!("a free-list entry of {len} bytes"),
            },
        })?;
        Ok(pages)
    }
}

/// Why the free list could not be counted.
#[derive(Debug)]
pub(crate) enum Freed {
    Lmdb(LmdbError),
    /// An entry too short to hold its count (its length).
    Entry(usize),
}

impl From<LmdbError> for Freed {
    fn from(e: LmdbError) -> Freed {
        Freed::Lmdb(e)
    }
}

/// The pages LMDB's free list holds under the transactions after `after` (the pages each
/// freed), and the last such transaction (`after` when there is none), in the newest
/// committed state. Pages freed after a snapshot that is still held cannot be reused while
/// it is: the checkpointer counts them (`wal::checkpoint`).
pub(crate) fn freed_after(env: &Env, after: u64) -> Result<(u64, u64), Freed> {
    const WORD: usize = std::mem::size_of::<usize>();
    let txn = env.read_txn()?;
    let mut cursor = Cursor::open(&txn, FREE_DBI)?;
    let (mut pages, mut last) = (0u64, after);
    // Keys are transaction ids as native `size_t` (`MDB_INTEGERKEY`).
    let from = usize::try_from(after.saturating_add(1)).unwrap_or(usize::MAX);
    let mut next = cursor.seek(&from.to_ne_bytes())?;
    while let Some((key, value)) = next {
        // An entry's value is a list of page numbers led by their count, each a native
        // `size_t` (LMDB's `MDB_IDL`).
        let word = |b: &[u8]| b.get(..WORD)?.try_into().ok().map(usize::from_ne_bytes);
        let count = word(value).ok_or(Freed::Entry(value.len()))?;
        pages += count as u64;
        last = last.max(word(key).map_or(last, |k| k as u64));
        next = cursor.step(Op::Next)?;
    }
    Ok((pages, last))
}
