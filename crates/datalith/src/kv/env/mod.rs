//! An open environment: opening the LMDB file (validated first) and its log, the handle users
//! hold, and the threads it starts (committer, applier). The state its stages share is
//! `kv::core` (below them) and `kv::shared`; the table catalog is in `catalog.rs`; one writing
//! process at a time in `writer.rs`.

use crossbeam_channel::Sender;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use super::committer::{self, BoxedRequest, Committer, Outcome, WriteRequest};
use super::core::map::{initial_map_bytes, page_size, round_up};
use super::core::{CommitStats, EnvCore};
use super::durability::{Durability, EnvOptions};
use super::error::KvError;
use super::file;
use super::flush::Flusher;
use super::gate::ReaderGate;
use super::lmdb::{self, env::EnvLimits, EnvFlags, LmdbError};
use super::read::ReadTxn;
use super::shared::EnvShared;
use super::table::Table;
use super::unapplied::Lazy;
use super::wal::{LogTail, Wal};
use super::warm::Warmer;
use super::whole;
use crate::limits;

mod catalog;
mod space;
mod writer;

pub use super::core::CommitCounters;
use catalog::check_or_init_meta;
pub use catalog::FORMAT_VERSION;

struct EnvInner {
    shared: Option<Arc<EnvShared>>,
    sender: Option<Sender<BoxedRequest>>,
    /// The committer's batch state, which blocking callers may also run.
    committing: Arc<Committer>,
    committer: Option<JoinHandle<()>>,
    tables: RwLock<HashMap<String, Table>>,
}

impl Drop for EnvInner {
    fn drop(&mut self) {
        // Closing the queue ends the committer after it finishes what is queued.
        self.sender.take();
        if let Some(t) = self.committer.take() {
            let _ = t.join();
        }
        if let Some(shared) = self.shared.take() {
            // What is logged but not in LMDB goes there first (on failure the log still
            // holds it, and the next open replays it).
            if let Some(lazy) = &shared.lazy {
                let _ = lazy.shutdown(&shared.core);
            }
            // A last checkpoint: the next open has nothing to replay.
            if let Some(wal) = &shared.core.wal {
                wal.shutdown(&shared.core.env);
            }
            // Snapshots kept only for reports' database values end with the environment (a
            // report kept past its database must not keep the files open).
            shared.core.retained.release_all();
            // The LMDB environment closes with the last holder (now, unless a reader lives),
            // after which the same path can be reopened in this process.
            drop(shared);
        }
        super::commit_timing::report();
    }
}

/// The oldest snapshot open in this process, as `Environment::oldest_snapshot` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeldSnapshot {
    /// How long it has been open.
    pub age: std::time::Duration,
    /// Snapshots open in this process, the oldest included.
    pub open_snapshots: u32,
    /// How much the file grew since it opened: an upper bound of the space it keeps LMDB from
    /// reusing (pages freed after a snapshot opened are reused only once it closes).
    pub file_growth_bytes: usize,
}

/// An open Datalith environment (one directory: LMDB's `data.mdb` and `lock.mdb`). Cheap to
/// clone; the environment closes when the last clone and the last reader are gone.
#[derive(Clone)]
pub struct Environment {
    inner: Arc<EnvInner>,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Environment({})", self.core().path.display())
    }
}

impl Environment {
    /// Opens (creating if missing) the environment in directory `path`. An existing data file
    /// is validated first (`options.verify`); a damaged one is refused with
    /// [`KvError::Corrupt`] or [`KvError::NotADatabase`] before LMDB reads a page of it.
    pub fn open(path: impl AsRef<Path>, options: EnvOptions) -> Result<Environment, KvError> {
        Self::open_with(path.as_ref(), options, false)
    }

