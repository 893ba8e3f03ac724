//! Writing the log's record area once, ahead of the committer, so that its syncs write data
//! and nothing else.
//!
//! `posix_fallocate` reserves the log's blocks but leaves them *unwritten* (ext4, XFS): the
//! first write into such a block changes the file's extent map, and the `fdatasync` after it
//! must then write that metadata too (with a journal, commit the journal) as well as the data.
//! Measured on this project's machine (ext4), 3 KB appends each followed by `fdatasync`: 210 us
//! per sync into fallocated blocks, 150 us into blocks written before. SQLite's WAL avoids the
//! cost by overwriting the same file from its start after each checkpoint; our ring reaches the
//! same state once it has gone round, and this filler gets there before the committer needs
//! it: the checkpointer thread writes zeros a chunk at a time ahead of the write position and
//! syncs them itself.
//!
//! A log that grows (`file`) gets its new region filled the same way: `filled` stays at the old
//! end (or wherever the filler had got to), and the filler goes on from there, ahead of the
//! committer, up to the new end.
//!
//! The filler and the committer never write the same bytes: the filler writes only at or
//! above `filled`, under its lock; the committer writes a record below `filled` without the
//! lock, or else under the lock, raising `filled` past its record (that sync then pays the
//! metadata write the filler did not get to do).
//!
//! A committer's `fdatasync` also writes back zeros the filler has written but not yet
//! synced: under `strace -T`, W sync at batch 1000 on a new database (its 82 MB of log go
//! round the 64 MiB ring about once), the log's `fdatasync` took 613 and 1,104 us on average
//! (p99 2.9 and 5.1 ms) in two runs with this filler. Measured and dropped: zeros written
//! around the page cache (`O_DIRECT`), each record padded to the end of its page so that the
//! committer never reads a page back (one run: 477 us mean, p99 0.67 ms), did not move
//! throughput (8 alternating pairs at batch 1000, medians 333,000 before and 331,000 after;
//! at batch 10 behind in 3 of 4). Nor did writing the whole log at creation (which would
//! make every new database write 64 MiB before its first commit): ahead in 6 of 10 pairs at
//! batch 1000, medians of the last 6 341,800 before and 343,400 after.

use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::file::LogFile;

/// Bytes zeroed (and synced) per step: large enough that its sync is rare, small enough that
/// a committer that catches up waits for a short one.
const CHUNK_BYTES: u64 = 1 << 20;

/// The filler is woken when the write position comes this close to `filled`.
const AHEAD_BYTES: u64 = 4 * CHUNK_BYTES;

/// How far the log's record area has been written.
pub(crate) struct Fill {
    /// Every byte of the record area below this offset has been written and synced (or
    /// belongs to a record written under this lock). Only grows.
    filled: Mutex<u64>,
    /// `filled`, for the committer's check without the lock (it may lag, never lead).
    seen: AtomicU64,
    /// The log's length as the filler knows it: raised (`grew`) only once the file has it.
    capacity: AtomicU64,
}

impl Fill {
    /// For `log`: a log created by this open has nothing written yet; an older one is taken
    /// as written (its earlier runs may have left unwritten blocks: they cost time, not
    /// correctness, and zeroing them now could overwrite records the ring still needs).
    pub(crate) fn new(log: &LogFile) -> Fill {
        let filled = if log.created {
            log.area_start
        } else {
            log.capacity()
        };
        Fill {
            filled: Mutex::new(filled),
            seen: AtomicU64::new(filled),
            capacity: AtomicU64::new(log.capacity()),
        }
    }

    /// The log grew to `capacity` bytes (`LogFile::grow` returned): the filler may write
    /// up to there.
    pub(crate) fn grew(&self, capacity: u64) {
        self.capacity.fetch_max(capacity, Ordering::AcqRel);
    }

    /// Runs `write`, which writes log bytes below `high`, so that it never meets the filler.
    pub(crate) fn write_below(
        &self,
        high: u64,
        write: impl FnOnce() -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if high <= self.seen.load(Ordering::Acquire) {
            return write();
        }
        let mut filled = self.lock();
        write()?;
        if high > *filled {
            *filled = high;
            self.seen.store(high, Ordering::Release);
        }
        Ok(())
    }

