//! The log file: two checkpoint slots, then a ring of records.
//!
//! The file is preallocated when created, small (`limits::LOG_INITIAL_BYTES`), so appending
//! never changes its size and `fdatasync` has no file metadata to write. Records go one after
//! another from the checkpoint's `start`; when one would not fit before the end, a wrap marker
//! (or, with no room for one, the end itself) sends the reader back to the start of the record
//! area. The space between the durable checkpoint's `start` and the write position holds the
//! records recovery needs; everything else is free (see `Ring::place`).
//!
//! **Growth.** When a record would not fit before the end and the ring is not wrapped (every
//! needed record lies between the checkpoint's `start` and the write position), the file may
//! be made longer instead of wrapping (`Ring::place`, `LogFile::grow`): nothing needed lies
//! past the write position, so no record is stranded. The new length is preallocated and
//! synced before any record is written there, so a record in the new region is never found
//! beyond a file end that a crash put back; a crash before that leaves a longer file whose new
//! region holds zeros, where the scan stops as at any end of the log. The scan always takes
//! the file's length as the ring's end, so a log keeps its grown length on reopen.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::frame::{self, Kind, HEADER_BYTES};
use super::slot::{slot_bytes, Checkpoint};
use crate::kv::whole;

/// Name of the log file in the environment's directory.
pub const LOG_FILE: &str = "txlog.dlog";

/// The smallest record area a log is created with, whatever it is asked for: room for a few
/// small groups before the first growth.
const MIN_RECORD_AREA: u64 = 64 << 10;

/// The open log file and its geometry.
pub(crate) struct LogFile {
    pub(crate) file: File,
    slot_len: u64,
    /// Where the record area begins (after the two slots).
    pub(crate) area_start: u64,
    /// The file's length: the ring ends here. Only grows, and only on the committer's
    /// thread (`grow`); others read it.
    capacity: AtomicU64,
    /// Created by this open: its record area is reserved but not written yet (see `fill`).
    pub(crate) created: bool,
}

impl LogFile {
    /// Opens the log of directory `dir` to read it only (`None`: there is none): no lock, so a
    /// process writing the log may hold it; what is read is then a moment of it.
    pub(crate) fn open_to_read(dir: &Path, page_bytes: usize) -> std::io::Result<Option<LogFile>> {
        let file = match File::open(dir.join(LOG_FILE)) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let slot_len = slot_bytes(page_bytes) as u64;
        let capacity = AtomicU64::new(file.metadata()?.len());
        Ok(Some(LogFile {
            file,
            slot_len,
            area_start: 2 * slot_len,
            capacity,
            created: false,
        }))
    }

