//! `datalith demo` (written next).

use std::path::PathBuf;

use crate::error::Result;

/// Creates the demo database if missing and prints the tour.
pub fn run(_path: Option<PathBuf>, _fresh: bool) -> Result<()> {
    Ok(())
}