    /// Opens the existing environment in directory `path` for reading only: never creates,
    /// writes or changes a file (LMDB registers the reader in `lock.mdb` when that file
    /// exists, and runs without locks when it does not). Missing tables are
    /// [`KvError::NoSuchTable`]; writes fail with [`KvError::Closed`].
    pub fn open_read_only(
        path: impl AsRef<Path>,
        options: EnvOptions,
    ) -> Result<Environment, KvError> {
        Self::open_with(path.as_ref(), options, true)
    }

    fn open_with(
        path: &Path,
        options: EnvOptions,
        read_only: bool,
    ) -> Result<Environment, KvError> {
        let path = path.to_path_buf();
        let data = path.join(file::DATA_FILE);
        let existing = if read_only {
            if !path.is_dir() {
                return Err(KvError::NotADatabase {
                    path,
                    detail: "no such directory".into(),
                });
            }
            true
        } else {
            std::fs::create_dir_all(&path)?;
            // A zero-length file is not a new database: LMDB would initialize it. So a new
            // one is made whole first, and only then given its name.
            std::fs::symlink_metadata(&data).is_ok() || !create_data_file(&path)?
        };
        // Before LMDB maps the file: its meta pages decide how much it maps. Without a lock
        // file nobody has the environment open (LMDB makes one on every open), so nobody
        // writes and the whole walk can come first: a refused file then leaves no lock file.
        let locked = path.join("lock.mdb").exists();
        let page_bytes = page_size();
        let wal_settings = options.wal_settings();
        // Before LMDB reads the data file: recovery's first step may roll its meta pages back.
        let prepared_log = match !read_only && options.durability.uses_log() {
            true => Some(writer::hold(options.busy_timeout, &path, || {
                Wal::prepare(&path, existing, page_bytes, &wal_settings)
            })?),
            false => None,
        };
        let mut verified = None;
        if existing {
            match locked {
                true => file::check_header(&data)?,
                false => verified = Some(file::check_structure(&data, options.verify)?),
            }
        }
        let mut flags = match read_only {
            true if locked => EnvFlags::READ_ONLY,
            // Without a lock file nobody has the environment open (LMDB makes one on every
            // open), and making one would write.
            true => EnvFlags::READ_ONLY | EnvFlags::NO_LOCK,
            // The log makes commits durable; LMDB syncs only at checkpoints.
            false if prepared_log.is_some() => EnvFlags::NO_SYNC,
            false => options.durability.env_flags(),
        };
        if options.no_read_ahead {
            flags |= EnvFlags::NO_READ_AHEAD;
        }
        let initial = round_up(
            initial_map_bytes(&options, flags).max(page_bytes * 16),
            page_bytes,
        );
        let open = |map_bytes: usize| {
            lmdb::Env::open(
                &path,
                flags,
                EnvLimits {
                    map_bytes,
                    max_readers: limits::MAX_READERS,
                    max_dbs: limits::MAX_TABLES,
                },
            )
        };
        // The reservation is only a saving: where the address space is limited (`ulimit -v`
        // answers ENOMEM, valgrind EINVAL), open with a quarter of it, down to the ordinary
        // map that grows.
        let mut map_bytes = initial;
        let opened = loop {
            match open(map_bytes) {
                Err(lmdb::env::OpenError::Lmdb(e))
                    if matches!(e.code, libc::ENOMEM | libc::EINVAL)
                        && map_bytes > limits::DEFAULT_INITIAL_MAP_BYTES =>
                {
                    map_bytes = (map_bytes / 4).max(limits::DEFAULT_INITIAL_MAP_BYTES);
                }
                other => break other,
            }
        };
        let env = opened.map_err(|e| env_open_error(&path, e))?;
        if existing && locked {
            // Others may have it open: a snapshot pins its pages and every newer snapshot's
            // against reuse by writers, so the walk sees a stable tree. Beginning one reads
            // only the meta pages.
            let pin = env.read_txn().map_err(|e| open_error(&path, e))?;
            // A meta page read while a writer rewrites it can be torn: damage is only
            // damage if a second reading finds it too.
            let shape = file::check_structure(&data, options.verify)
                .or_else(|_| file::check_structure(&data, options.verify))?;
            verified = Some(shape);
            drop(pin);
        }
        let info = env.info();
        let map_bytes = info.map_size;
        let used_pages = info.last_page_number + 1;
        let meta = check_or_init_meta(&env, &path, read_only)?;
        let wal = match prepared_log {
            Some(prepared) => Some(Wal::start(prepared, &path, &env, meta, wal_settings)?),
            None => None,
        };
        // Recovery may have grown the map.
        let map_bytes = env.info().map_size.max(map_bytes);

        let (tx, rx) = crossbeam_channel::bounded(limits::WRITE_QUEUE_CAPACITY);
        // Only where commits do not flush the map: a synchronous `msync` would also write the
        // zero pages the warmer dirtied ahead, on every commit's critical path. It only saves
        // time, so a thread the system refuses means no warmer, not a failed open.
        let warmer = match !read_only && flags.contains(EnvFlags::WRITE_MAP | EnvFlags::MAP_ASYNC) {
            true => Warmer::start().ok(),
            false => None,
        };
        // Likewise only a saving: without a descriptor or a thread, commits flush by themselves.
        let flusher =
            match !read_only && wal.is_none() && options.durability.flushes_data_at_commit() {
                true => env.data_fd().ok().and_then(|fd| Flusher::start(fd).ok()),
                false => None,
            };
        let path_for_tail = path.clone();
        let lazy = match wal.is_some() && options.log_apply_later {
            true => Some(
                Lazy::new(options.log_apply_delay, options.log_readers_apply)
                    .with_backlog_limit(options.log_apply_backlog_ops),
            ),
            false => None,
        };
        let core = EnvCore {
            warmer,
            flusher,
            env,
            meta,
            path,
            durability: options.durability,
            gate: ReaderGate::new(
                limits::MAX_READERS - limits::RESERVED_READER_SLOTS - limits::IDLE_READ_TXNS as u32,
            ),
            stats: CommitStats::default(),
            map_bytes: AtomicUsize::new(map_bytes),
            used_pages: AtomicUsize::new(used_pages),
            growth_patience: options.growth_patience,
            page_bytes,
            poison: Mutex::new(None),
            poisoned: AtomicBool::new(false),
            inject_failure: AtomicBool::new(false),
            inject_sync_failure: AtomicBool::new(false),
            retained: Default::default(),
            read_only,
            verified,
            wal,
            // Every read-only open reads the log's tail, even when there is no log yet: a
            // writer may create one while this environment is open.
            tail: read_only
                .then(|| LogTail::new(&path_for_tail, page_bytes, options.log_derivation.clone())),
        };
        let shared = Arc::new(EnvShared { core, lazy });
        if let Some(lazy) = &shared.lazy {
            lazy.start(&shared)?;
        }
        let committing = Arc::new(Committer::new(rx));
        // Read-only: no committer, and with no sender every write fails as `Closed`.
        let (sender, committer) = match read_only {
            true => (None, None),
            false => {
                let (for_thread, committing) = (shared.clone(), committing.clone());
                let committer = std::thread::Builder::new()
                    .name("datalith-committer".into())
                    .spawn(move || committer::run(for_thread, committing))?;
                (Some(tx), Some(committer))
            }
        };
        Ok(Environment {
            inner: Arc::new(EnvInner {
                shared: Some(shared),
                sender,
                committing,
                committer,
                tables: RwLock::new(HashMap::new()),
            }),
        })
    }

