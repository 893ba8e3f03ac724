//! Counters of the committer, for benchmarks and `stat`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Counters of the committer, for benchmarks and `stat`.
#[derive(Debug, Default)]
pub struct CommitStats {
    pub(crate) batches: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) largest_batch: AtomicUsize,
    pub(crate) map_growths: AtomicU64,
    pub(crate) direct_batches: AtomicU64,
}

/// The upper bounds of the buckets of [`CommitCounters::log_sync_buckets`], in nanoseconds:
/// from 50 us (a sync this machine's virtual disk cannot beat) to 1 s (a device in trouble),
/// about two steps a decade; a last bucket takes every longer sync.
pub const LOG_SYNC_BUCKET_NANOS: [u64; 11] = [
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    50_000_000,
    200_000_000,
    1_000_000_000,
];

/// Syncs of the log by how long they took (the histogram `/metrics` shows): one counter a
/// bucket of [`LOG_SYNC_BUCKET_NANOS`], and one for the longer ones.
#[derive(Debug, Default)]
pub(crate) struct SyncTimes {
    buckets: [AtomicU64; LOG_SYNC_BUCKET_NANOS.len() + 1],
}

impl SyncTimes {
    /// Counts a sync of `nanos`.
    pub(crate) fn record(&self, nanos: u64) {
        let at = LOG_SYNC_BUCKET_NANOS.partition_point(|bound| *bound < nanos);
        self.buckets[at].fetch_add(1, Ordering::Relaxed);
    }

    /// The count of each bucket (not cumulative), the longer syncs last.
    pub(crate) fn counts(&self) -> [u64; LOG_SYNC_BUCKET_NANOS.len() + 1] {
        std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed))
    }
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
    /// ones near the log's largest record, bulk loads. Each serializes the committer behind
    /// LMDB; a workload that keeps making them is one the committer's bounds of waiting writes
    /// do not tell apart (`kv::pending`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_counts_in_the_first_bucket_whose_bound_it_does_not_pass() {
        // (nanoseconds, bucket)
        let cases = [
            (0, 0),
            (50_000, 0),
            (50_001, 1),
            (150_000, 2),
            (1_000_000_000, 10),
            (1_000_000_001, 11),
            (u64::MAX, 11),
        ];
        for (nanos, bucket) in cases {
            let times = SyncTimes::default();
            times.record(nanos);
            let counts = times.counts();
            assert_eq!(counts[bucket], 1, "{nanos} ns");
            assert_eq!(counts.iter().sum::<u64>(), 1);
        }
    }
}
