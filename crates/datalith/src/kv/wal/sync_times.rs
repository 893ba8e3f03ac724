//! The log's syncs by how long each took (the histogram `/metrics` shows): one counter a
//! bucket, counted by the log as it syncs, read into `CommitCounters::log_sync_buckets`.

use std::sync::atomic::{AtomicU64, Ordering};

/// The upper bounds of the buckets of `CommitCounters::log_sync_buckets`, in nanoseconds:
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
