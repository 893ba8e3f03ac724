//! The log's shared state: the committer's side (logging a group, committing it) and the
//! checkpointer's (background LMDB syncs, the held reader that guards the checkpointed pages).
//!
//! Locks, always taken in this order: `ckpt` (a whole checkpoint, serializing them), then
//! `applied` (held by the committer across each LMDB commit, and by a checkpoint while it
//! captures the committed state: so the captured reader, meta pages and sequence number agree),
//! then `ring`.

use rustc_hash::FxHashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use super::super::commit_timing::{self as timing, Step};
use super::super::error::KvError;
use super::super::lmdb::free_list;
use super::super::lmdb::{Dbi, Env, LmdbError, RoTxn, RwTxn};
use super::super::stage::Stage;
use super::derive::{self, Derivation, DerivedIds};
use super::direct::{DirectLog, BLOCK};
use super::failure::Failure;
use super::file::{wrap_marker, LogFile, Placement, Ring};
use super::fill::Fill;
use super::frame::{self, Kind, HEADER_BYTES};
use super::slot::Checkpoint;
use super::{body, recovery};
use crate::limits::{
    LOG_CHECKPOINT_DATA_SHARE, LOG_DIRECT_BLOB_BYTES, LOG_DIRECT_BLOB_MEAN_BYTES,
    LOG_DIRECT_MIN_BYTES,
};

/// How the log is run (from `EnvOptions`).
#[derive(Debug, Clone)]
pub(crate) struct WalSettings {
    /// Bytes of the log file created for a new environment.
    pub(crate) initial_bytes: u64,
    /// The log grows up to this many bytes (a longer existing log keeps its length).
    pub(crate) max_bytes: u64,
    /// The checkpointer runs at least this often while there is something to checkpoint.
    pub(crate) interval: Duration,
    /// ... and as soon as this many log bytes were written since the last checkpoint.
    pub(crate) trigger_bytes: u64,
    /// ... or the commits since it freed this many bytes of pages (`Trigger::pinned_past`).
    pub(crate) freed_bytes: u64,
    /// Hold a reader on the checkpointed snapshot (off only in tests that show why it is on).
    pub(crate) guard_pages: bool,
    /// Writes that records leave out and replay rebuilds (`derive`).
    pub(crate) derivation: Option<Arc<dyn Derivation>>,
    /// Replay stops at a damaged record even when whole ones follow (`survivor`).
    pub(crate) accept_damage: bool,
    /// Each record is synced before its group is acknowledged (`Durability::Durable`);
    /// otherwise it is only written, and flagged so (`frame::UNSYNCED`).
    pub(crate) sync_records: bool,
}

impl WalSettings {
    /// Bytes of a new log: the initial length, unless the log may not grow that large.
    fn initial(&self) -> u64 {
        self.initial_bytes.min(self.max_bytes)
    }
}

/// The committed state as of the last LMDB commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Applied {
    /// The last group committed to LMDB.
    seq: u64,
    /// Where the record after it begins.
    end: u64,
}

struct CheckpointState {
    generation: u64,
    seq: u64,
    txnid: u64,
    /// The page-reuse guard: a snapshot of the durable checkpoint.
    reader: Option<RoTxn>,
}

#[derive(Default)]
struct Trigger {
    /// Log bytes applied to LMDB since the open, counted after each applier commit.
    applied: u64,
    /// `applied` as it was when the last checkpoint began: that checkpoint holds at least
    /// those bytes, since an applier commit is counted only after it took place.
    checkpointed: u64,
    /// The write position came close to the end of the written part of the log.
    fill: bool,
    /// LMDB's last used page when the last checkpoint began.
    pages_checkpointed: u64,
    /// Pages freed by the LMDB commits after the last checkpoint's snapshot, counted on LMDB's
    /// free list through transaction `scanned`: the page-reuse guard keeps them from reuse
    /// until the next checkpoint, so every page those commits wrote was a fresh one.
    freed: u64,
    scanned: u64,
    /// `freed` passed its bound (`pinned_past`): a checkpoint is due.
    pinned: bool,
    stop: bool,
}