    fn core(&self) -> &EnvCore {
        &self.shared().core
    }

    pub(crate) fn shared(&self) -> &Arc<EnvShared> {
        self.inner
            .shared
            .as_ref()
            .expect("shared state lives until drop")
    }

    /// The directory of the environment.
    pub fn path(&self) -> &Path {
        &self.core().path
    }

    /// What the validation of the data file at open found (as far as `EnvOptions::verify`
    /// reached); `None` if this open created the file.
    pub fn verified(&self) -> Option<&file::Structure> {
        self.core().verified.as_ref()
    }

    /// Whether the environment was opened read-only (`Environment::open_read_only`).
    pub fn is_read_only(&self) -> bool {
        self.core().read_only
    }

    /// The durability the environment was opened with.
    pub fn durability(&self) -> Durability {
        self.core().durability
    }

    /// Committer counters (batches, requests, largest batch, map growths).
    pub fn commit_counters(&self) -> CommitCounters {
        let s = &self.core().stats;
        let (log_records, log_records_derived, log_bytes, log_sync_nanos) = self
            .core()
            .wal
            .as_ref()
            .map_or((0, 0, 0, 0), |w| w.record_counts());
        CommitCounters {
            batches: s.batches.load(Ordering::Relaxed),
            requests: s.requests.load(Ordering::Relaxed),
            largest_batch: s.largest_batch.load(Ordering::Relaxed),
            map_growths: s.map_growths.load(Ordering::Relaxed),
            direct_batches: s.direct_batches.load(Ordering::Relaxed),
            log_records,
            log_records_derived,
            log_bytes,
            log_sync_nanos,
            log_sync_buckets: self
                .core()
                .wal
                .as_ref()
                .map_or(Default::default(), |w| w.sync_time_counts()),
        }
    }

