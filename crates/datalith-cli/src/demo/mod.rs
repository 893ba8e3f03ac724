//! `datalith demo`: creates the demo database if missing, then prints a guided tour.
//!
//! Location: `--path`, else `$DATALITH_DEMO_DIR`, else `$XDG_DATA_HOME/datalith/demo`, else
//! `~/.local/share/datalith/demo`, else `./datalith-demo`. The database is built in a
//! sibling directory and renamed into place, so an interrupted build never leaves a
//! half-loaded demo behind.

pub mod data;
pub mod tour;

use std::path::{Path, PathBuf};
use std::time::Instant;

use datalith::Database;

use crate::error::{CliError, Result};
use crate::exec;

/// Where the demo lives when no `--path` is given.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("DATALITH_DEMO_DIR") {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("datalith").join("demo");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(h)
            .join(".local")
            .join("share")
            .join("datalith")
            .join("demo");
    }
    PathBuf::from("datalith-demo")
}

/// Creates the demo database if missing and prints the tour.
pub fn run(path: Option<PathBuf>, fresh: bool) -> Result<()> {
    let path = path.unwrap_or_else(default_path);
    if fresh && path.exists() {
        std::fs::remove_dir_all(&path)
            .map_err(|e| CliError::env(format!("cannot remove {}: {e}", path.display())))?;
    }
    if crate::open::exists(&path) {
        println!("Using the demo database at {}", path.display());
    } else {
        build(&path)?;
    }
    let db = crate::open::open(&path, false)?;
    tour::print(&db, &path)
}

/// Builds the demo database at `path` (through a temporary sibling directory).
fn build(path: &Path) -> Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .map_err(|e| CliError::env(format!("cannot create {}: {e}", parent.display())))?;
    let name = path
        .file_name()
        .map_or_else(|| "demo".into(), |n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(".{name}.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "Creating the demo database at {} (20,000 people from seed {}, and a small project graph)...",
        path.display(),
        data::SEED
    );
    let start = Instant::now();
    {
        let db = Database::open(&tmp, datalith::DbOptions::default())
            .map_err(|e| CliError::env(format!("cannot create {}: {e}", tmp.display())))?;
        load(&db)?;
    }
    if path.exists() {
        // An empty or foreign directory in the way: keep it, say so.
        let _ = std::fs::remove_dir(path);
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        CliError::env(format!(
            "cannot move {} to {}: {e}",
            tmp.display(),
            path.display()
        ))
    })?;
    println!("Created in {:.1} s.\n", start.elapsed().as_secs_f64());
    Ok(())
}

fn load(db: &Database) -> Result<()> {
    let schema = exec::forms("demo schema", data::SCHEMA)?;
    for f in &schema {
        exec::transact(db, f)?;
    }
    let chunks = data::people();
    let pb = crate::progress::bar(data::PEOPLE as u64, "people");
    let mut ids = Vec::with_capacity(data::PEOPLE);
    for (c, chunk) in chunks.iter().enumerate() {
        let (report, _) = exec::transact(db, chunk)?;
        let n = chunk.as_seq().map_or(0, <[_]>::len);
        for i in 0..n {
            let k = c * data::CHUNK + i;
            let id = report
                .tempid(&format!("p{k}"))
                .ok_or_else(|| CliError::env(format!("demo: person {k} got no id")))?;
            ids.push(id);
        }
        pb.inc(n as u64);
    }
    pb.finish_and_clear();
    exec::transact(db, &data::follows(&ids))?;
    exec::transact(db, &data::projects(&ids))?;
    Ok(())
}