    /// Opens the log of directory `dir`; if there is none, creates and preallocates one of
    /// `initial` bytes when `create`, else answers `None`. An existing log keeps its length.
    pub(crate) fn open(
        dir: &Path,
        page_bytes: usize,
        initial: u64,
        create: bool,
    ) -> std::io::Result<Option<LogFile>> {
        let path = dir.join(LOG_FILE);
        let slot_len = slot_bytes(page_bytes) as u64;
        let area_start = 2 * slot_len;
        let mut created = false;
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let bytes = initial.max(area_start + MIN_RECORD_AREA);
                match create_whole(dir, &path, bytes)? {
                    Some(f) => {
                        created = true;
                        f
                    }
                    // Another process created it first: its log, as it is.
                    None => std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&path)?,
                }
            }
            Err(e) => return Err(e),
        };
        use std::os::fd::AsRawFd;
        // One writing process per log. SAFETY: a valid descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                format!("{} is open for writing by another process", path.display()),
            ));
        }
        let capacity = AtomicU64::new(file.metadata()?.len());
        Ok(Some(LogFile {
            file,
            slot_len,
            area_start,
            capacity,
            created,
        }))
    }

    /// The file's length, where the ring ends.
    pub(crate) fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Acquire)
    }

    /// Makes the file `to` bytes long (preallocated, and synced with its new length) before
    /// any record is written past its old end. Only the committer calls it, with the ring not
    /// wrapped (`Ring::place`). On failure the file is cut back to its old length (nothing
    /// was written past it) and the ring keeps its old end.
    pub(crate) fn grow(&self, to: u64) -> std::io::Result<()> {
        let from = self.capacity();
        if to <= from {
            return Ok(());
        }
        let grown = preallocate(&self.file, from, to).and_then(|()| self.file.sync_all());
        if let Err(e) = grown {
            let _ = self.file.set_len(from);
            return Err(e);
        }
        self.capacity.store(to, Ordering::Release);
        Ok(())
    }

    /// Why this log cannot be used for recovery, if it cannot: it was cut short inside its
    /// checkpoint slots (the slot that is gone may have named a newer checkpoint than the one
    /// left, and rolling the data file back to that one would drop commits it holds durably),
    /// or its checkpoint's records would begin past its end. A log cut among its records is
    /// not refused: replay stops where the records stop, as after a torn write.
    pub(crate) fn damage(&self, checkpoint: Option<&Checkpoint>) -> Option<String> {
        let capacity = self.capacity();
        if capacity < self.area_start {
            return Some(format!(
                "the log file is {capacity} bytes, cut short inside its checkpoint slots ({} bytes)",
                self.area_start
            ));
        }
        match checkpoint {
            Some(c) if c.start < self.area_start || c.start > capacity => Some(format!(
                "the checkpoint's records begin at byte {}, outside the log's record area ({}..{capacity})",
                c.start, self.area_start
            )),
            Some(_) => None,
            // A log gets its first slot before its first record (`Wal::start`), so a log
            // without a whole slot is new (its first slot write torn) only while its record
            // area is untouched; with records, both slots were damaged, and the data file's
            // durable state and the records to replay are unknown.
            None if self.record_area_written() => Some(
                "neither checkpoint slot of the log is whole, yet the log holds records: \
                 which state of the data file is durable, and which records follow it, \
                 cannot be known"
                    .to_string(),
            ),
            None => None,
        }
    }

    /// Whether the first block of the record area holds anything (a created log reads zeros
    /// there until its first record is written).
    fn record_area_written(&self) -> bool {
        let mut block = vec![0; 4096.min((self.capacity() - self.area_start) as usize)];
        read_fully(&self.file, self.area_start, &mut block).is_ok() && block.iter().any(|&b| b != 0)
    }

    /// The newest valid checkpoint, if any slot holds one.
    pub(crate) fn checkpoint(&self) -> Option<Checkpoint> {
        let mut buf = vec![0; self.slot_len as usize];
        (0..2)
            .filter_map(|i| {
                read_fully(&self.file, i * self.slot_len, &mut buf).ok()?;
                Checkpoint::decode(&buf)
            })
            .max_by_key(|c| c.generation)
    }

    /// Writes `c` into both slots, one after the other, each made durable before the next is
    /// written. A write torn by a crash leaves the other slot whole: the new checkpoint in
    /// the second write, or in the first the previous one, whose pages the caller still
    /// guards. Once both are written, a slot damaged later (the disk's fault, not a crash)
    /// leaves its twin naming the same checkpoint; with one copy, the older slot left named
    /// a checkpoint whose pages may have been reused since, and recovery could not tell.
    pub(crate) fn write_checkpoint(&self, c: &Checkpoint) -> std::io::Result<()> {
        let bytes = c.encode(self.slot_len as usize);
        let first = c.generation % 2;
        for slot in [first, 1 - first] {
            self.file.write_all_at(&bytes, slot * self.slot_len)?;
            self.file.sync_data()?;
        }
        Ok(())
    }

    /// Reads the records from `start` on whose sequence numbers run on from `first_seq`,
    /// calling `apply(seq, kind, body, end)` for each group (`end`: where the next record
    /// begins); stops at the first that is missing, torn, fails its
    /// checksum or is out of sequence. Returns where the log ends (the next write position) and
    /// the sequence number after the last record read.
    pub(crate) fn scan<E>(
        &self,
        start: u64,
        first_seq: u64,
        mut apply: impl FnMut(u64, Kind, &[u8], u64) -> Result<(), E>,
    ) -> Result<(u64, u64), E> {
        let (mut pos, mut seq) = (start, first_seq);
        let capacity = self.capacity();
        let mut head = [0u8; HEADER_BYTES];
        let mut body = Vec::new();
        // A wrap must be followed by a record: two in a row are damage, not a loop to follow.
        let mut just_wrapped = false;
        loop {
            if pos + HEADER_BYTES as u64 > capacity {
                if just_wrapped {
                    break;
                }
                pos = self.area_start;
                just_wrapped = true;
                continue;
            }
            let Some(h) = self.record_at(pos, |h| h.seq == seq, &mut head, &mut body) else {
                // A wrap marker and the record after it are written together, then synced
                // once: a crash may leave the record whole at the start of the area and the
                // marker unwritten.
                if !just_wrapped
                    && pos != self.area_start
                    && self
                        .record_at(self.area_start, |h| h.seq == seq, &mut head, &mut body)
                        .is_some()
                {
                    pos = self.area_start;
                    just_wrapped = true;
                    continue;
                }
                break;
            };
            let end = pos + (HEADER_BYTES + h.body_len) as u64;
            match h.kind {
                Kind::Wrap if just_wrapped => break,
                Kind::Wrap => {
                    pos = self.area_start;
                    just_wrapped = true;
                }
                Kind::Group | Kind::Derived => {
                    apply(seq, h.kind, &body, end)?;
                    pos = end;
                    seq += 1;
                    just_wrapped = false;
                }
            }
        }
        Ok((pos, seq))
    }

    /// The record at `at`, if one is whole there and its header passes `wanted` (checked
    /// before its body is read: a stale record of an earlier lap may be megabytes long).
    pub(crate) fn record_at(
        &self,
        at: u64,
        wanted: impl Fn(&frame::Header) -> bool,
        head: &mut [u8; HEADER_BYTES],
        body: &mut Vec<u8>,
    ) -> Option<frame::Header> {
        read_fully(&self.file, at, head).ok()?;
        let h = frame::header(head)?;
        if !wanted(&h) || at + (HEADER_BYTES + h.body_len) as u64 > self.capacity() {
            return None;
        }
        body.resize(h.body_len, 0);
        read_fully(&self.file, at + HEADER_BYTES as u64, body).ok()?;
        frame::checks(&h, head, body).then_some(h)
    }

    /// Reads `buf.len()` bytes at `at`.
    pub(crate) fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_fully(&self.file, at, buf)
    }
}