    /// Current size of the memory map in bytes.
    pub fn map_bytes(&self) -> usize {
        self.core().map_bytes.load(Ordering::Acquire)
    }

    /// Whether an earlier failed commit has poisoned the environment (and why).
    pub fn poisoned(&self) -> Option<String> {
        self.core().poison_cause()
    }

    /// Makes every commit so far durable in the data file now (a checkpoint of the
    /// write-ahead log; see `kv::wal`), instead of waiting for the checkpointer. Environments
    /// without a log (every mode but `Durable`, and read-only ones) flush the data file.
    ///
    /// A failed sync is final: the environment is poisoned (every later write fails with
    /// `KvError::Poisoned`) until it is reopened, since a second sync could report success for
    /// pages the first one lost. With a log, reopening recovers every acknowledged write.
    pub fn checkpoint(&self) -> Result<(), KvError> {
        let shared = self.shared();
        if let Some(cause) = shared.core.poison_cause() {
            return Err(KvError::Poisoned { cause });
        }
        // Committed groups not yet in LMDB go there first, so the checkpoint covers them.
        if let Some(lazy) = &shared.lazy {
            lazy.apply_all(&shared.core)?;
        }
        match &shared.core.wal {
            Some(wal) => wal.checkpoint(&shared.core.env),
            None if shared.core.read_only => Ok(()),
            None => {
                let synced = match shared
                    .core
                    .inject_sync_failure
                    .swap(false, Ordering::AcqRel)
                {
                    true => Err(KvError::Io(std::io::Error::from_raw_os_error(libc::EIO))),
                    false => shared.core.env.sync().map_err(KvError::from),
                };
                // Never retried, as a log's checkpoint (`wal::failure`): a second sync may
                // succeed for pages the failed one lost.
                synced.map_err(|e| {
                    shared.core.poison(KvError::CommitFailed {
                        cause: format!(
                            "the data file could not be synced ({e}); writes are refused until \
                             the database is reopened"
                        ),
                    })
                })
            }
        }
    }

    /// Test hook: writes every committed group still waiting for LMDB into it now, without
    /// a checkpoint (`kv::unapplied`), so a copy of the data file taken after holds them.
    #[doc(hidden)]
    pub fn apply_logged(&self) -> Result<(), KvError> {
        let shared = self.shared();
        match &shared.lazy {
            Some(lazy) => lazy.apply_all(&shared.core),
            None => Ok(()),
        }
    }

    /// Test hook: the next commit fails as if the device had refused it.
    #[doc(hidden)]
    pub fn inject_commit_failure(&self) {
        self.core().inject_failure.store(true, Ordering::Release);
    }

