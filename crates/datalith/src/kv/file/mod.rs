//! The data file read without LMDB: LMDB trusts `data.mdb` (a damaged page number or offset
//! makes it read outside the map: `SIGBUS`, `SIGSEGV`, or a wrong answer), so a file is
//! validated with plain reads before LMDB maps it.
//!
//! - [`layout`]: LMDB's on-disk structures (from `mdb.c`), parsed from bytes.
//! - [`pages`]: page reads bounded by the file's length.
//! - [`header`]: both meta pages (every open).
//! - [`walk`]: the walk of the trees, as far as the catalog (every open) or every page
//!   (`check`, and the command's reading subcommands).
//! - [`damage`]: what is wrong and where.

mod damage;
mod header;
mod layout;
mod pages;
mod walk;

use std::path::Path;

pub use damage::Damage;
pub use walk::Structure;

use super::error::KvError;
use damage::Refusal;
use pages::PageFile;
use walk::Reach;

/// The file name of LMDB's data file inside an environment directory.
pub const DATA_FILE: &str = "data.mdb";

/// The check every open does before LMDB maps `file` (an existing data file): both meta pages,
/// LMDB's table of tables and its free list walked, each table's root inside the file, and
/// the pages past the file's end (if any) listed free.
pub fn check_catalog(file: &Path) -> Result<Structure, KvError> {
    run(file, Reach::Catalog)
}

/// The whole structural walk of the data file `file` (see [`walk`]): every page of every
/// table. Reads the file once with plain reads; never maps or writes it.
pub fn check_structure(file: &Path) -> Result<Structure, KvError> {
    run(file, Reach::Everything)
}

fn run(file: &Path, reach: Reach) -> Result<Structure, KvError> {
    let result = (|| {
        let (f, bytes) = PageFile::open(file)?;
        let header = header::read_header(&f, bytes)?;
        let pages = PageFile::new(f, bytes, header.page_bytes);
        walk::walk(&pages, &header, reach)
    })();
    result.map_err(|r| match r {
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
