//! Opening a database directory, with the difference between "create it" (the shell,
//! `transact`, `import`, like `sqlite3 FILE`) and "it must exist" (reading subcommands, where a
//! typo should not silently create an empty database).
//!
//! Every subcommand validates every page of an existing data file before LMDB reads it (a
//! damaged file is an error, exit 2, never a crash): a command runs once, so reading the file
//! once more is cheap next to a crash or a wrong answer. (The library's default open checks
//! only LMDB's catalog of tables.) `check` opens read-only: it creates and writes nothing.

use std::path::Path;

use datalith::kv::file::Verify;
use datalith::{Database, DbOptions};

use crate::error::{CliError, Result};

/// Whether `path` holds a database (an LMDB data file, possibly damaged).
pub fn exists(path: &Path) -> bool {
    path.join("data.mdb").is_file()
}

fn not_a_file(path: &Path) -> Result<()> {
    match path.is_file() {
        true => Err(CliError::env(format!(
            "{} is a file; a Datalith database is a directory",
            path.display()
        ))),
        false => Ok(()),
    }
}

fn must_exist(path: &Path) -> Result<()> {
    not_a_file(path)?;
    if !exists(path) {
        return Err(CliError::categorized(
            datalith::error::IO_NOT_FOUND,
            format!(
                "no database at {} (the shell `datalith {}` creates one)",
                path.display(),
                path.display()
            ),
            vec![datalith::error::text_field(
                "path",
                &path.display().to_string(),
            )],
        ));
    }
    Ok(())
}

fn cannot_open(path: &Path) -> impl FnOnce(datalith::tx::TxError) -> CliError + '_ {
    move |e| CliError::from(e).context(format!("cannot open {}", path.display()))
}

/// Opens the database at `path`, creating it if `create`.
pub fn open(path: &Path, create: bool) -> Result<Database> {
    not_a_file(path)?;
    if !create {
        must_exist(path)?;
    }
    let mut options = DbOptions::default();
    options.env.verify = Verify::Everything;
    Database::open(path, options).map_err(cannot_open(path))
}

/// Opens the existing database at `path` read-only, after validating every page.
pub fn open_read_only(path: &Path) -> Result<Database> {
    must_exist(path)?;
    let mut options = DbOptions::default();
    options.env.verify = Verify::Everything;
    Database::open_read_only(path, options).map_err(cannot_open(path))
}
