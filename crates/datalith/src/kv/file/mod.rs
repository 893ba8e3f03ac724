//! The data file read without LMDB: LMDB trusts `data.mdb` (a damaged page number or offset
//! makes it read outside the map: `SIGBUS`, `SIGSEGV`, or a wrong answer), so a file is
//! validated with plain reads before LMDB reads a page of it.
//!
//! - `layout`: LMDB's on-disk structures (from `mdb.c`), parsed from bytes.
//! - `pages`: page reads bounded by the file's length.
//! - `header`: both meta pages (before LMDB maps the file).
//! - `walk`: the walk of the trees, as far as the catalog (every open) or every page
//!   (`check`, and the command's reading subcommands).
//! - `damage`: what is wrong and where.
//!
//! `Environment::open` checks the header before LMDB maps the file, then pins a snapshot (an
//! LMDB read transaction, which reads only the meta pages) and walks: a writer in another
//! process cannot reuse the pages of the walked snapshot or of any newer one meanwhile.

mod damage;
mod header;
pub(crate) mod layout;
mod pages;
mod walk;

use std::path::Path;

pub use walk::{Structure, TableShape, Verify};

use super::error::KvError;
use damage::Refusal;
use pages::PageFile;

/// The file name of LMDB's data file inside an environment directory.
pub const DATA_FILE: &str = "data.mdb";

/// Checks the meta pages of the data file `file`: LMDB's magic, version and page size in both,
/// and the last page the newer names not far past the file's end. Reads two page prefixes.
pub fn check_header(file: &Path) -> Result<(), KvError> {
    guarded(file, || {
        let (f, bytes) = PageFile::open(file)?;
        header::read_header(&f, bytes).map(|_| ())
    })
}

/// Walks the data file `file` as far as `verify` says (see the `walk` module for what is
/// checked). Reads with plain reads; never maps or writes the file. On a file another process
/// writes, call it while holding a snapshot (`Environment::open` does).
pub fn check_structure(file: &Path, verify: Verify) -> Result<Structure, KvError> {
    guarded(file, || {
        let (f, bytes) = PageFile::open(file)?;
        let header = header::read_header(&f, bytes)?;
        let pages = PageFile::new(f, bytes, header.page_bytes);
        walk::walk(&pages, &header, verify)
    })
}

fn guarded<T>(file: &Path, f: impl FnOnce() -> Result<T, Refusal>) -> Result<T, KvError> {
    f().map_err(|r| match r {
        Refusal::NotADatabase(detail) => KvError::NotADatabase {
            path: file.to_path_buf(),
            detail,
        },
        Refusal::Damaged(d) => KvError::Corrupt {
            path: file.to_path_buf(),
            detail: d.to_string(),
        },
        Refusal::Io(e) if e.kind() == std::io::ErrorKind::NotFound => KvError::NotADatabase {
            path: file.to_path_buf(),
            detail: "no such file".into(),
        },
        Refusal::Io(e) => KvError::Io(e),
    })
}
