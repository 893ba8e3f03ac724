//! Counters of the committer, for benchmarks and `stat`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::kv::wal::LOG_SYNC_BUCKET_NANOS;

/// Counters of the committer, for benchmarks and `stat`.
#[derive(Debug, Default)]
pub struct CommitStats {
    pub(crate) batches: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) largest_batch: AtomicUsize,
    pub(crate) map_growths: AtomicU64,
    pub(crate) direct_batches: AtomicU64,
}

/// A snapshot of [`CommitStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitCounters {
    /// LMDB transactions committed (one fsync each in `Durable` mode).
    pub batches: u64,
    /// Requests applied or rejected in them.
    pub requests: u64,
    /// The largest batch so far.
    pub largest_batch: usize,
    /// Times the memory map was grown.
    pub map_growths: u64,
    /// With the log and LMDB written later (`EnvOptions::log_apply_later`): batches the
    /// committer wrote into LMDB itself, on its own thread, instead of leaving them to the LMDB
    /// writer: large ones (`limits::LATER_MAX_BATCH_BYTES`) after a read met waiting writes,
    /// ones near the log's largest record, the largest bulk loads. Each serializes the
    /// committer behind LMDB; a workload that keeps making them is one the committer's bounds
    /// of waiting writes do not tell apart (`kv::pending`).
    pub direct_batches: u64,
    /// `Durable`: groups written to the log.
    pub log_records: u64,
    /// ... of which left out the writes a derivation rebuilds (`kv::wal::derive`).
    pub log_records_derived: u64,
    /// Bytes of those records, headers included.
    pub log_bytes: u64,
    /// Nanoseconds the syncs of those records took, in all (`fdatasync` of the log after each
    /// record's write: the device's share of a durable commit).
    pub log_sync_nanos: u64,
    /// Those syncs by how long each took: the count of each bucket of
    /// [`LOG_SYNC_BUCKET_NANOS`] (not cumulative), the syncs longer than its last bound last.
    pub log_sync_buckets: [u64; LOG_SYNC_BUCKET_NANOS.len() + 1],
}

impl CommitStats {
    pub(crate) fn record_direct_batch(&self) {
        self.direct_batches.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_batch(&self, n: usize) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.requests.fetch_add(n as u64, Ordering::Relaxed);
        self.largest_batch.fetch_max(n, Ordering::Relaxed);
    }
}