    /// Whether the filler should run, with the write position at `pos`.
    pub(crate) fn wanted(&self, pos: u64) -> bool {
        let seen = self.seen.load(Ordering::Acquire);
        seen < self.capacity.load(Ordering::Acquire) && pos.saturating_add(AHEAD_BYTES) > seen
    }

    /// Writes zeros ahead of the write position `pos` until `AHEAD_BYTES` past it (or the end
    /// of the file) are written, one synced chunk at a time. Runs on the checkpointer thread.
    pub(crate) fn fill_ahead(&self, log: &LogFile, pos: impl Fn() -> u64) -> std::io::Result<()> {
        let zeros = vec![0u8; CHUNK_BYTES as usize];
        while self.wanted(pos()) {
            let mut filled = self.lock();
            let from = *filled;
            let n = CHUNK_BYTES.min(self.capacity.load(Ordering::Acquire).saturating_sub(from));
            if n == 0 {
                return Ok(());
            }
            log.file.write_all_at(&zeros[..n as usize], from)?;
            log.file.sync_data()?;
            *filled = from + n;
            self.seen.store(from + n, Ordering::Release);
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, u64> {
        self.filled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_log(capacity: u64) -> (tempfile::TempDir, LogFile) {
        let dir = tempfile::tempdir().unwrap();
        let log = LogFile::open(dir.path(), 4096, capacity, true)
            .unwrap()
            .unwrap();
        (dir, log)
    }

    #[test]
    fn the_filler_stays_ahead_of_the_write_position_and_stops_at_the_end() {
        let (_dir, log) = new_log(8 * CHUNK_BYTES);
        let fill = Fill::new(&log);
        let start = log.area_start;
        // (write position, filled afterwards)
        let cases = [
            (start, start + AHEAD_BYTES),
            (start + CHUNK_BYTES / 2, start + AHEAD_BYTES + CHUNK_BYTES),
            (
                start + 3 * CHUNK_BYTES,
                start + 3 * CHUNK_BYTES + AHEAD_BYTES,
            ),
            // The last chunk is cut short by the end of the file.
            (log.capacity() - 1, log.capacity()),
        ];
        for (pos, filled) in cases {
            fill.fill_ahead(&log, || pos).unwrap();
            assert_eq!(*fill.lock(), filled, "pos {pos}");
        }
        assert!(!fill.wanted(start));
    }

    #[test]
    fn a_write_past_the_filled_part_raises_it_and_is_never_zeroed() {
        let (_dir, log) = new_log(8 * CHUNK_BYTES);
        let fill = Fill::new(&log);
        let at = log.area_start + 10;
        let record = [7u8; 100];
        fill.write_below(at + 100, || log.file.write_all_at(&record, at))
            .unwrap();
        assert_eq!(*fill.lock(), at + 100);
        fill.fill_ahead(&log, || at + 100).unwrap();
        let mut back = [0u8; 100];
        log.file.read_exact_at(&mut back, at).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn a_grown_log_is_filled_from_where_the_filler_was_to_the_new_end() {
        // (created by this open, so its record area starts unwritten)
        for created in [true, false] {
            let (dir, log) = new_log(2 * CHUNK_BYTES);
            let log = match created {
                true => log,
                false => {
                    drop(log);
                    LogFile::open(dir.path(), 4096, 0, false).unwrap().unwrap()
                }
            };
            let fill = Fill::new(&log);
            let old_end = log.capacity();
            fill.fill_ahead(&log, || old_end).unwrap();
            assert_eq!(*fill.lock(), old_end, "created {created}");
            log.grow(old_end + 3 * CHUNK_BYTES).unwrap();
            fill.grew(log.capacity());
            assert!(fill.wanted(old_end), "created {created}");
            fill.fill_ahead(&log, || old_end).unwrap();
            assert_eq!(*fill.lock(), log.capacity(), "created {created}");
        }
    }

    #[test]
    fn an_existing_log_is_taken_as_written() {
        let (dir, log) = new_log(8 * CHUNK_BYTES);
        drop(log);
        let again = LogFile::open(dir.path(), 4096, 8 * CHUNK_BYTES, false)
            .unwrap()
            .unwrap();
        let fill = Fill::new(&again);
        assert!(!fill.wanted(again.area_start));
    }
}
