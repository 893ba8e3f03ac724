//! Opening a database directory, with the difference between "create it" (the shell,
//! `transact`, `import`, like `sqlite3 FILE`) and "it must exist" (reading subcommands, where a
//! typo should not silently create an empty database).
//!
//! Every subcommand validates every page of an existing data file before LMDB reads it (a
//! damaged file is an error, exit 2, never a crash): a command runs once, so reading the file
//! once more is cheap next to a crash or a wrong answer. (The library's default open checks
//! only LMDB's catalog of tables.) `check` opens read-only: it creates and writes nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use datalith::kv::Verify;
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

fn cannot_open(path: &Path, write: bool) -> impl FnOnce(datalith::tx::TxError) -> CliError + '_ {
    move |e| {
        let e = CliError::from(e);
        if e.category == datalith::error::IO_FORBIDDEN {
            return permission_denied(path, write, &e.message);
        }
        e.context(format!("cannot open {}", path.display()))
    }
}

/// The path whose permissions refused the open, and what the open needed of it: the parent
/// directory (when the database must be created), `data.mdb`, `lock.mdb`, then the database
/// directory itself. LMDB reports only the errno, not the file, so each is tried with
/// `access(2)` in the order the open uses them.
fn refused_path(path: &Path, write: bool) -> (std::path::PathBuf, &'static str) {
    use std::os::unix::ffi::OsStrExt;
    let allowed = |p: &Path, mode: libc::c_int| {
        let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        unsafe { libc::access(c.as_ptr(), mode) == 0 }
    };
    let (file_mode, file_need) = match write {
        true => (libc::R_OK | libc::W_OK, "read and write"),
        false => (libc::R_OK, "read"),
    };
    let mut candidates = Vec::new();
    if !path.exists() {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        candidates.push((parent, libc::W_OK | libc::X_OK, "create a directory in"));
    }
    let mut missing_file = false;
    for file in ["data.mdb", "lock.mdb"] {
        let f = path.join(file);
        match f.exists() {
            true => candidates.push((f, file_mode, file_need)),
            false => missing_file = true,
        }
    }
    match write && missing_file {
        true => candidates.push((
            path.to_path_buf(),
            libc::W_OK | libc::X_OK,
            "create files in",
        )),
        false => candidates.push((path.to_path_buf(), libc::X_OK, "enter")),
    }
    candidates
        .into_iter()
        .find(|(p, mode, _)| !allowed(p, *mode))
        .map_or((path.to_path_buf(), "open"), |(p, _, need)| (p, need))
}

/// A permission error naming the path that refused: its own category
/// (`:datalith.error/permission-denied`) and exit code 3.
fn permission_denied(path: &Path, write: bool, cause: &str) -> CliError {
    let (refused, need) = refused_path(path, write);
    CliError::categorized(
        datalith::error::IO_FORBIDDEN,
        format!(
            "permission denied: cannot {need} {} (opening the database {}; {cause})",
            refused.display(),
            path.display()
        ),
        vec![
            datalith::error::text_field("path", &refused.display().to_string()),
            datalith::error::text_field("database", &path.display().to_string()),
        ],
    )
}

/// Whether opens accept a log damaged inside (`--accept-log-damage`), set once from the
/// command line.
static ACCEPT_LOG_DAMAGE: AtomicBool = AtomicBool::new(false);

/// Sets `--accept-log-damage` for every open of this run.
pub fn accept_log_damage(accept: bool) {
    ACCEPT_LOG_DAMAGE.store(accept, Ordering::Relaxed);
}

/// Which datoms a database created by this run keeps in AVE (`--value-index`).
static VALUE_INDEX: std::sync::Mutex<datalith::ValueIndex> =
    std::sync::Mutex::new(datalith::ValueIndex::Declared);

/// Sets `--value-index` for every database this run creates.
pub fn value_index(v: datalith::ValueIndex) {
    *VALUE_INDEX.lock().unwrap_or_else(|p| p.into_inner()) = v;
}

/// Opens the database at `path`, creating it if `create`.
pub fn open(path: &Path, create: bool) -> Result<Database> {
    not_a_file(path)?;
    if !create {
        must_exist(path)?;
    }
    let mut options = DbOptions::default();
    options.env.verify = Verify::Everything;
    options.env.log_accept_damage = ACCEPT_LOG_DAMAGE.load(Ordering::Relaxed);
    options.value_index = *VALUE_INDEX.lock().unwrap_or_else(|p| p.into_inner());
    Database::open(path, options).map_err(cannot_open(path, true))
}

/// Opens the existing database at `path` read-only, after validating every page.
pub fn open_read_only(path: &Path) -> Result<Database> {
    must_exist(path)?;
    let mut options = DbOptions::default();
    options.env.verify = Verify::Everything;
    Database::open_read_only(path, options).map_err(cannot_open(path, false))
}