    /// Test hook: the next checkpoint fails as if the disk had refused to sync the data file.
    #[doc(hidden)]
    pub fn inject_checkpoint_failure(&self) {
        let shared = self.shared();
        match &shared.core.wal {
            Some(wal) => wal.inject_checkpoint_failure(),
            None => shared
                .core
                .inject_sync_failure
                .store(true, Ordering::Release),
        }
    }

    /// The oldest snapshot open in this process (its age, and the file's size when it
    /// opened), or `None`. A snapshot held while writes go on keeps LMDB from reusing the
    /// pages freed since it opened, so the file grows by about what was rewritten meanwhile.
    pub fn oldest_snapshot(&self) -> Option<HeldSnapshot> {
        let shared = self.shared();
        let oldest = shared.core.gate.oldest()?;
        Some(HeldSnapshot {
            age: oldest.age,
            open_snapshots: oldest.open_snapshots,
            file_growth_bytes: shared
                .core
                .used_pages()
                .saturating_sub(oldest.used_pages_at_open)
                * shared.core.page_bytes,
        })
    }

    /// Whether a growth of the map is waiting for this process's open snapshots to close
    /// (it waits `limits::MAP_GROWTH_PATIENCE`, then the write that needed it fails with
    /// `SnapshotBlocksGrowth`). A holder of snapshots kept only by choice (a server's leased
    /// values) lets them go when this is true.
    pub fn growth_waiting(&self) -> bool {
        self.core().gate.growth_waiting()
    }

    /// Bytes of the file in use as of the last commit (pages up to the last one written).
    pub fn used_bytes(&self) -> usize {
        self.core().used_pages() * self.core().page_bytes
    }

    /// Opens a consistent read snapshot. Never blocks on the committer; waits only if every
    /// reader slot is taken or a map growth is in progress. With the log, the snapshot sees
    /// every acknowledged commit, also those LMDB does not hold yet (merged into its reads);
    /// when a few thousand ops of those wait and nobody is writing them, it writes them into
    /// LMDB first (about a millisecond at most), so that its reads need not merge them.
    pub fn read(&self) -> Result<ReadTxn, KvError> {
        ReadTxn::begin(self.shared().clone())
    }

    /// Opens a read snapshot of the state the data file holds: every commit the applier has
    /// written into LMDB, without the acknowledged groups still waiting for it (`read` merges
    /// those). Its cost does not grow with that backlog, and it never writes waiting groups
    /// on the reader's behalf; it may be behind `read` by the backlog (milliseconds, or more
    /// while a stream of large groups keeps the applier busy). Without the log both are the
    /// same.
    pub fn read_applied(&self) -> Result<ReadTxn, KvError> {
        ReadTxn::begin_applied(self.shared().clone())
    }

    /// Queues a request for the committer (blocking while the queue is full: back-pressure).
    pub fn submit(&self, request: Box<dyn WriteRequest>) {
        match &self.inner.sender {
            Some(tx) => {
                if let Err(e) = tx.send(request) {
                    e.into_inner().finish(Outcome::Failed(KvError::Closed));
                }
            }
            None => request.finish(Outcome::Failed(KvError::Closed)),
        }
    }

    /// Runs `request` and returns once it has finished: on this thread when nobody is
    /// committing (with whatever else is queued), else through the committer. Blocking
    /// callers use this; the request completes through its own completion either way.
    pub fn submit_blocking(&self, request: Box<dyn WriteRequest>) {
        let request = match self.inner.sender.is_some() {
            true => match self.inner.committing.try_run(self.shared(), request) {
                Ok(()) => return,
                Err(request) => request,
            },
            false => request,
        };
        self.submit(request);
    }

