//! The served databases: each directory opened for writing once, and shared by every
//! request (a `Database` is cheap to clone and safe to share). One process writes a
//! database: while the server runs, another process that opens one of them for writing gets
//! `:datalith.error/busy`, and readers in other processes (`datalith query`) keep working.
//!
//! A database is named by its directory's name. Requests reach a database only through this
//! table of names, so no name a client sends (`..`, `a/b`, `%2e%2e`) can reach a directory
//! that was not given on the command line or made in `--create-in`.
//!
//! With `--create-in DIR`, admins create databases (`POST /dbs`) as directories of DIR, and
//! delete them (`DELETE /db/NAME`); the databases found in DIR at start are served too, so
//! created ones come back after a restart. Only databases in DIR can be deleted: one given
//! on the command line is the operator's. A deleted database leaves the table at once (new
//! requests get 404); its files go once the requests still running on it, and its leased
//! values, are gone (a bounded wait; past it the database is served again and the delete
//! answers busy).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use datalith::edn::Edn;
use datalith::{Database, DbOptions};

use crate::error::{codes, Result, ServerError};
use crate::ops::Source;
use crate::replica::{LogUrl, Replica};
use tokio::runtime::Handle;

/// How long a delete waits for the requests running on the database to end.
const DELETE_PATIENCE: Duration = Duration::from_secs(10);

/// The databases, by name.
pub struct Served {
    by_name: RwLock<BTreeMap<String, Entry>>,
    create_in: Option<PathBuf>,
    /// The options every database is opened with (its query memory limit, and for a new
    /// one which datoms it keeps in AVE).
    base: DbOptions,
    max_lease: Duration,
    max_leases: usize,
    /// `--page-cache-bytes`.
    page_cache_bytes: usize,
    /// With `--log`: the log, and the runtime its client runs on.
    log: Option<(LogUrl, Handle)>,
}

struct Entry {
    source: Arc<Source>,
    path: PathBuf,
    /// In `--create-in`: may be deleted.
    deletable: bool,
}

/// The longest database name, in bytes: a directory's name has at most 255 bytes on the
/// usual file systems (a longer one failed as an I/O error, 500), and the name also appears
/// in paths, URLs and log lines.
pub const MAX_NAME_BYTES: usize = 128;

/// Whether `name` can name a database (and so a directory, and a URL's segment).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The databases in `dir` (subdirectories holding a data file), with their names.
pub fn found_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if valid_name(name) && path.join("data.mdb").is_file() {
            out.push((name.to_string(), path.clone()));
        }
    }
    out.sort();
    Ok(out)
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
    if !valid_name(&name) {
        return Err(ServerError::invalid(format!(
            "{}: a served directory's name must be letters, digits, '.', '_' or '-' (it is \
             the database's name in URLs)",
            dir.display()
        ))
        .with("path", Edn::String(dir.display().to_string())));
    }
    Ok(name)
}

/// How many staged ops a node applying a log lets wait for its LMDB writer before its
/// committer waits (`EnvOptions::log_apply_backlog_ops`): about 1,700 W transactions of 100
/// entities. Without a bound, a node catching up held its whole backlog in memory and
/// touched 1.4-1.6 GB of fresh pages for 10,000 such records; with it, measured
/// (`scale/RESULTS.md`, 2026-12-05), 152,477 and 189,415 page faults, 0.9-1.0 s of system CPU
/// instead of 2-3 s, and the data file caught up at 3,121.7 and 3,428.4 transactions/s
/// against 1,941.3 and 2,620.5 without it in the same rounds (300K ops: 2,815.5 and 3,021.0).
const REPLICA_BACKLOG_OPS: usize = 1 << 20;

impl Served {
    /// Opens (creating if missing) each named directory for writing, durably; `deletable`
    /// ones are those in `create_in`. Values may be leased for at most `max_lease`,
    /// `max_leases` of a database at once. With `log`, each database's transactions go
    /// through that log (`replica`).
    pub fn open(
        named: &[(String, PathBuf, bool)],
        create_in: Option<PathBuf>,
        base: DbOptions,
        max_lease: Duration,
        max_leases: usize,
        page_cache_bytes: usize,
        log: Option<(LogUrl, Handle)>,
    ) -> Result<Served> {
        let served = Served {
            by_name: RwLock::new(BTreeMap::new()),
            create_in,
            base,
            max_lease,
            max_leases,
            page_cache_bytes,
            log,
        };
        for (name, dir, deletable) in named {
            let source = served.open_one(dir)?;
            served.table_mut().insert(
                name.clone(),
                Entry {
                    source,
                    path: dir.clone(),
                    deletable: *deletable,
                },
            );
        }
        Ok(served)
    }

