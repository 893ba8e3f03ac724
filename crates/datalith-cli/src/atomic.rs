//! Files the command writes for the user appear whole or not at all: written under a
//! temporary name in the target's directory, synced, renamed over the target, and the
//! directory synced. A failure (a full disk, a bad database, Ctrl-C before the rename) leaves
//! the target as it was: no half-written export that looks like a finished one.

use std::fs::File;
use std::path::Path;

use crate::error::{CliError, Result};

/// Writes `path` through `fill`, atomically (see the module doc).
pub fn write_file(path: &Path, fill: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| CliError::user(format!("{} is not a file name", path.display())))?;
    let temp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| CliError::user(format!("cannot create {}: {e}", temp.display())))?;
    let written = fill(&mut file)
        .and_then(|()| Ok(file.sync_all()?))
        .and_then(|()| Ok(std::fs::rename(&temp, path)?))
        .and_then(|()| Ok(File::open(dir)?.sync_all()?));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
