//! The served databases: each directory opened for writing once, when the server starts, and
//! shared by every request (a `Database` is cheap to clone and safe to share). One process
//! writes a database: while the server runs, another process that opens one of them for
//! writing gets `:datalith.error/busy`, and readers in other processes (`datalith query`)
//! keep working.
//!
//! A database is named by its directory's name. Requests reach a database only through this
//! table of names, so no name a client sends (`..`, `a/b`, `%2e%2e`) can reach a directory
//! that was not given on the command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use datalith::edn::Edn;
use datalith::{Database, DbOptions};

use crate::error::{Result, ServerError};
use crate::ops::Source;

/// The databases, by name.
pub struct Served {
    by_name: BTreeMap<String, Arc<Source>>,
}

/// Each directory with the name it is served under; two with the same name are refused.
pub fn names(dirs: &[PathBuf]) -> Result<Vec<(String, PathBuf)>> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for dir in dirs {
        let name = name_of(dir)?;
        if let Some((_, other)) = out.iter().find(|(n, _)| *n == name) {
            return Err(ServerError::invalid(format!(
                "{} and {} would both be served as {name:?}: rename one directory",
                other.display(),
                dir.display()
            )));
        }
        out.push((name, dir.clone()));
    }
    Ok(out)
}

/// The directory's name, which must be usable in a URL as it is.
fn name_of(dir: &Path) -> Result<String> {
    let named = match dir.file_name() {
        Some(n) => PathBuf::from(n),
        // `.`, `..`, `/`: the name of the directory they stand for.
        None => std::fs::canonicalize(dir)?
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_default(),
    };
    let name = named.to_str().unwrap_or("").to_string();
    let fits = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !fits {
        return Err(ServerError::invalid(format!(
            "{}: a served directory's name must be letters, digits, '.', '_' or '-' (it is \
             the database's name in URLs)",
            dir.display()
        ))
        .with("path", Edn::String(dir.display().to_string())));
    }
    Ok(name)
}

impl Served {
    /// Opens (creating if missing) each named directory for writing, durably; its values
    /// may be leased for at most `max_lease`.
    pub fn open(
        named: &[(String, PathBuf)],
        memory_limit: Option<u64>,
        max_lease: Duration,
    ) -> Result<Served> {
        let mut by_name = BTreeMap::new();
        for (name, dir) in named {
            let mut options = DbOptions::default();
            options.query_memory_limit = memory_limit;
            let database = Database::open(dir, options).map_err(|e| {
                let e = ServerError::from(e);
                ServerError {
                    message: format!("{}: {}", dir.display(), e.message),
                    ..e
                }
            })?;
            by_name.insert(name.clone(), Arc::new(Source::new(database, max_lease)));
        }
        Ok(Served { by_name })
    }

    /// The database served as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Source>> {
        self.by_name.get(name)
    }

    /// Lets go of the values whose leases have ended, in every database.
    pub fn sweep_leases(&self) {
        for source in self.by_name.values() {
            source.leases.sweep();
        }
    }

    /// Every name, in order.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_directories_and_must_be_url_safe_and_distinct() {
        let ok = |p: &str| names(&[PathBuf::from(p)]).map(|n| n[0].0.clone());
        assert_eq!(ok("/data/people").unwrap(), "people");
        assert_eq!(ok("people/").unwrap(), "people");
        assert_eq!(ok("/srv/films.v2").unwrap(), "films.v2");
        assert!(ok("/data/with space").is_err());
        assert!(ok("/data/caf\u{e9}").is_err());
        let twice = names(&[PathBuf::from("/a/people"), PathBuf::from("/b/people")]);
        assert!(twice.unwrap_err().message.contains("both be served"));
    }
}