impl Trigger {
    /// Whether at least `threshold` applied bytes wait for a checkpoint. Measured against where
    /// the last checkpoint *began*, not reset when it ended: a commit counted while a
    /// checkpoint ran (which may already hold it) leaves at most one more checkpoint due,
    /// never one that stays due while nothing changes (the checkpointer then spun on no-op
    /// checkpoints for as long as the applier took to commit again; measured on W async at
    /// batch 1000: ~2 s of one core in a 3 s run).
    fn due(&self, threshold: u64) -> bool {
        self.applied - self.checkpointed >= threshold
    }

    /// Whether the pages freed since the last checkpoint (so written fresh) are enough for the
    /// next checkpoint to come early: more than `floor_pages`, or a
    /// `LOG_CHECKPOINT_DATA_SHARE` of the file as it was then, whichever is more
    /// (`limits::LOG_CHECKPOINT_DATA_BYTES`). Not the file's growth: a window of commits first
    /// reuses the pages the last checkpoint freed, and then grows the file, so the growth
    /// alone let each window be longer than the last (measured: the file grew by the bound at
    /// every checkpoint, without end).
    fn pinned_past(&self, floor_pages: u64) -> bool {
        let allowed = floor_pages.max(self.pages_checkpointed / LOG_CHECKPOINT_DATA_SHARE);
        self.freed > allowed
    }
}

/// Whether a group is mostly large values (`LOG_DIRECT_BLOB_BYTES`): it is then written once,
/// into the data file, made durable by a checkpoint, instead of into the log and again into
/// the data file.
fn writes_blobs(stage: &Stage) -> bool {
    let bytes = stage.staged_bytes();
    bytes >= LOG_DIRECT_BLOB_BYTES && bytes / stage.len().max(1) >= LOG_DIRECT_BLOB_MEAN_BYTES
}

/// A group written to the log (or, when too large for it, to be checkpointed directly).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Logged {
    seq: u64,
    end: u64,
    bytes: u64,
    /// Not in the log: the group is made durable by a checkpoint right after its commit.
    direct: bool,
}

impl Logged {
    /// The record's bytes in the log.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the group skipped the log (too large for it): it must be applied and
    /// checkpointed at once.
    pub(crate) fn is_direct(&self) -> bool {
        self.direct
    }

    /// This record as the last of several applied together, which wrote `bytes` of log.
    pub(crate) fn covering(&self, bytes: u64) -> Logged {
        Logged { bytes, ..*self }
    }

    /// A record read back from the log by another process (`wal::tail`), which never applies
    /// or checkpoints it.
    pub(crate) fn read_back(seq: u64) -> Logged {
        Logged {
            seq,
            end: 0,
            bytes: 0,
            direct: false,
        }
    }

    /// A record of `bytes` ending at `end`, for tests of what holds groups.
    #[cfg(test)]
    pub(crate) fn for_test(seq: u64, end: u64, bytes: u64) -> Logged {
        Logged {
            seq,
            end,
            bytes,
            direct: false,
        }
    }
}

/// The open log of a writing environment.
pub(crate) struct Wal {
    log: LogFile,
    fill: Fill,
    /// The data file, read for its meta pages.
    data: File,
    meta_bytes: usize,
    settings: WalSettings,
    names: RwLock<Names>,
    applied: Mutex<Applied>,
    ring: Mutex<Ring>,
    ckpt: Mutex<CheckpointState>,
    trigger: Mutex<Trigger>,
    wake: Condvar,
    /// The committer's encode buffer and the positions of derived writes, kept between groups.
    buf: Mutex<(Vec<u8>, Vec<usize>)>,
    /// Records written around the page cache (`None`: the filesystem does not take it).
    direct: Mutex<Option<DirectLog>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Records made durable, those of them derived, their bytes, and the nanoseconds their
    /// syncs took (`record_counts`).
    records: [AtomicU64; 4],
    /// Those syncs by how long each took.
    sync_times: super::SyncTimes,
    /// Set by the first checkpoint whose write or sync failed: no later one is trusted.
    failure: Failure,
}

