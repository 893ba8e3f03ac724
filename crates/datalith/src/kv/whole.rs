//! Files created whole: made and synced under a name of their own in the same directory, then
//! linked to their real name, so a crash or a full disk part way leaves no file at that name
//! rather than an empty or partial one, which a later open would have to refuse as damaged
//! (the log's and the data file's creation, `wal::file` and `env`).
//!
//! The name of their own is the real one, `.creating.`, the creating process's id, a dot and
//! a number (two opens of one directory in one process must not share it). What a process
//! that died part way left is removed by the next creation in that directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const CREATING: &str = ".creating.";

/// A name of this process's own, in `dir`, for making `name` whole.
pub(crate) fn temporary(dir: &Path, name: &str) -> PathBuf {
    static CREATIONS: AtomicU64 = AtomicU64::new(0);
    let n = CREATIONS.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{name}{CREATING}{}.{n}", std::process::id()))
}

/// Gives the whole file `made` the name `to` as well: `false` when `to` exists already
/// (another process made it first; `made` is left for the caller to remove).
pub(crate) fn link(made: &Path, to: &Path) -> std::io::Result<bool> {
    match std::fs::hard_link(made, to) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: a rename, which may replace a file another
        // process made meanwhile (the first open of a directory, by two processes at once).
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP)) => {
            std::fs::rename(made, to)?;
            Ok(true)
        }
        Err(e) => Err(e),
    }
}

/// Removes what creations of `name` in `dir` whose process is gone left behind (files or
/// directories).
pub(crate) fn remove_abandoned(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{name}{CREATING}");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.split('.').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|pid| *pid > 0)
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let path = entry.path();
            let _ = match path.is_dir() {
                true => std::fs::remove_dir_all(&path),
                false => std::fs::remove_file(&path),
            };
        }
    }
}
