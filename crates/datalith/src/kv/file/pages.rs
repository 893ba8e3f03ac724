//! Reading a data file's pages with plain positioned reads, never through a memory map: a page
//! past the end of the file is an error here, where in a map it would be a `SIGBUS`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::damage::{Damage, Refusal};

/// A data file opened for reading pages.
pub(crate) struct PageFile {
    file: File,
    /// The file's length in bytes when opened.
    pub(crate) bytes: u64,
    pub(crate) page_bytes: usize,
    /// Whole pages the file holds.
    pub(crate) pages: u64,
}

impl PageFile {
    /// Opens `path` read-only (never creating it).
    pub(crate) fn open(path: &Path) -> Result<(File, u64), Refusal> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(Refusal::NotADatabase("not a regular file".into()));
        }
        Ok((file, meta.len()))
    }

    pub(crate) fn new(file: File, bytes: u64, page_bytes: usize) -> PageFile {
        PageFile {
            file,
            bytes,
            page_bytes,
            pages: bytes / page_bytes as u64,
        }
    }

    /// Reads `count` whole pages from `pgno`, which must lie inside the file.
    pub(crate) fn read(&self, pgno: u64, count: u64, table: &str) -> Result<Vec<u8>, Refusal> {
        let end = pgno.checked_add(count).filter(|&e| e <= self.pages);
        if end.is_none() {
            return Err(Damage::at(
                pgno,
                table,
                format!(
                    "{count} page(s) from here lie past the end of the file ({} bytes, {} pages)",
                    self.bytes, self.pages
                ),
            )
            .into());
        }
        let mut buf = vec![0u8; count as usize * self.page_bytes];
        self.file
            .read_exact_at(&mut buf, pgno * self.page_bytes as u64)?;
        Ok(buf)
    }
}

/// Reads exactly `buf.len()` bytes at `offset`, or says how many the file had.
pub(crate) fn read_prefix(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<bool> {
    match file.read_exact_at(buf, offset) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}