/// The names of the tables records write to, by table id, and the ids of the derivation's
/// tables.
#[derive(Default)]
struct Names {
    by_id: FxHashMap<u32, Arc<str>>,
    derived: DerivedIds,
}

/// The log opened before LMDB, with the data file already rolled back to its checkpoint
/// (`None` when there was no log: it is created only once the data file has been validated,
/// so opening a damaged file leaves the directory as it was).
pub(crate) struct PreparedLog {
    log: Option<LogFile>,
    checkpoint: Option<Checkpoint>,
    page_bytes: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Wal {
    /// Before LMDB opens `dir`: opens (or creates) the log and, if the data file has commits
    /// the checkpoint does not cover, drops them (recovery step one).
    pub(crate) fn prepare(
        dir: &Path,
        data_exists: bool,
        page_bytes: usize,
        settings: &WalSettings,
    ) -> Result<PreparedLog, KvError> {
        if !data_exists {
            // A log without its data file belongs to nothing.
            let _ = std::fs::remove_file(dir.join(super::LOG_FILE));
        }
        let log = match data_exists {
            true => LogFile::open(dir, page_bytes, settings.initial_bytes, false)?,
            false => None,
        };
        let checkpoint = log.as_ref().and_then(LogFile::checkpoint);
        if let Some(detail) = log.as_ref().and_then(|l| l.damage(checkpoint.as_ref())) {
            return Err(KvError::Corrupt {
                path: dir.join(super::LOG_FILE),
                detail: format!(
                    "{detail}; move {} away to open the data file without the log",
                    super::LOG_FILE
                ),
            });
        }
        if let (Some(log), Some(c)) = (&log, &checkpoint) {
            // Before the data file is touched: a log damaged inside is refused with the data
            // file as it was.
            recovery::refuse_damage(log, c, dir, settings.accept_damage)?;
            recovery::restore_meta_pages(&dir.join(super::super::file::DATA_FILE), c)?;
        }
        Ok(PreparedLog {
            log,
            checkpoint,
            page_bytes,
        })
    }

    /// After LMDB opened: replays the log after the checkpoint (recovery step two),
    /// checkpoints the result, and starts the checkpointer.
    pub(crate) fn start(
        prepared: PreparedLog,
        dir: &Path,
        env: &Env,
        meta: Dbi,
        settings: WalSettings,
    ) -> Result<Arc<Wal>, KvError> {
        let PreparedLog {
            log,
            checkpoint,
            page_bytes,
        } = prepared;
        let log = match log {
            Some(log) => log,
            None => LogFile::open(dir, page_bytes, settings.initial(), true)?
                .ok_or_else(|| std::io::Error::other("the log file could not be created"))?,
        };
        let (end, next_seq, generation, replay_guard) = match &checkpoint {
            Some(c) => {
                let r = recovery::replay(env, meta, &log, c, dir, &settings)?;
                (r.end, r.next_seq, r.generation, r.guard)
            }
            None => (
                log.area_start,
                recovery::applied_seq(env, meta)? + 1,
                0,
                None,
            ),
        };
        let data = File::open(dir.join(super::super::file::DATA_FILE))?;
        let names = Names {
            by_id: FxHashMap::default(),
            derived: settings
                .derivation
                .as_deref()
                .map(DerivedIds::new)
                .unwrap_or_default(),
        };
        let wal = Arc::new(Wal {
            fill: Fill::new(&log),
            log,
            data,
            meta_bytes: 2 * page_bytes,
            settings,
            names: RwLock::new(names),
            applied: Mutex::new(Applied {
                seq: next_seq - 1,
                end,
            }),
            ring: Mutex::new(Ring {
                pos: end,
                keep_from: end,
                starved: false,
            }),
            ckpt: Mutex::new(CheckpointState {
                generation,
                seq: u64::MAX,
                txnid: u64::MAX,
                reader: None,
            }),
            trigger: Mutex::new(Trigger::default()),
            wake: Condvar::new(),
            buf: Mutex::new((Vec::new(), Vec::new())),
            direct: Mutex::new(
                std::env::var_os("DATALITH_LOG_BUFFERED")
                    .is_none()
                    .then(|| DirectLog::open(&dir.join(super::LOG_FILE)))
                    .flatten(),
            ),
            thread: Mutex::new(None),
            records: Default::default(),
            sync_times: Default::default(),
            failure: Failure::default(),
        });
        wal.checkpoint(env)?;
        // The replayed state is durable and named in the log: the old checkpoint's pages may
        // be reused from here on.
        drop(replay_guard);
        let (for_thread, env_for_thread) = (wal.clone(), env.clone());
        let thread = std::thread::Builder::new()
            .name("datalith-checkpoint".into())
            .spawn(move || for_thread.run_checkpointer(&env_for_thread))?;
        *lock(&wal.thread) = Some(thread);
        Ok(wal)
    }

    /// Records made durable, those of them derived (`derive`), and their bytes.
    /// The syncs of the records by how long each took (`SyncTimes::counts`).
    pub(crate) fn sync_time_counts(&self) -> [u64; super::LOG_SYNC_BUCKET_NANOS.len() + 1] {
        self.sync_times.counts()
    }

    pub(crate) fn record_counts(&self) -> (u64, u64, u64, u64) {
        let [a, b, c, d] = &self.records;
        let load = |x: &AtomicU64| x.load(Ordering::Relaxed);
        (load(a), load(b), load(c), load(d))
    }

    /// Names table `id` for records (every table the environment opens).
    pub(crate) fn name_table(&self, id: u32, name: Arc<str>) {
        let mut names = self.names.write().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = &self.settings.derivation {
            names.derived.name(d.as_ref(), id, &name);
        }
        names.by_id.insert(id, name);
    }

    /// The largest record the ring takes (half of it once grown to its largest: it then
    /// always fits once a checkpoint has emptied the ring and the file has grown for it);
    /// larger groups are checkpointed instead. Measured against the largest length, not the
    /// current one, so that a young, small log grows for a large group instead of sending it
    /// (and every one like it) down the slower paths.
    pub(crate) fn largest_record(&self) -> u64 {
        (self.most() - self.log.area_start) / 2
    }

    /// The length the log may grow to (an existing log longer than the setting keeps its
    /// length).
    fn most(&self) -> u64 {
        self.settings.max_bytes.max(self.log.capacity())
    }

    /// Where a record of `len` bytes goes, growing the file first when the ring says so
    /// (`Ring::place`). A growth that fails (a full disk) leaves the log as it was: the
    /// record then wraps or waits for a checkpoint, as in a log that cannot grow.
    fn place(&self, len: u64) -> Result<Option<Placement>, KvError> {
        let placed = {
            let ring = lock(&self.ring);
            ring.place(len, self.log.capacity(), self.log.area_start, self.most())
        };
        let Some(to) = placed.and_then(|p| p.grow_to) else {
            return Ok(placed);
        };
        let capacity = self.log.capacity();
        if self.log.grow(to).is_ok() {
            self.fill.grew(to);
            lock(&self.ring).starved = false;
            return Ok(placed);
        }
        let ring = lock(&self.ring);
        Ok(ring.place(len, capacity, self.log.area_start, capacity))
    }

    /// The sequence number the next group gets (the committer writes it into LMDB).
    pub(crate) fn next_seq(&self) -> u64 {
        lock(&self.applied).seq + 1
    }

    /// Writes the group staged in `stage` as record `seq` and makes it durable (one
    /// `fdatasync`), unless it is too large for the ring, mostly large values, or its requests
    /// asked for a checkpoint (`checkpointed`: a bulk load): then it is marked for a direct
    /// checkpoint after its commit. Runs on the committer (in the ordinary path, while its
    /// LMDB transaction is open).
    pub(crate) fn log_group(
        &self,
        env: &Env,
        stage: &Stage,
        seq: u64,
        checkpointed: bool,
    ) -> Result<Logged, KvError> {
        let direct = || Logged {
            seq,
            end: lock(&self.ring).pos,
            bytes: 0,
            direct: true,
        };
        // A record may take up to half the ring grown to its largest: it then always fits
        // once a checkpoint has emptied the ring and the file has grown for it. Larger groups
        // (bulk loads) are checkpointed instead.
        let estimate = HEADER_BYTES + 2 + stage.staged_bytes() + 11 * stage.len();
        if checkpointed || estimate as u64 > self.largest_record() || writes_blobs(stage) {
            return Ok(direct());
        }
        let started = timing::start();
        let mut guard = lock(&self.buf);
        let (buf, scratch) = &mut *guard;
        buf.clear();
        buf.resize(HEADER_BYTES, 0);
        let names = self.names.read().unwrap_or_else(|p| p.into_inner());
        let derivation = self.settings.derivation.as_deref();
        let derived =
            derivation.filter(|d| derive::rebuilds_exactly(stage, *d, &names.derived, scratch));
        let kind = match derived {
            Some(d) => {
                let name = d.name().as_bytes();
                buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
                buf.extend_from_slice(name);
                Kind::Derived
            }
            None => Kind::Group,
        };
        let keep = |id| derived.is_none() || names.derived.derived(id).is_none();
        body::encode(stage, |id| names.by_id.get(&id).cloned(), keep, buf).ok_or_else(|| {
            KvError::CommitFailed {
                cause: "a write names a table this environment did not open".into(),
            }
        })?;
        drop(names);
        let unsynced = !self.settings.sync_records;
        frame::seal(buf, kind, seq, unsynced);
        timing::add(Step::LogEncode, started);
        let len = buf.len() as u64;
        let placement = match self.place(len)? {
            Some(p) => p,
            None => {
                // The ring is full up to the durable checkpoint: move it, and grow the file at
                // the next chance.
                lock(&self.ring).starved = true;
                self.checkpoint(env)?;
                match self.place(len)? {
                    Some(p) => p,
                    None => return Ok(direct()),
                }
            }
        };
        let started = timing::start();
        let end = placement.at + len;
        let high = placement
            .wrap_at
            .map_or(end, |at| end.max(at + HEADER_BYTES as u64));
        // A direct write may pad over the dead bytes after the record, and then counts as
        // writing them for the filler.
        let dead_end = lock(&self.ring).dead_until(placement.at, self.log.capacity());
        let padded = end.div_ceil(BLOCK) * BLOCK;
        let mut direct = lock(&self.direct);
        // Direct writes make the sync after them short; without a sync, the page cache is
        // the cheaper way.
        let go_direct = self.settings.sync_records
            && direct.as_ref().is_some_and(DirectLog::usable)
            && placement.wrap_at.is_none()
            && buf.len() >= LOG_DIRECT_MIN_BYTES
            && padded <= dead_end;
        let high = match go_direct {
            true => high.max(padded),
            false => high,
        };
        self.fill.write_below(high, || {
            if let Some(at) = placement.wrap_at {
                self.log
                    .file
                    .write_all_at(&wrap_marker(seq, unsynced), at)?;
            }
            if let Some(d) = direct.as_mut() {
                if go_direct && d.write(&self.log.file, buf, placement.at, dead_end)? {
                    return Ok(());
                }
                d.forget_tail();
            }
            self.log.file.write_all_at(buf, placement.at)?;
            if go_direct {
                // Refused by the filesystem after all: the padding the filler now counts
                // as written is written here instead.
                let zeros = vec![0u8; (padded - end) as usize];
                self.log.file.write_all_at(&zeros, end)?;
            }
            Ok(())
        })?;
        drop(direct);
        if self.settings.sync_records {
            let syncing = std::time::Instant::now();
            self.log.file.sync_data()?;
            let synced = u64::try_from(syncing.elapsed().as_nanos()).unwrap_or(u64::MAX);
            timing::add(Step::LogSync, started);
            self.records[3].fetch_add(synced, Ordering::Relaxed);
            self.sync_times.record(synced);
        }
        self.records[0].fetch_add(1, Ordering::Relaxed);
        self.records[1].fetch_add((kind == Kind::Derived) as u64, Ordering::Relaxed);
        self.records[2].fetch_add(len, Ordering::Relaxed);
        lock(&self.ring).pos = end;
        // The filler makes the record syncs cheaper (`fill`): without them it is only work.
        if self.settings.sync_records && self.fill.wanted(end) {
            let mut t = lock(&self.trigger);
            if !t.fill {
                t.fill = true;
                self.wake.notify_one();
            }
        }
        Ok(Logged {
            seq,
            end,
            bytes: len,
            direct: false,
        })
    }

    /// Commits the group's LMDB transaction (without a sync) as `logged`: from here readers
    /// see it.
    pub(crate) fn commit(&self, txn: RwTxn, logged: &Logged) -> Result<(), LmdbError> {
        let mut applied = lock(&self.applied);
        let started = timing::start();
        txn.commit()?;
        timing::add(Step::LmdbCommit, started);
        *applied = Applied {
            seq: logged.seq,
            end: logged.end,
        };
        Ok(())
    }

    /// After [`Wal::commit`]: a group that was not logged is made durable now; otherwise the
    /// checkpointer is woken once enough log has accumulated.
    pub(crate) fn after_commit(&self, env: &Env, logged: &Logged) -> Result<(), KvError> {
        if logged.direct {
            return self.checkpoint(env);
        }
        let page = (self.meta_bytes / 2).max(1) as u64;
        let mut t = lock(&self.trigger);
        t.applied += logged.bytes;
        // `u64::MAX`: off (tests that must know which checkpoint was the last).
        if !t.pinned && self.settings.freed_bytes != u64::MAX {
            // The free list's entries of the commits since the last look (usually one, this
            // commit's): a read snapshot and a seek, a few microseconds. A failure only
            // leaves the count behind until the next commit.
            if let Ok((pages, last)) = free_list::freed_after(env, t.scanned) {
                t.freed += pages;
                t.scanned = last;
            }
            if t.pinned_past(self.settings.freed_bytes / page) {
                t.pinned = true;
                self.wake.notify_one();
            }
        }
        if t.due(self.settings.trigger_bytes) {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// Commits a write transaction that is not the committer's (a table's creation) and makes
    /// it durable at once.
    pub(crate) fn commit_outside_committer(&self, env: &Env, txn: RwTxn) -> Result<(), KvError> {
        {
            let _applied = lock(&self.applied);
            txn.commit()?;
        }
        self.checkpoint(env)
    }

    /// Makes everything committed so far durable in the data file and records it as the
    /// checkpoint.
    pub(crate) fn checkpoint(&self, env: &Env) -> Result<(), KvError> {
        let mut st = lock(&self.ckpt);
        self.checkpoint_locked(&mut st, env, self.settings.guard_pages)
    }

    fn checkpoint_locked(
        &self,
        st: &mut CheckpointState,
        env: &Env,
        hold: bool,
    ) -> Result<(), KvError> {
        if let Some(refused) = self.failure.refusal() {
            return Err(refused);
        }
        let covered = lock(&self.trigger).applied;
        let (applied, reader, meta, pages) = {
            let applied = lock(&self.applied);
            let reader = env.read_txn()?;
            let pages = env.info().last_page_number as u64;
            let mut meta = vec![0; self.meta_bytes];
            self.data.read_exact_at(&mut meta, 0)?;
            (*applied, reader, meta, pages)
        };
        let txnid = reader.id() as u64;
        if (applied.seq, txnid) != (st.seq, st.txnid) {
            let c = Checkpoint {
                generation: st.generation + 1,
                seq: applied.seq,
                txnid,
                start: applied.end,
                meta,
            };
            if let Err(e) = self.make_durable(env, &c) {
                return Err(self.failure.record(&e));
            }
            st.generation = c.generation;
            (st.seq, st.txnid) = (applied.seq, txnid);
            lock(&self.ring).keep_from = applied.end;
        }
        // Also when nothing changed: what was counted by then is held by an earlier checkpoint.
        {
            let mut t = lock(&self.trigger);
            t.checkpointed = covered;
            // Pages freed after this snapshot are the ones the next checkpoint lets LMDB reuse.
            t.pages_checkpointed = pages;
            t.freed = 0;
            t.scanned = txnid;
            t.pinned = false;
        }
        // The new guard replaces the old only once its snapshot is durable.
        if hold || st.reader.is_some() {
            st.reader = hold.then_some(reader);
        }
        Ok(())
    }

    /// Syncs the data file, then writes checkpoint `c` to its slot and syncs the log.
    fn make_durable(&self, env: &Env, c: &Checkpoint) -> Result<(), KvError> {
        self.failure.take_injected()?;
        env.sync()?;
        self.log.write_checkpoint(c)?;
        Ok(())
    }

    /// Why checkpoints stopped for good, if one failed to reach the disk (`failure`).
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.cause()
    }

    /// Test hook: the next checkpoint fails as if the disk had refused its sync.
    pub(crate) fn inject_checkpoint_failure(&self) {
        self.failure.inject();
    }

    /// Runs `resize` (which needs every transaction of the process closed) with the page-reuse
    /// guard let go: a checkpoint first makes everything durable, so nothing needs guarding
    /// until the next commit, and the guard is taken again before `resize` returns.
    pub(crate) fn around_resize(
        &self,
        env: &Env,
        resize: impl FnOnce() -> Result<(), LmdbError>,
    ) -> Result<(), LmdbError> {
        let mut st = lock(&self.ckpt);
        if let Err(e) = self.checkpoint_locked(&mut st, env, false) {
            // The guard stays: a growth without a durable checkpoint would be unsafe.
            let code = match e {
                KvError::Io(io) => io.raw_os_error().unwrap_or(libc::EIO),
                _ => libc::EIO,
            };
            return Err(LmdbError { code });
        }
        st.reader = None;
        let resized = resize();
        if self.settings.guard_pages {
            st.reader = env.read_txn().ok();
        }
        resized
    }

    /// Stops the checkpointer and takes a last checkpoint (the environment is closing; the
    /// committer has stopped), so the next open replays nothing.
    pub(crate) fn shutdown(&self, env: &Env) {
        lock(&self.trigger).stop = true;
        self.wake.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        let mut st = lock(&self.ckpt);
        let _ = self.checkpoint_locked(&mut st, env, false);
        st.reader = None;
    }

    fn run_checkpointer(&self, env: &Env) {
        let mut due = std::time::Instant::now() + self.settings.interval;
        loop {
            let (fill, checkpoint) = {
                let t = lock(&self.trigger);
                let wait = due.saturating_duration_since(std::time::Instant::now());
                let (mut t, _) = self
                    .wake
                    .wait_timeout_while(t, wait, |t| {
                        !t.stop && !t.fill && !t.pinned && !t.due(self.settings.trigger_bytes)
                    })
                    .unwrap_or_else(|p| p.into_inner());
                if t.stop {
                    return;
                }
                let checkpoint = t.pinned
                    || t.due(self.settings.trigger_bytes)
                    || std::time::Instant::now() >= due;
                (std::mem::take(&mut t.fill), checkpoint)
            };
            if fill {
                // A failure leaves the committer writing into unwritten blocks: slower, and
                // still correct.
                let _ = self.fill.fill_ahead(&self.log, || lock(&self.ring).pos);
            }
            if checkpoint {
                // A failed write or sync is final (`failure`): the environment reports itself
                // poisoned and no checkpoint follows. Other failures (opening the snapshot,
                // reading the meta pages) wrote nothing, so they are retried, when more is
                // applied or the interval has passed, not at once (a failing disk would be
                // spun on).
                if self.checkpoint(env).is_err() {
                    let mut t = lock(&self.trigger);
                    t.checkpointed = t.applied;
                    t.pinned = false;
                }
                due = std::time::Instant::now() + self.settings.interval;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Trigger;

    /// Steps: the applier counting a commit's bytes, and a whole checkpoint with nothing counted
    /// while it ran; whether a checkpoint is due after them.
    #[test]
    fn a_checkpoint_is_due_only_for_bytes_no_checkpoint_began_after() {
        enum Step {
            Count(u64),
            Checkpoint,
        }
        use Step::*;
        let table: &[(&str, &[Step], bool)] = &[
            ("nothing applied", &[], false),
            ("below the threshold", &[Count(99)], false),
            ("at the threshold", &[Count(60), Count(40)], true),
            ("checkpointed", &[Count(100), Checkpoint], false),
            ("more after it", &[Count(100), Checkpoint, Count(100)], true),
            (
                "a no-op checkpoint settles it",
                &[Count(100), Checkpoint, Checkpoint],
                false,
            ),
            (
                "accumulates across checkpoints",
                &[Count(100), Checkpoint, Count(50), Count(50)],
                true,
            ),
        ];
        for (name, steps, due) in table {
            let mut t = Trigger::default();
            for step in steps.iter() {
                match step {
                    Count(b) => t.applied += b,
                    Checkpoint => t.checkpointed = t.applied,
                }
            }
            assert_eq!(t.due(100), *due, "{name}");
        }
    }

    /// LMDB's last used page at the last checkpoint and the pages freed since: whether a
    /// checkpoint comes early (a floor of 100 pages, or a quarter of the file at the
    /// checkpoint).
    #[test]
    fn a_checkpoint_comes_early_when_the_pages_freed_since_pass_the_floor_or_the_share() {
        // (case, last page at the checkpoint, pages freed since, early)
        let table = [
            ("nothing freed", 50, 0, false),
            ("at the floor", 50, 100, false),
            ("past the floor", 50, 101, true),
            ("a large file: within its quarter", 1_000, 250, false),
            ("a large file: past its quarter", 1_000, 251, true),
        ];
        for (case, at_checkpoint, freed, early) in table {
            let t = Trigger {
                pages_checkpointed: at_checkpoint,
                freed,
                ..Trigger::default()
            };
            assert_eq!(t.pinned_past(100), early, "{case}");
        }
    }

    /// The race that made the checkpointer spin: a checkpoint begins after the applier's
    /// commit but before its bytes are counted. One more checkpoint is due (it finds nothing
    /// new and records the count); after it, none is until more is applied.
    #[test]
    fn bytes_counted_during_a_checkpoint_leave_one_checkpoint_due_not_a_spin() {
        let mut t = Trigger::default();
        let covered = t.applied; // the checkpoint begins (the commit already took place)
        t.applied += 200; // the applier counts its commit
        t.checkpointed = covered; // the checkpoint ends
        assert!(t.due(100));
        let covered = t.applied; // the next one begins: finds nothing new
        t.checkpointed = covered;
        assert!(!t.due(100));
    }
}