/// Where the writer is and what it may overwrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ring {
    /// The next write position.
    pub(crate) pos: u64,
    /// The durable checkpoint's `start`: records from here to `pos` are still needed.
    pub(crate) keep_from: u64,
    /// A record had to wait for a checkpoint to free room since the file last grew: it grows
    /// at the next chance (`place`).
    pub(crate) starved: bool,
}

/// Where a record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    /// A wrap marker to write first, at this offset (when there is room for one).
    pub(crate) wrap_at: Option<u64>,
    /// The record's offset.
    pub(crate) at: u64,
    /// The file must first grow to this length (`LogFile::grow`).
    pub(crate) grow_to: Option<u64>,
}

impl Ring {
    /// Where a record of `len` bytes goes without overwriting a needed one, or `None` when a
    /// checkpoint must free space first. The write position never catches up with
    /// `keep_from` from behind (equal positions mean an empty ring). A log of `capacity`
    /// bytes that may grow to `most` grows rather than wrap when the record does not fit
    /// before the end and the ring is not wrapped, if wrapping would leave the ring waiting
    /// for a checkpoint: the record does not fit before `keep_from` either, or the needed
    /// records with it fill more than half the ring (the next records would soon catch up
    /// with them), or a record had to wait since the last growth (`starved`).
    pub(crate) fn place(
        &self,
        len: u64,
        capacity: u64,
        area_start: u64,
        most: u64,
    ) -> Option<Placement> {
        let Ring {
            pos,
            keep_from,
            starved,
        } = *self;
        let at = |at, wrap_at, grow_to| {
            Some(Placement {
                wrap_at,
                at,
                grow_to,
            })
        };
        if pos < keep_from {
            return match pos + len < keep_from {
                true => at(pos, None, None),
                false => None,
            };
        }
        if pos + len <= capacity {
            return at(pos, None, None);
        }
        let wrap_fits = area_start + len < keep_from;
        let crowded = 2 * (pos - keep_from + len) > capacity - area_start;
        if !wrap_fits || crowded || starved {
            if let Some(to) = grown(capacity, pos + len, area_start, len, most) {
                return at(pos, None, Some(to));
            }
        }
        let wrap_at = (pos + HEADER_BYTES as u64 <= capacity).then_some(pos);
        match wrap_fits {
            true => at(area_start, wrap_at, None),
            false => None,
        }
    }
}

