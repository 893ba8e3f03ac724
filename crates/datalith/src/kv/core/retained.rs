//! Snapshots kept only so that reports can be asked for later (a group commit's state before
//! its batch, `kv::batch_snapshot`). A map growth must wait for every snapshot of this process
//! to close, and the holder of these may be waiting for the very commit that needs the growth:
//! so the environment keeps them releasable, a bounded number of them, and lets all go first.
//!
//! This room knows them only as something to release, so that the growth below the committer
//! need not name the batch snapshot above it.

use std::collections::VecDeque;
use std::sync::{Mutex, Weak};

use crate::limits::MAX_RETAINED_BATCH_SNAPSHOTS;

/// A snapshot that can be let go before its holder is done with it.
pub(crate) trait Release: Send + Sync {
    /// Closes the snapshot; later asks of it find it released.
    fn release(&self);
}

/// The releasable snapshots that may still be asked for, oldest first.
#[derive(Default)]
pub(crate) struct Retained {
    kept: Mutex<VecDeque<Weak<dyn Release>>>,
}

impl Retained {
    /// Keeps `b` releasable; releases the oldest beyond `MAX_RETAINED_BATCH_SNAPSHOTS`.
    pub(crate) fn push(&self, b: Weak<dyn Release>) {
        let mut q = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        q.retain(|w| w.strong_count() > 0);
        q.push_back(b);
        let mut old = Vec::new();
        while q.len() > MAX_RETAINED_BATCH_SNAPSHOTS {
            old.extend(q.pop_front().and_then(|w| w.upgrade()));
        }
        drop(q);
        // Released outside the lock: closing a snapshot takes the reader gate's lock.
        for b in old {
            b.release();
        }
    }

    /// Releases every kept snapshot (before a map growth, which needs all closed).
    pub(crate) fn release_all(&self) {
        let all: Vec<_> = self
            .kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .filter_map(|w| w.upgrade())
            .collect();
        for b in all {
            b.release();
        }
    }
}
