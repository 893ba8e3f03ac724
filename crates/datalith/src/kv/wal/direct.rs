//! Records written around the page cache (`O_DIRECT`), in whole blocks, before the sync.
//!
//! A buffered record is copied into the page cache and the `fdatasync` after it then starts
//! the page cache's write-back and waits for it before the device flush; a direct write hands
//! the same blocks to the device in the `write` call, and the sync is then the flush alone.
//! On this project's machine (ext4, a virtual disk), a bare loop of appends each followed by
//! `fdatasync` into a file written before (2026-12-04): 8,200-byte records (W's batch 100)
//! 187-303 us buffered against 137-150 us direct, 82,000-byte records (batch 1000) 347-375
//! against 194 us; 700-byte ones 201-206 against 181 us. (Two earlier trials, 2026-11-29, at
//! batch 1 and 10 only, found no gain there: `mod.rs`.)
//!
//! A direct write covers whole blocks, so a record that begins inside a block rewrites the
//! block's earlier bytes (the previous record's end) from the copy kept here, as the page
//! cache's write-back rewrites the whole page, and pads its last block with zeros. The
//! padding may only cover dead bytes: the caller says how far they reach (`dead_end`: the
//! needed records begin there, or the file ends), and a record whose padding would pass it
//! is written buffered (`write` answers `false`). A filesystem that refuses direct I/O
//! (open or write, `EINVAL`) turns this writer off for good.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// The unit of a direct write: offsets, lengths and the buffer's address are multiples of it
/// (the largest logical block size Linux devices use).
pub(crate) const BLOCK: u64 = 4096;

/// The log opened a second time, for direct writes, and the last block it wrote.
pub(crate) struct DirectLog {
    file: File,
    /// Holds the blocks of one write at an aligned offset inside it (`aligned`).
    buf: Vec<u8>,
    /// The offset of the last block written, and its bytes as written.
    tail: Option<(u64, Box<[u8; BLOCK as usize]>)>,
    /// The filesystem refused a direct write: every record goes buffered from then on.
    refused: bool,
}

impl DirectLog {
    /// Opens `path` for direct writes; `None` where the filesystem does not take them.
    pub(crate) fn open(path: &Path) -> Option<DirectLog> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .ok()?;
        Some(DirectLog {
            file,
            buf: Vec::new(),
            tail: None,
            refused: false,
        })
    }

    /// Whether direct writes are still taken (the filesystem has not refused one).
    pub(crate) fn usable(&self) -> bool {
        !self.refused
    }

    /// Forgets the last block: bytes were written around this writer (a buffered record or
    /// a wrap marker), so its copy may be stale.
    pub(crate) fn forget_tail(&mut self) {
        self.tail = None;
    }

    /// Writes `record` at `at` in whole blocks, its first block's earlier bytes read from the
    /// kept copy or from `log` (the buffered handle), its last block padded with zeros.
    /// `Ok(false)`: not written, because the padding would reach `dead_end` (or the file's
    /// end) or the filesystem refused the direct write; the caller writes it buffered.
    pub(crate) fn write(
        &mut self,
        log: &File,
        record: &[u8],
        at: u64,
        dead_end: u64,
    ) -> std::io::Result<bool> {
        let start = at / BLOCK * BLOCK;
        let end = (at + record.len() as u64).div_ceil(BLOCK) * BLOCK;
        if end > dead_end || record.is_empty() || self.refused {
            return Ok(false);
        }
        let len = (end - start) as usize;
        let head = (at - start) as usize;
        let (buf, tail) = (&mut self.buf, &self.tail);
        let blocks = aligned(buf, len);
        match tail {
            Some((offset, bytes)) if *offset == start => {
                blocks[..head].copy_from_slice(&bytes[..head]);
            }
            _ if head > 0 => log.read_exact_at(&mut blocks[..head], start)?,
            _ => {}
        }
        blocks[head..head + record.len()].copy_from_slice(record);
        blocks[head + record.len()..].fill(0);
        match self.file.write_all_at(blocks, start) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                self.refused = true;
                return Ok(false);
            }
            Err(e) => return Err(e),
        }
        let mut last = Box::new([0u8; BLOCK as usize]);
        last.copy_from_slice(&blocks[len - BLOCK as usize..]);
        self.tail = Some((end - BLOCK, last));
        Ok(true)
    }
}

/// `len` bytes of `buf` that begin at a multiple of `BLOCK` in memory.
fn aligned(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    let want = len + BLOCK as usize;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let skip = buf.as_ptr().align_offset(BLOCK as usize);
    &mut buf[skip..skip + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_file(bytes: usize) -> (tempfile::TempDir, File, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, vec![0xEEu8; bytes]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        (dir, file, path)
    }

    #[test]
    fn records_land_where_they_were_placed_and_keep_the_bytes_before_them() {
        let (_dir, log, path) = log_file(64 * 1024);
        let Some(mut direct) = DirectLog::open(&path) else {
            return; // a filesystem without direct I/O: the buffered path is the only one
        };
        let mut model = vec![0xEEu8; 64 * 1024];
        // (offset, length): inside one block, across blocks, block-aligned, after a gap
        // whose first block the writer must read back.
        let cases = [
            (100, 300),
            (400, 5000),
            (8192, 4096),
            (20_000, 10),
            (20_010, 7),
        ];
        for (i, (at, len)) in cases.into_iter().enumerate() {
            let record = vec![i as u8 + 1; len];
            assert!(direct.write(&log, &record, at, 64 * 1024).unwrap());
            let end = (at as usize + len).div_ceil(4096) * 4096;
            model[at as usize..at as usize + len].copy_from_slice(&record);
            model[at as usize + len..end].fill(0);
        }
        let mut back = vec![0u8; 64 * 1024];
        log.read_exact_at(&mut back, 0).unwrap();
        assert!(back == model, "the file differs from the model");
    }

    #[test]
    fn padding_never_passes_the_dead_end() {
        let (_dir, log, path) = log_file(16 * 1024);
        let Some(mut direct) = DirectLog::open(&path) else {
            return;
        };
        // (offset, length, dead end, written direct)
        let cases = [
            (0, 100, 4096, true),
            (100, 100, 4095, false),
            (4000, 200, 8192, true),
            (4000, 200, 8000, false),
        ];
        for (at, len, dead_end, expected) in cases {
            let wrote = direct.write(&log, &vec![1u8; len], at, dead_end).unwrap();
            assert_eq!(wrote, expected, "at {at} len {len} dead end {dead_end}");
        }
    }
}