impl Ring {
    /// Where the dead bytes after offset `at` (a record's start) end: at the needed records
    /// ahead of it when the ring has wrapped (`at` below `keep_from`), else at the file's
    /// end (`capacity`); the needed records then lie behind `at`.
    pub(crate) fn dead_until(&self, at: u64, capacity: u64) -> u64 {
        match at < self.keep_from {
            true => self.keep_from,
            false => capacity,
        }
    }
}

/// The length a log of `capacity` bytes grows to for a record of `len` bytes ending at `end`:
/// doubled until the record fits and takes at most half the record area (as any record may:
/// it then fits once a checkpoint has emptied the ring), at most `most`; `None` when that is
/// not enough.
fn grown(capacity: u64, end: u64, area_start: u64, len: u64, most: u64) -> Option<u64> {
    let mut to = capacity.max(1);
    while to < end || to - area_start < 2 * len {
        to = to.saturating_mul(2);
        if to >= most {
            to = most;
            break;
        }
    }
    (to > capacity && to >= end).then_some(to)
}

/// A wrap marker for the record `seq` that follows it (`unsynced` as that record).
pub(crate) fn wrap_marker(seq: u64, unsynced: bool) -> [u8; HEADER_BYTES] {
    let mut m = [0u8; HEADER_BYTES];
    frame::seal(&mut m, Kind::Wrap, seq, unsynced);
    m
}

fn read_fully(file: &File, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
    file.read_exact_at(buf, at)
}

/// Creates the log at `path` whole (`kv::whole`): preallocated and synced under a name of its
/// own, then linked to `path` (`None`: another process made it first) and the directory
/// synced. A crash or a full disk part way leaves no log, or a whole one, never one cut short,
/// which the next open would have to refuse as damaged (a log shorter than its slots may have
/// lost a newer checkpoint).
fn create_whole(dir: &Path, path: &Path, bytes: u64) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    whole::remove_abandoned(dir, LOG_FILE);
    let temp = whole::temporary(dir, LOG_FILE);
    let made = (|| {
        // The log holds the data: as private as LMDB's data file.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        preallocate(&f, 0, bytes)?;
        f.sync_all()?;
        Ok(whole::link(&temp, path)?.then_some(f))
    })();
    let _ = std::fs::remove_file(&temp);
    let made = made.map_err(|e: std::io::Error| {
        std::io::Error::new(
            e.kind(),
            format!("creating the log {} ({bytes} bytes): {e}", path.display()),
        )
    })?;
    File::open(dir)?.sync_all()?;
    Ok(made)
}