    /// Writes a compacted copy of the environment (free pages dropped) into the new directory
    /// `dir`, as LMDB's `mdb_env_copy2` with `MDB_CP_COMPACT` does: a consistent snapshot,
    /// taken while writers go on. `dir` must not already hold a database.
    ///
    /// The copy is atomic: it is written to a temporary name in `dir`, synced, renamed to
    /// `data.mdb` and the directory synced, so a failure (a full disk, a kill) leaves no
    /// `data.mdb` behind, never a partial one that would later fail to open; a directory it
    /// had to create is removed again. The copy keeps the source file's permissions.
    pub fn copy_compacted(&self, dir: impl AsRef<Path>) -> Result<(), KvError> {
        let dir = dir.as_ref();
        let target = dir.join("data.mdb");
        if target.exists() {
            return Err(KvError::Io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already exists", target.display()),
            )));
        }
        let created_dir = !dir.exists();
        std::fs::create_dir_all(dir)?;
        let result = self.copy_into(dir, &target);
        if result.is_err() && created_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        result
    }

    /// Writes a compacted copy of the environment's data file, as [`Self::copy_compacted`]
    /// does, to `out` (a file, a pipe, a socket), in one sequential pass: what a server sends
    /// a node that joins over the network. The bytes are a whole `data.mdb` only once this
    /// returns `Ok`; the caller makes them durable and names them.
    ///
    /// Committed groups not yet written into LMDB are written first (in a read-only
    /// environment: waits until the writing process has written every group it had
    /// acknowledged), so the copy holds every commit acknowledged before the call.
    pub fn copy_compacted_to(&self, out: impl std::os::fd::AsFd) -> Result<(), KvError> {
        let shared = self.shared();
        // The copy is of LMDB's state: committed groups not yet written there go first.
        if let Some(lazy) = &shared.lazy {
            lazy.apply_all(&shared.core)?;
        }
        // Read-only, another process's groups go there first too: wait until its applier
        // has written every group acknowledged before the copy began.
        if shared.core.tail.is_some() {
            wait_for_applied(shared)?;
        }
        // The copy reads through its own LMDB read transaction: hold a gate slot so the map
        // is not resized under it.
        let ticket = shared.core.gate.enter(shared.core.used_pages());
        let copied = shared.core.env.copy_compacted(out.as_fd());
        shared.core.gate.leave(ticket);
        Ok(copied?)
    }

    fn copy_into(&self, dir: &Path, target: &Path) -> Result<(), KvError> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let shared = self.shared();
        let mode = std::fs::metadata(shared.core.path.join("data.mdb"))?
            .permissions()
            .mode();
        let temp = dir.join(format!(".data.mdb.copy-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o7777)
            .open(&temp)?;
        let written = (|| -> Result<(), KvError> {
            // The umask may have narrowed the mode given at creation: set it exactly.
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
            self.copy_compacted_to(&file)?;
            file.sync_all()?;
            std::fs::rename(&temp, target)?;
            std::fs::File::open(dir)?.sync_all()?;
            Ok(())
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

/// Waits, in a read-only environment, until LMDB holds every group another process had
/// acknowledged when the wait began (that process's applier writes them within a second), so
/// that a copy of LMDB's state misses none of them. A writer that stopped before applying
/// them (it died; the next open for writing replays them) leaves them out of reach: `Busy`.
fn wait_for_applied(shared: &Arc<EnvShared>) -> Result<(), KvError> {
    let wanted = {
        let txn = ReadTxn::begin(shared.clone())?;
        let seq_in_lmdb = super::wal::seq_of(txn.raw_txn(), shared.core.meta)?;
        txn.unapplied_last_seq().unwrap_or(seq_in_lmdb)
    };
    let started = std::time::Instant::now();
    loop {
        let applied = super::wal::seq_of(&shared.core.env.read_txn()?, shared.core.meta)?;
        if applied >= wanted {
            return Ok(());
        }
        if started.elapsed() >= limits::WRITER_BUSY_TIMEOUT {
            return Err(KvError::Io(std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                format!(
                    "{}: the writer has not written log records {}..={wanted} into the data file \
                     within {} ms; if no process has it open for writing, open it for writing \
                     once (that replays them), then copy",
                    shared.core.path.display(),
                    applied + 1,
                    limits::WRITER_BUSY_TIMEOUT.as_millis()
                ),
            )));
        }
        std::thread::sleep(limits::WRITER_BUSY_POLL);
    }
}

/// Creates the data file of a new environment in `dir` whole (`kv::whole`): made by LMDB in a
/// directory of its own inside `dir` (its meta pages and the KV meta table), closed and
/// synced, then linked as `data.mdb` (`false`: another process made one first). A crash or a
/// full disk part way leaves no data file, never an empty or partial one, which every later
/// open would have to refuse (it cannot be told from a damaged one).
fn create_data_file(dir: &Path) -> Result<bool, KvError> {
    whole::remove_abandoned(dir, file::DATA_FILE);
    let temp = whole::temporary(dir, file::DATA_FILE);
    let made = (|| {
        std::fs::create_dir(&temp)?;
        let env = lmdb::Env::open(
            &temp,
            // No flush per commit: the file is synced once, below.
            EnvFlags::NO_SYNC,
            EnvLimits {
                map_bytes: limits::DEFAULT_INITIAL_MAP_BYTES,
                max_readers: limits::MAX_READERS,
                max_dbs: limits::MAX_TABLES,
            },
        )
        .map_err(|e| env_open_error(&temp, e))?;
        check_or_init_meta(&env, &temp, false)?;
        drop(env);
        let file = temp.join(file::DATA_FILE);
        std::fs::File::open(&file)?.sync_all()?;
        Ok::<_, KvError>(whole::link(&file, &dir.join(file::DATA_FILE))?)
    })();
    let _ = std::fs::remove_dir_all(&temp);
    let made = made?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(made)
}

/// A failed `lmdb::Env::open` of directory `path`.
fn env_open_error(path: &Path, e: lmdb::env::OpenError) -> KvError {
    match e {
        lmdb::env::OpenError::Lmdb(e) => open_error(path, e),
        lmdb::env::OpenError::Io(e) => KvError::Io(e),
        lmdb::env::OpenError::AlreadyOpen => KvError::Io(std::io::Error::new(
            std::io::ErrorKind::ResourceBusy,
            format!("{} is already open in this process", path.display()),
        )),
    }
}

pub(super) fn open_error(path: &Path, e: LmdbError) -> KvError {
    match e.code {
        LmdbError::INVALID => KvError::Corrupt {
            path: path.to_path_buf(),
            detail: "not an LMDB file".into(),
        },
        LmdbError::CORRUPTED | LmdbError::PAGE_NOTFOUND => KvError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        LmdbError::VERSION_MISMATCH => KvError::Foreign {
            path: path.to_path_buf(),
            detail: "made by an incompatible LMDB version".into(),
        },
        _ => KvError::from(e),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod map_tests {
    use super::Environment;
    use crate::kv::core::map::map_base;
    use crate::kv::durability::{Durability, EnvOptions};
    use std::sync::atomic::Ordering;

    /// The warmer's map address is where the kernel mapped `data.mdb`.
    #[test]
    fn map_base_is_the_start_of_the_data_file_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(
            dir.path(),
            EnvOptions::with_durability(Durability::WriteMapAsync),
        )
        .unwrap();
        let core = &env.shared().core;
        let map = core.map_bytes.load(Ordering::Acquire);
        let txn = core.env.write_txn().unwrap();
        let base = map_base(&txn, core.meta, core.page_bytes, map).expect("a plausible base");
        drop(txn);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let data_file = dir.path().join("data.mdb");
        let line = maps
            .lines()
            .find(|l| l.ends_with(&*data_file.to_string_lossy()))
            .expect("data.mdb is mapped");
        let (start, end) = line.split_once(' ').unwrap().0.split_once('-').unwrap();
        let start = usize::from_str_radix(start, 16).unwrap();
        let end = usize::from_str_radix(end, 16).unwrap();
        assert_eq!(base, start, "{line}");
        assert_eq!(end - start, map, "{line}");
    }
}
