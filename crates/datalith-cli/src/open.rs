//! Opening a database directory, with the difference between "create it" (the shell,
//! `transact`, `import`, like `sqlite3 FILE`) and "it must exist" (reading subcommands, where a
//! typo should not silently create an empty database).

use std::path::Path;

use datalith::{Database, DbOptions};

use crate::error::{CliError, Result};

/// Whether `path` holds a database (an LMDB data file).
pub fn exists(path: &Path) -> bool {
    path.join("data.mdb").is_file()
}

/// Opens the database at `path`, creating it if `create`.
pub fn open(path: &Path, create: bool) -> Result<Database> {
    if !create && !exists(path) {
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
    if path.is_file() {
        return Err(CliError::env(format!(
            "{} is a file; a Datalith database is a directory",
            path.display()
        )));
    }
    Database::open(path, DbOptions::default())
        .map_err(|e| CliError::from(e).context(format!("cannot open {}", path.display())))
}