/// Reserves the file's bytes `from..to` (making it `to` bytes long if it was shorter).
fn preallocate(file: &File, from: u64, to: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (
        libc::off_t::try_from(from),
        libc::off_t::try_from(to - from),
    ) else {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: a valid descriptor we own; plain integer arguments.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), offset, len) };
    match rc {
        0 => Ok(()),
        // File systems without it get a sparse file of the same length.
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(to),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dead_bytes_after_a_record_end_at_the_needed_records_ahead_or_the_file_end() {
        // (write position, keep_from, record offset, dead until) in a 100 KiB file
        let cases = [
            // Not wrapped: the needed records lie behind; dead to the end.
            (50_000, 20_000, 50_000, 100_000),
            // Empty ring.
            (50_000, 50_000, 50_000, 100_000),
            // Wrapped: dead only up to the oldest needed record.
            (30_000, 60_000, 30_000, 60_000),
            // A record placed at the area's start after a wrap marker.
            (90_000, 40_000, 10_240, 40_000),
        ];
        for (pos, keep_from, at, want) in cases {
            let ring = Ring {
                pos,
                keep_from,
                starved: false,
            };
            assert_eq!(
                ring.dead_until(at, 100_000),
                want,
                "pos {pos} keep {keep_from} at {at}"
            );
        }
    }

    /// A ring of a 100 KiB file whose record area starts at 10 KiB, which may grow to `most`.
    #[test]
    fn a_record_goes_where_no_needed_record_is_and_the_file_grows_only_when_the_ring_is_not_wrapped(
    ) {
        const K: u64 = 1024;
        let (capacity, area) = (100 * K, 10 * K);
        let h = HEADER_BYTES as u64;
        let place = |pos, keep_from, starved, len, most| {
            Ring {
                pos,
                keep_from,
                starved,
            }
            .place(len, capacity, area, most)
        };
        let fits = |at| Some((None, at, None));
        let wraps = |marker| Some((marker, area, None));
        let grows = |at, to| Some((None, at, Some(to)));
        // (case, pos, keep_from, starved, record length, most, placement)
        type Row = (
            &'static str,
            u64,
            u64,
            bool,
            u64,
            u64,
            Option<(Option<u64>, u64, Option<u64>)>,
        );
        #[rustfmt::skip]
        let table: &[Row] = &[
            ("fits before the end", 50 * K, 40 * K, false, K, capacity, fits(50 * K)),
            ("fits exactly", 99 * K, 40 * K, false, K, capacity, fits(99 * K)),
            ("wraps with a marker", 99 * K, 60 * K, false, 2 * K, capacity, wraps(Some(99 * K))),
            ("wraps, no room for a marker", capacity - h + 1, 60 * K, false, 2 * K, capacity, wraps(None)),
            ("full: waits for a checkpoint", 99 * K, 11 * K, false, 2 * K, capacity, None),
            ("wrapped: fits before keep_from", 20 * K, 50 * K, false, K, 200 * K, fits(20 * K)),
            ("wrapped: never grows", 20 * K, 21 * K, true, 2 * K, 200 * K, None),
            ("grows instead of waiting", 99 * K, 11 * K, false, 2 * K, 400 * K, grows(99 * K, 200 * K)),
            ("grows: live records over half", 99 * K, 40 * K, false, 2 * K, 400 * K, grows(99 * K, 200 * K)),
            ("wraps: live records under half", 99 * K, 70 * K, false, 2 * K, 400 * K, wraps(Some(99 * K))),
            ("grows after a record waited", 99 * K, 70 * K, true, 2 * K, 400 * K, grows(99 * K, 200 * K)),
            ("doubles until a record is half", 99 * K, 99 * K, false, 150 * K, 800 * K, grows(99 * K, 400 * K)),
            ("stops at the largest length", 99 * K, 11 * K, false, 2 * K, 150 * K, grows(99 * K, 150 * K)),
            ("at the largest length: waits", 99 * K, 11 * K, false, 2 * K, capacity, None),
            ("too large even grown: waits", 99 * K, 11 * K, false, 60 * K, 150 * K, None),
        ];
        for &(case, pos, keep_from, starved, len, most, want) in table {
            let got =
                place(pos, keep_from, starved, len, most).map(|p| (p.wrap_at, p.at, p.grow_to));
            assert_eq!(got, want, "{case}");
        }
    }

    #[test]
    fn a_grown_log_keeps_its_length_and_records_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let log = LogFile::open(dir.path(), 4096, 128 << 10, true)
            .unwrap()
            .unwrap();
        let small = log.capacity();
        log.file.write_all_at(b"kept", small - 4).unwrap();
        log.grow(2 * small).unwrap();
        assert_eq!(log.capacity(), 2 * small);
        log.grow(small).unwrap();
        assert_eq!(log.capacity(), 2 * small, "a log never shrinks");
        drop(log);
        let again = LogFile::open(dir.path(), 4096, 128 << 10, false)
            .unwrap()
            .unwrap();
        assert_eq!(again.capacity(), 2 * small);
        let mut back = [0u8; 4];
        again.read_at(small - 4, &mut back).unwrap();
        assert_eq!(&back, b"kept");
    }
}
