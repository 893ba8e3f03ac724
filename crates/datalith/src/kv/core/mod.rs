//! What every stage of an open environment shares: the LMDB environment and its meta table,
//! the reader gate, the map's size and its growth, the log, the poison flag and the counters.
//!
//! This room is below the stages that take it (`unapplied/`, `read.rs`, `committer/`) and
//! names none of them: the state that belongs to one stage (the committer's batch, the
//! applier's groups) lives in that stage's room and is put together with this one in
//! `kv/shared.rs` (what readers and writers hold) and `kv/env/` (the handle users hold).
//!
//! - `map.rs`: the map's size, where it is, and its growth (which waits for the gate).
//! - `retained.rs`: snapshots kept only for reports, let go before a growth.
//! - `stats.rs`: the committer's counters.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::durability::Durability;
use super::error::KvError;
use super::file;
use super::flush::Flusher;
use super::gate::ReaderGate;
use super::lmdb::{self, Dbi};
use super::wal::{LogTail, Wal};
use super::warm::Warmer;

pub(crate) mod map;
mod retained;
mod stats;

pub(crate) use retained::{Release, Retained};
pub use stats::{CommitCounters, CommitStats};

/// The state of an open environment that its stages share (see the module's comment).
pub(crate) struct EnvCore {
    /// Declared before `env`: it stops its helper before the map can go away.
    pub(crate) warmer: Option<Warmer>,
    /// Where commits flush their data pages: starts their write-back ahead (`kv::flush`).
    pub(crate) flusher: Option<Flusher>,
    pub(crate) env: lmdb::Env,
    /// Datalith's own metadata table (format magic, version, the table catalog).
    pub(crate) meta: Dbi,
    pub(crate) path: PathBuf,
    pub(crate) durability: Durability,
    pub(crate) gate: ReaderGate,
    pub(crate) stats: CommitStats,
    pub(crate) map_bytes: AtomicUsize,
    /// Pages the file used after the last commit (read by every snapshot as it opens, to say
    /// later how much the file grew while the snapshot was held).
    pub(crate) used_pages: AtomicUsize,
    /// How long a growth waits for open snapshots before the write that needed it fails.
    pub(crate) growth_patience: std::time::Duration,
    pub(crate) page_bytes: usize,
    pub(crate) poison: Mutex<Option<String>>,
    pub(crate) poisoned: AtomicBool,
    pub(crate) inject_failure: AtomicBool,
    /// Test hook: the next `checkpoint()` of an environment without a log fails its sync.
    pub(crate) inject_sync_failure: AtomicBool,
    /// Batch snapshots kept for reports, released before a forced map growth.
    pub(crate) retained: Retained,
    /// Opened with `open_read_only`: tables are opened, never created.
    pub(crate) read_only: bool,
    /// What the validation at open found (`None` for a file this open created).
    pub(crate) verified: Option<file::Structure>,
    /// The write-ahead log (`Durable` environments open for writing).
    pub(crate) wal: Option<Arc<Wal>>,
    /// Read-only environments: the groups another process acknowledged and LMDB does not hold
    /// yet, read back from the log (`wal::tail`) for every snapshot.
    pub(crate) tail: Option<LogTail>,
}

impl EnvCore {
    /// The error for everything after a read met the end of a data file that shrank while
    /// mapped (`lmdb::map_guard`): the file no longer holds what the map showed.
    pub(crate) fn shrink_error(&self) -> Option<KvError> {
        self.env.shrunk().then(|| KvError::Corrupt {
            path: self.path.join(file::DATA_FILE),
            detail: "the file shrank while open (another program truncated it); reopen it".into(),
        })
    }

    pub(crate) fn poison_cause(&self) -> Option<String> {
        if let Some(e) = self.shrink_error() {
            return Some(e.to_string());
        }
        if !self.poisoned.load(Ordering::Acquire) {
            // A failed checkpoint poisons from the checkpointer's thread, which has no way to
            // this flag: every check looks at the log too.
            return self
                .wal
                .as_ref()
                .and_then(|w| w.failure())
                .map(str::to_string);
        }
        self.poison
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the environment unusable for writes and returns the error for the batch.
    pub(crate) fn poison(&self, err: KvError) -> KvError {
        let mut p = self.poison.lock().unwrap_or_else(|p| p.into_inner());
        if p.is_none() {
            *p = Some(err.to_string());
        }
        self.poisoned.store(true, Ordering::Release);
        err
    }

    pub(crate) fn take_injected_failure(&self) -> bool {
        self.inject_failure.swap(false, Ordering::AcqRel)
    }
}