    fn open_one(&self, dir: &Path) -> Result<Arc<Source>> {
        // With a log too, the files keep their own write-ahead log: the applier queues many
        // records at once, so a sync serves many (measured no slower than `NoSync`, whose
        // LMDB commits write every dirty page), and a node's own crash costs no replay.
        //
        // A node applying the log leaves LMDB to the background writer, like any database:
        // its committer prepares the next records while the writer puts the last ones into
        // LMDB on the other core, and reads that name no basis answer from the data file's
        // state (`Source::latest`), so they neither merge nor wait for that writer's backlog.
        // The writer starts on each group at once (no delay): those reads then lag the log by
        // a group's apply, not by the second a busy writer may otherwise gather groups for,
        // and the file keeps up as well. Measured (10,000 W batch-100 records, three
        // brokers, 2026-12-05, scale/RESULTS.md), transactions/s acknowledged and in the data
        // file: 2,381-2,560 and 2,330-2,532 when the committer wrote each group into LMDB
        // itself; 4,740-5,242 and 2,824-3,470 with the writer's default delay; 4,656-5,217
        // and 3,468-3,618 with none. And the committer waits while more than
        // `REPLICA_BACKLOG_OPS` wait for the writer (see there).
        let mut options = self.base.clone();
        if self.log.is_some() {
            options.env.log_apply_delay = std::time::Duration::ZERO;
            options.env.log_apply_backlog_ops = REPLICA_BACKLOG_OPS;
        }
        let database = Database::open(dir, options).map_err(|e| {
            let e = ServerError::from(e);
            ServerError {
                message: format!("{}: {}", dir.display(), e.message),
                ..e
            }
        })?;
        let mut source = Source::new(
            database,
            self.max_lease,
            self.max_leases,
            self.page_cache_bytes,
        );
        if let Some((url, handle)) = &self.log {
            source.replica = Some(Arc::new(Replica::start(&source.database, url, handle)?));
        }
        Ok(Arc::new(source))
    }

    /// Stops every database's log applier (before the runtime its client needs goes).
    pub fn stop_replicas(&self) {
        for entry in self.table().values() {
            if let Some(replica) = &entry.source.replica {
                replica.stop();
            }
        }
    }

    fn table(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Entry>> {
        // A panic while holding the lock leaves a whole map: go on with it.
        self.by_name.read().unwrap_or_else(|p| p.into_inner())
    }

    fn table_mut(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Entry>> {
        self.by_name.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The database served as `name`.
    pub fn get(&self, name: &str) -> Option<Arc<Source>> {
        self.table().get(name).map(|e| e.source.clone())
    }

    /// Every name, in order.
    pub fn names(&self) -> Vec<String> {
        self.table().keys().cloned().collect()
    }

    /// Lets go of the values whose leases have ended, in every database; of all of a
    /// database's values while a growth of its map waits for snapshots to close.
    pub fn sweep_leases(&self) {
        let sources: Vec<Arc<Source>> = self.table().values().map(|e| e.source.clone()).collect();
        for source in sources {
            let growth_waiting = source.database.env().growth_waiting();
            source.leases.sweep(growth_waiting);
        }
    }

    /// Creates (or opens, if its directory is there) database `name` in `--create-in` and
    /// serves it; false when it was there already. Blocks: run it off the async threads.
    pub fn create(&self, name: &str) -> Result<bool> {
        let Some(dir) = &self.create_in else {
            return Err(ServerError::invalid(
                "this server creates no databases (start it with --create-in DIR)",
            ));
        };
        if !valid_name(name) {
            return Err(ServerError::invalid(format!(
                "{name:?} cannot name a database: 1 to {MAX_NAME_BYTES} letters, digits, '.', \
                 '_' or '-'"
            )));
        }
        if self.table().contains_key(name) {
            return Err(exists(name));
        }
        let path = dir.join(name);
        let existed = path.join("data.mdb").is_file();
        let source = self.open_one(&path)?;
        let mut table = self.table_mut();
        if table.contains_key(name) {
            // Another request made it meanwhile (its open would have failed on ours).
            return Err(exists(name));
        }
        table.insert(
            name.to_string(),
            Entry {
                source,
                path,
                deletable: true,
            },
        );
        Ok(!existed)
    }

    /// Stops serving database `name` and deletes its files, once the requests running on it
    /// have ended. Blocks: run it off the async threads.
    pub fn delete(&self, name: &str) -> Result<()> {
        let entry = {
            let mut table = self.table_mut();
            match table.get(name) {
                None => return Err(unknown(name)),
                Some(e) if !e.deletable => {
                    return Err(ServerError::invalid(format!(
                        "database {name:?} was given on the command line: only databases in \
                         --create-in can be deleted"
                    )))
                }
                Some(_) => table.remove(name).expect("present"),
            }
        };
        let Entry {
            source,
            path,
            deletable,
        } = entry;
        let deadline = Instant::now() + DELETE_PATIENCE;
        let mut source = source;
        let last = loop {
            match Arc::try_unwrap(source) {
                Ok(last) => break last,
                Err(shared) if Instant::now() < deadline => {
                    source = shared;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(shared) => {
                    self.table_mut().insert(
                        name.to_string(),
                        Entry {
                            source: shared,
                            path,
                            deletable,
                        },
                    );
                    return Err(ServerError::new(
                        codes::OVERLOADED,
                        format!(
                            "database {name:?} is still in use after {} s; it is served \
                             again, retry the delete",
                            DELETE_PATIENCE.as_secs()
                        ),
                    ));
                }
            }
        };
        // The last handle: the database closes here, then its files can go.
        drop(last);
        std::fs::remove_dir_all(&path)
            .map_err(|e| ServerError::from(e).with("path", Edn::String(path.display().to_string())))
    }
}

fn exists(name: &str) -> ServerError {
    ServerError::new(
        codes::DATABASE_EXISTS,
        format!("database {name:?} is served already"),
    )
    .with("database", Edn::String(name.to_string()))
}

fn unknown(name: &str) -> ServerError {
    ServerError::new(
        codes::UNKNOWN_DATABASE,
        format!("no database {name:?} is served here (GET /dbs lists those you may read)"),
    )
    .with("database", Edn::String(name.to_string()))
}

/// `:datalith.error/unknown-database` for `name` (also the pipeline's).
pub fn unknown_database(name: &str) -> ServerError {
    unknown(name)
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
