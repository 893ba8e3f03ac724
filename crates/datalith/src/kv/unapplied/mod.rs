//! Groups that are durable and visible but not yet written into LMDB (`Durable` mode with its
//! log): a commit is its log record only, and LMDB catches up later, many groups in one write
//! transaction.
//!
//! Why: an LMDB commit copies every page it touches to a fresh place (the checkpoint's page
//! guard forbids reusing pages freed since the durable checkpoint), so one commit per group
//! wrote tens of pages per small group and sent them to the device at the next checkpoint, in
//! a burst that the next groups' log syncs queued behind. Applying many groups in one
//! transaction writes each touched page once.
//!
//! The pieces:
//! - the committer ([`super::committer`]) prepares a group against the newest LMDB snapshot
//!   plus an overlay of every unapplied group, logs and syncs it, then [`Lazy::publish`]es it
//!   and only then acknowledges it: **visible only after durable**, and **acknowledged means
//!   durable and visible**, as with an LMDB commit per group;
//! - a reader ([`super::ReadTxn`]) pairs its LMDB snapshot with the published [`Unapplied`]
//!   version, whose overlay (built once per version, on first need) it merges into the reads
//!   that meet the groups' writes (into every read, for a version of many ops);
//! - the applier thread ([`Lazy::apply_all`], also run by whoever needs LMDB whole: the
//!   committer before a group too large for the log, a backup, closing) writes the groups of
//!   one version, in one sorted pass, into one LMDB transaction stamped with the last group's
//!   log sequence number, commits it like the committer used to (unsynced; the log holds the
//!   groups until the next checkpoint) and publishes the version without them; the applier
//!   thread first folds the groups left waiting for the committer ([`Refold`]) and drops the
//!   overlays the committer discarded.
//!
//! Invariants:
//! - A version holds every published group after the last applied one, in sequence order.
//! - A reader uses a version only with an LMDB snapshot at least as new as the commit that
//!   trimmed the version (`applied_txnid`): such a snapshot holds every group the version
//!   lacks. Pairing it with groups it already holds is harmless, since an overlay records each
//!   key's final state (`kv::overlay`).
//! - The committer never waits for [`Lazy::apply_all`] while it holds a snapshot: applying may
//!   have to grow the map, which waits for every snapshot.
//!
//! Files: `version` (a group, the versions readers pair with their snapshots, and their
//! on-demand reads), `signal` (what wakes the applier thread, and how long it may wait); this file
//! holds [`Lazy`], which publishes, applies and trims, [`commit_stage`] and the applier's loop.

mod signal;
mod version;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::core::EnvCore;
use super::error::{is_map_full, KvError};
use super::lmdb::PutFlags;
use super::overlay::Overlay;
use super::pending::Pending;
use super::stage::{Mark, Stage};
use super::wal::{Logged, LOG_SEQ_KEY};
use crate::limits::{
    OTHER_READERS_LOOK, UNAPPLIED_BACKLOG_WAIT, UNAPPLIED_BUSY_AGE, UNAPPLIED_HURRY_OPS,
    UNAPPLIED_MAX_GROUPS, UNAPPLIED_MAX_OPS, UNAPPLIED_READER_MERGE_OPS, UNAPPLIED_READER_OPS,
    UNAPPLIED_READER_WAIT,
};

use signal::{due, hurried_due, Signal};
use version::lock;
pub(crate) use version::{Group, Unapplied};

/// The unapplied groups of one environment and their applier.
pub(crate) struct Lazy {
    current: Mutex<Arc<Unapplied>>,
    /// One applier at a time (the thread, or a caller that needs LMDB whole).
    applying: Mutex<()>,
    signal: Arc<Signal>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// How long a group may wait (`EnvOptions::log_apply_delay`).
    max_age: Duration,
    /// Whether a reader writes waiting groups itself (`EnvOptions::log_readers_apply`).
    readers_apply: bool,
    /// The committer's next overlay, folded by the applier thread after its apply.
    refold: Mutex<Option<Refold>>,
    /// Overlays the committer let go of, dropped on the applier thread.
    discarded: Mutex<Vec<Overlay>>,
    /// The bounds the committer let go of, emptied, for the next refold to fill: their vectors
    /// are already as large as a window's and their pages faulted in, where fresh ones grew by
    /// copying, on both threads (W sync at batch 1000: ~6% of the committer's time).
    spare_bounds: Mutex<Option<Pending>>,
    /// Whether the committer defers list-table writes (`committer::later::Working`): the
    /// refold then records their keys' bounds instead of adding them.
    committer_defers: AtomicBool,
    /// `EnvOptions::log_apply_backlog_ops` (`usize::MAX`: no bound).
    backlog_limit: usize,
}

/// At most this many passes of [`Lazy::refold_after`] over the groups published meanwhile
/// (each pass is shorter than the one before; the bound only stops a writer that keeps up).
const REFOLD_ROUNDS: usize = 4;

/// At most this many discarded overlays wait for the applier thread.
const DISCARDED_MAX: usize = 2;

/// The overlay of the groups an apply left waiting, folded by the applier thread (which has a
/// core of its own while the committer waits for its syncs) so that the committer does not
/// fold them again on its path (`committer::later::Working`; measured at W sync batch 100: the
/// committer's own refold and drop cost ~100 us per group, a tenth of its commit).
pub(crate) struct Refold {
    /// The apply it follows: the `applied_txnid` of the versions it serves.
    applied_txnid: usize,
    /// It holds every waiting group up to this sequence number (`None`: none).
    through_seq: Option<u64>,
    overlay: Overlay,
    /// When the committer defers: the groups' list-table writes are not in `overlay`; these
    /// are their keys' bounds.
    deferred: Option<Pending>,
}

/// The waiting groups as the committer takes them after an apply ([`Lazy::overlay_for_committer`]).
pub(crate) struct ForCommitter {
    /// The applier's refold of the first groups (empty without one).
    pub(crate) overlay: Overlay,
    /// When the refold deferred their list-table writes: their keys' bounds and those groups.
    pub(crate) deferred: Option<(Pending, Vec<Arc<Group>>)>,
    /// The groups the refold lacks, to take in full.
    pub(crate) rest: Vec<Arc<Group>>,
}

/// What the applier thread holds (weakly): the environment's state and its `Lazy`. Defined
/// here and implemented above (`kv::shared`), so that this room need not name the room that
/// holds it.
pub(crate) trait Host: Send + Sync + 'static {
    fn core(&self) -> &EnvCore;
    fn lazy(&self) -> Option<&Lazy>;
}

impl Lazy {
    pub(crate) fn new(max_age: Duration, readers_apply: bool) -> Lazy {
        let signal = Arc::new(Signal::default());
        Lazy {
            current: Mutex::new(Arc::new(Unapplied::fresh(Vec::new(), 0, signal.clone()))),
            applying: Mutex::new(()),
            signal,
            thread: Mutex::new(None),
            max_age,
            readers_apply,
            refold: Mutex::new(None),
            discarded: Mutex::new(Vec::new()),
            spare_bounds: Mutex::new(None),
            committer_defers: AtomicBool::new(true),
            backlog_limit: usize::MAX,
        }
    }

    /// The most staged ops that may wait before a batch waits for the writer
    /// (`EnvOptions::log_apply_backlog_ops`).
    pub(crate) fn with_backlog_limit(mut self, ops: usize) -> Lazy {
        self.backlog_limit = ops;
        self
    }

    /// Before a batch: while more ops wait than the backlog limit allows, waits for the
    /// applier to write some, at most `UNAPPLIED_BACKLOG_WAIT` (a writer that cannot go on,
    /// a full map or a poisoned environment, then holds up no batch for longer).
    pub(crate) fn wait_for_backlog(&self) {
        self.wait_below(self.backlog_limit, UNAPPLIED_BACKLOG_WAIT);
    }

    fn wait_below(&self, max_ops: usize, patience: Duration) {
        if max_ops == usize::MAX || self.current().ops <= max_ops {
            return;
        }
        let deadline = Instant::now() + patience;
        self.signal.nudge();
        while self.current().ops > max_ops && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Starts the applier thread (it holds the environment weakly and ends at `shutdown`).
    pub(crate) fn start<H: Host>(&self, host: &Arc<H>) -> std::io::Result<()> {
        let weak = Arc::downgrade(host);
        let signal = self.signal.clone();
        let thread = std::thread::Builder::new()
            .name("datalith-apply".into())
            .spawn(move || run_applier(weak, signal))?;
        *lock(&self.thread) = Some(thread);
        Ok(())
    }

    /// The published version.
    pub(crate) fn current(&self) -> Arc<Unapplied> {
        lock(&self.current).clone()
    }

    /// Makes a logged group visible (after its record is durable, before it is acknowledged).
    pub(crate) fn publish(&self, group: Group) {
        let mut cur = lock(&self.current);
        let next = cur.extended(group);
        // Within a hurry the applier sleeps until the oldest group's `UNAPPLIED_HURRY_AGE`
        // unless the groups reach `UNAPPLIED_HURRY_OPS` first.
        let hurry_full = cur.ops < UNAPPLIED_HURRY_OPS
            && next.ops >= UNAPPLIED_HURRY_OPS
            && self.signal.hurried();
        let wake = next.ops >= UNAPPLIED_MAX_OPS
            || next.len >= UNAPPLIED_MAX_GROUPS
            || next.len == 1
            || hurry_full;
        *cur = Arc::new(next);
        drop(cur);
        if wake {
            let _looking = lock(&self.signal.state);
            self.signal.wake.notify_one();
        }
    }

    /// `version`'s groups for the committer: the applier's refold of the first ones, when it
    /// has one for this version, and the groups it lacks (all of them without a refold).
    pub(crate) fn overlay_for_committer(&self, version: &Unapplied) -> ForCommitter {
        let refold = lock(&self.refold).take();
        match refold {
            Some(r) if r.applied_txnid == version.applied_txnid => {
                let folded = |g: &Arc<Group>| r.through_seq.is_some_and(|s| g.seq <= s);
                let (done, rest): (Vec<_>, Vec<_>) = version.groups().into_iter().partition(folded);
                ForCommitter {
                    overlay: r.overlay,
                    deferred: r.deferred.map(|bounds| (bounds, done)),
                    rest,
                }
            }
            stale => {
                if let Some(r) = stale {
                    self.discard(r.overlay);
                }
                ForCommitter {
                    overlay: Overlay::new(),
                    deferred: None,
                    rest: version.groups(),
                }
            }
        }
    }

    /// Keeps `bounds` (emptied) for the next refold (see `spare_bounds`).
    pub(crate) fn spare_bounds(&self, mut bounds: Pending) {
        bounds.clear();
        *lock(&self.spare_bounds) = Some(bounds);
    }

    /// Tells the applier whether the committer defers list-table writes (see `Refold`).
    pub(crate) fn set_committer_defers(&self, defers: bool) {
        self.committer_defers.store(defers, Ordering::Relaxed);
    }

    /// Hands an overlay to the applier thread to drop (dropping a large one takes
    /// milliseconds); dropped here when a few already wait (the applier is asleep: a long
    /// apply delay, applies made by readers).
    pub(crate) fn discard(&self, overlay: Overlay) {
        if overlay.is_empty() {
            return;
        }
        let mut discarded = lock(&self.discarded);
        if discarded.len() < DISCARDED_MAX {
            discarded.push(overlay);
        }
    }

    fn drop_discarded(&self) {
        let discarded = std::mem::take(&mut *lock(&self.discarded));
        drop(discarded);
    }

    /// The sequence number of the last published group, if any is unapplied.
    pub(crate) fn last_seq(&self) -> Option<u64> {
        lock(&self.current).last_seq
    }

    /// Writes every published group into LMDB in one transaction and publishes the version
    /// without them. Must not be called while holding a snapshot (see the module's
    /// invariants).
    pub(crate) fn apply_all(&self, core: &EnvCore) -> Result<(), KvError> {
        let held = lock(&self.applying);
        self.apply_held(core, &held, true, false)
    }

    /// How long groups may wait when many ops came in (`UNAPPLIED_BUSY_AGE`): never less than
    /// `max_age`, and zero with it (LMDB written after every group).
    fn busy_age(&self) -> Duration {
        match self.max_age.is_zero() {
            true => Duration::ZERO,
            false => self.max_age.max(UNAPPLIED_BUSY_AGE),
        }
    }

    /// Whether readers write waiting groups themselves ([`Lazy::apply_for_reader`]).
    pub(crate) fn readers_apply(&self) -> bool {
        self.readers_apply
    }

    /// Holds the applier's lock: nobody applies while the old path commits on its own.
    pub(crate) fn hold(&self) -> std::sync::MutexGuard<'_, ()> {
        lock(&self.applying)
    }

    /// Before a reader's snapshot begins: if more groups wait than are cheap to merge (a
    /// burst's backlog too), writes them into LMDB on the reader's thread (or waits, a
    /// bounded time, for the applier that is writing them), so the snapshot reads LMDB alone
    /// instead of merging an overlay into every read: a `Db` taken right after writes is often
    /// kept for many reads (the Q workload's snapshot, taken right after loading 20,000 people
    /// in one transaction, merged ~200K ops into every query: q1 ~30% slower than before the
    /// log). Writing them costs less than building their overlay would (the version's first
    /// reader builds it; see `UNAPPLIED_READER_MERGE_OPS`), and is work the applier saves.
    /// Never grows the map; when the wait runs out or the write fails, the reader merges the
    /// overlay, and a large one hurries the applier.
    pub(crate) fn apply_for_reader(&self, core: &EnvCore) {
        let version = self.current();
        if version.ops <= UNAPPLIED_READER_MERGE_OPS {
            // Cheap to merge (a read between writes: the applier catches up on its own
            // thread).
            if version.ops >= UNAPPLIED_READER_OPS {
                self.signal.nudge();
            }
            return;
        }
        let Some(target) = version.last_seq else {
            return;
        };
        drop(version);
        let deadline = Instant::now() + UNAPPLIED_READER_WAIT;
        loop {
            if let Ok(held) = self.applying.try_lock() {
                if !self.current().applied_through(target) {
                    // A failure is met again by the applier, which reports it to writers.
                    let _ = self.apply_held(core, &held, false, false);
                }
                return;
            }
            // The applier holds the lock, most likely writing these very groups.
            if self.current().applied_through(target) || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// [`Lazy::apply_all`] under the applier's lock; without `may_grow` a full map ends the
    /// attempt (the applier grows it later). With `refold` (the applier thread), the groups
    /// left waiting are folded for the committer before the version without the applied ones
    /// is published.
    fn apply_held(
        &self,
        core: &EnvCore,
        _held: &std::sync::MutexGuard<'_, ()>,
        may_grow: bool,
        refold: bool,
    ) -> Result<(), KvError> {
        let version = self.current();
        let groups = version.groups();
        let Some(last) = groups.last() else {
            return Ok(());
        };
        if let Some(cause) = core.poison_cause() {
            return Err(KvError::Poisoned { cause });
        }
        let wal = core
            .wal
            .as_ref()
            .expect("groups are left unapplied only with a log");
        let mut merged = Stage::default();
        // Sized once: grown group by group, each growth copied every staged byte again.
        // Measured and dropped (2026-11-29): keeping this stage (and the buffers its apply
        // sorts into) from one apply to the next, to spare faulting in their pages again; W
        // sync at batch 1000, 9 alternating pairs, the kept stage cost more CPU a write in 8
        // (3.36-3.70 us against 3.02-3.40).
        merged.reserve(
            groups.iter().map(|g| g.stage.len()).sum(),
            groups.iter().map(|g| g.stage.staged_bytes()).sum(),
        );
        let mut bytes = 0;
        for g in &groups {
            merged.append_from(&g.stage);
            bytes += g.logged.bytes();
        }
        if may_grow {
            core.ensure_room(merged.staged_bytes())?;
        }
        let txnid = commit_stage(core, &mut merged, last.seq, &last.logged, may_grow)?;
        if refold {
            // Until the trim below, the committer reads LMDB (which now holds the applied
            // groups) with its overlay of all of them: harmless, see the module's invariants.
            self.refold_after(last.seq, txnid);
        }
        self.trim(last.seq, txnid);
        wal.after_commit(&core.env, &last.logged.covering(bytes))
            .map_err(|e| core.poison(e))?;
        core.after_commit();
        Ok(())
    }

    /// Folds the groups after `applied_seq` for the committer's versions after the apply
    /// that LMDB transaction `txnid` made.
    ///
    /// The groups published while it folds are folded too, a few rounds over: folding what
    /// came in during a large apply takes tens of milliseconds, and the groups published
    /// meanwhile would otherwise be added by the committer, on its path (W sync batch 1000:
    /// 40,000-80,000 ops at each apply).
    pub(in crate::kv) fn refold_after(&self, applied_seq: u64, txnid: usize) {
        let defer = self.committer_defers.load(Ordering::Relaxed);
        let mut through_seq = None;
        let mut overlay = Overlay::new();
        let mut bounds = lock(&self.spare_bounds).take().unwrap_or_default();
        for _ in 0..REFOLD_ROUNDS {
            let newer = self
                .current()
                .groups_after(through_seq.unwrap_or(applied_seq));
            let Some(last) = newer.last() else { break };
            through_seq = Some(last.seq);
            for g in &newer {
                match defer {
                    false => overlay.apply_stage(&g.stage),
                    true => {
                        let all = 0..g.stage.len();
                        g.stage.for_each_kept_op_in(
                            all.clone(),
                            true,
                            |kind, id, table_kind, key, value| {
                                overlay.op(id, table_kind, kind, key, value)
                            },
                        );
                        bounds.note_keys(g.stage.deferrable_keys_in(all));
                    }
                }
            }
        }
        let stale = lock(&self.refold).replace(Refold {
            applied_txnid: txnid,
            through_seq,
            overlay,
            deferred: defer.then_some(bounds),
        });
        drop(stale);
    }

    /// Publishes the version without the groups up to `applied_seq`, which LMDB transaction
    /// `txnid` wrote.
    pub(in crate::kv) fn trim(&self, applied_seq: u64, txnid: usize) {
        let mut cur = lock(&self.current);
        let rest = cur.groups_after(applied_seq);
        *cur = Arc::new(Unapplied::fresh(rest, txnid, self.signal.clone()));
    }

    /// Stops the applier and applies what is left (the environment is closing; the committer
    /// has stopped).
    pub(crate) fn shutdown(&self, core: &EnvCore) -> Result<(), KvError> {
        lock(&self.signal.state).stop = true;
        self.signal.wake.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        self.apply_all(core)
    }
}

/// Writes `stage` into one LMDB transaction stamped with log sequence number `seq` and
/// commits it unsynced as `logged` (`Wal::commit`); returns the transaction's id. A full map
/// is grown and the write redone when `may_grow`, else the attempt ends with the error. Any
/// other failure poisons the environment.
pub(crate) fn commit_stage(
    core: &EnvCore,
    stage: &mut Stage,
    seq: u64,
    logged: &Logged,
    may_grow: bool,
) -> Result<usize, KvError> {
    let wal = core.wal.as_ref().expect("only with a log");
    loop {
        let mut txn = core
            .env
            .write_txn()
            .map_err(|e| core.poison(KvError::from(e)))?;
        stage.forget_tallies();
        let written = stage
            .apply(Mark::START, &mut txn)
            .and_then(|()| super::tally::add(&mut txn, core.meta, stage.tallies()))
            .and_then(|()| txn.put(core.meta, LOG_SEQ_KEY, &seq.to_be_bytes(), PutFlags::NONE));
        match written {
            Ok(()) => {}
            Err(e) if is_map_full(&e) && may_grow => {
                txn.abort();
                core.grow_map(true)?;
                continue;
            }
            Err(e) if is_map_full(&e) => {
                txn.abort();
                return Err(KvError::from(e));
            }
            Err(e) => {
                txn.abort();
                return Err(core.poison(KvError::from(e)));
            }
        }
        let txnid = txn.id();
        wal.commit(txn, logged).map_err(|e| {
            core.poison(KvError::CommitFailed {
                cause: e.to_string(),
            })
        })?;
        return Ok(txnid);
    }
}

/// The applier's loop: applies once the oldest group is `max_age` old (`busy_age` when many
/// ops wait), the groups hold `UNAPPLIED_MAX_OPS` ops or number `UNAPPLIED_MAX_GROUPS`, or a
/// reader asked.
fn run_applier<H: Host>(host: Weak<H>, signal: Arc<Signal>) {
    let mut other_readers = OtherReaders::default();
    loop {
        let Some(owner) = host.upgrade() else { return };
        let Some(lazy) = owner.lazy() else {
            return;
        };
        let env = owner.core();
        let max_age = lazy.max_age;
        let busy_age = lazy.busy_age();
        // Read under the signal's lock, which `publish` takes to wake us: no wake-up is lost
        // between this look and the wait.
        let state = lock(&signal.state);
        if state.stop {
            return;
        }
        let version = lazy.current();
        let others = version.first_at.is_some() && other_readers.present(env);
        let due = match version.first_at {
            None => Duration::from_secs(1),
            Some(_) if version.ops >= UNAPPLIED_MAX_OPS => Duration::ZERO,
            Some(_) if version.len >= UNAPPLIED_MAX_GROUPS => Duration::ZERO,
            Some(_) if signal.nudged.swap(false, Ordering::AcqRel) => Duration::ZERO,
            Some(at) if signal.hurried() || others => hurried_due(version.ops, at.elapsed()),
            // Look again for readers in other processes before long.
            Some(at) => due(version.ops, at.elapsed(), max_age, busy_age).min(OTHER_READERS_LOOK),
        };
        drop(version);
        if due.is_zero() {
            drop(state);
            // A failure poisons the environment (or is a growth blocked by a snapshot, met
            // again by the next attempt); writers see it on their next group.
            let applied = {
                let held = lock(&lazy.applying);
                lazy.apply_held(env, &held, true, true)
            };
            lazy.drop_discarded();
            if applied.is_err() {
                drop(owner);
                std::thread::sleep(max_age.max(Duration::from_millis(10)));
            }
            continue;
        }
        drop(owner);
        let (state, _) = signal
            .wake
            .wait_timeout(state, due)
            .unwrap_or_else(|p| p.into_inner());
        if state.stop {
            return;
        }
    }
}

/// Whether processes other than this one read the environment, looked up at most every
/// `OTHER_READERS_LOOK`. They read the groups LMDB does not hold from the log (`wal::tail`),
/// once per snapshot, so while they are there the applier keeps those groups few, as it does
/// for this process's readers during a hurry.
#[derive(Default)]
struct OtherReaders {
    looked: Option<(Instant, bool)>,
}

impl OtherReaders {
    fn present(&mut self, core: &EnvCore) -> bool {
        match self.looked {
            Some((at, present)) if at.elapsed() < OTHER_READERS_LOOK => present,
            _ => {
                let present = core.env.other_process_reads();
                self.looked = Some((Instant::now(), present));
                present
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Versions are snapshots: publishing more groups, or trimming the applied ones, never
    //! changes what an earlier version holds.

    use super::*;
    use crate::kv::overlay::TableOverlay;
    use crate::kv::pending::{Hi, Lo};
    use crate::kv::table::{Table, TableKind};
    use crate::limits::UNAPPLIED_BUSY_OPS;

    /// The list table the groups write (id 2) besides the plain one (id 1).
    fn list_table() -> Table {
        Table::for_test("l", 2, TableKind::List)
    }

    fn group(seq: u64, ops: usize) -> Group {
        group_of(seq, ops, false)
    }

    /// A group of `n` puts into the plain table and, when `lists`, `n` adds to the list table.
    fn group_of(seq: u64, n: usize, lists: bool) -> Group {
        let t = Table::for_test("t", 1, TableKind::Plain);
        let mut stage = Stage::default();
        for i in 0..n {
            stage.put(&t, &[seq as u8, i as u8], b"v");
            if lists {
                let key = [seq as u8, i as u8, 0, 0, 0, 0, 0, 0, 1];
                stage.list_add(&list_table(), &key, b"w");
            }
        }
        Group::new(seq, Arc::new(stage), Logged::for_test(seq, seq * 100, 100))
    }

    fn seqs(v: &Unapplied) -> Vec<u64> {
        v.groups().iter().map(|g| g.seq).collect()
    }

    #[test]
    fn a_version_keeps_its_groups_while_later_ones_are_published_and_applied() {
        let lazy = Lazy::new(Duration::from_secs(3600), false);
        let empty = lazy.current();
        // (groups published so far, their ops): checked on every version kept below.
        let mut kept = vec![(empty, Vec::new(), 0)];
        for seq in 1..=5 {
            lazy.publish(group(seq, seq as usize));
            let v = lazy.current();
            let want: Vec<u64> = (1..=seq).collect();
            let ops = want.iter().sum::<u64>() as usize;
            kept.push((v, want, ops));
        }
        assert_eq!(lazy.last_seq(), Some(5));
        // The applier wrote groups 1..=3 (what `apply_held` publishes after its commit).
        lazy.trim(3, 7);
        lazy.publish(group(6, 1));
        let after = lazy.current();
        assert_eq!(seqs(&after), vec![4, 5, 6]);
        assert_eq!(
            (after.ops, after.applied_txnid(), after.last_seq),
            (10, 7, Some(6))
        );
        assert!(after.first_at.is_some() && !after.fits(6) && after.fits(7));
        for (v, want, ops) in &kept {
            assert_eq!(&seqs(v), want);
            assert_eq!(v.ops, *ops);
            assert_eq!(v.is_empty(), want.is_empty());
            assert_eq!(v.last_seq, want.last().copied());
            assert_eq!(v.applied_txnid(), 0);
        }
        // Each version's overlay holds exactly its own groups' keys.
        let third = kept[3].0.overlay().expect("three groups");
        let TableOverlay::Plain(m) = third.table(1).expect("table 1") else {
            panic!("a plain table");
        };
        assert_eq!(m.len(), 1 + 2 + 3);
        assert!(kept[0].0.overlay().is_none());
    }

    /// The plain table's entries of an overlay.
    fn entries(o: &Overlay) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        match o.table(1) {
            Some(TableOverlay::Plain(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(TableOverlay::List(_)) => panic!("a plain table"),
            None => Vec::new(),
        }
    }

    /// The list table's pairs of an overlay.
    fn pairs(o: &Overlay) -> Vec<(Vec<u8>, Vec<u8>, bool)> {
        match o.table(2) {
            Some(TableOverlay::List(m)) => m
                .all_pairs()
                .map(|(k, v, p)| (k.to_vec(), v.to_vec(), p))
                .collect(),
            Some(TableOverlay::Plain(_)) => panic!("a list table"),
            None => Vec::new(),
        }
    }

    #[test]
    fn a_batch_waits_for_the_writer_only_past_the_backlog_limit_and_until_it_writes() {
        let ms = Duration::from_millis;
        // (limit, ops waiting, groups the writer writes meanwhile, waited at least / less than)
        let cases = [
            (usize::MAX, 10, false, ms(0), ms(100)),
            (10, 10, false, ms(0), ms(100)),
            (9, 10, false, ms(300), ms(10_000)),
            (9, 10, true, ms(50), ms(300)),
        ];
        for (i, (limit, ops, writes, at_least, below)) in cases.into_iter().enumerate() {
            let lazy =
                Arc::new(Lazy::new(Duration::from_secs(3600), false).with_backlog_limit(limit));
            lazy.publish(group(1, ops - 4));
            lazy.publish(group(2, 4));
            let writer = writes.then(|| {
                let lazy = lazy.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(ms(50));
                    lazy.trim(1, 7);
                })
            });
            let started = Instant::now();
            lazy.wait_below(limit, ms(300));
            let waited = started.elapsed();
            assert!(waited >= at_least && waited < below, "case {i}: {waited:?}");
            if let Some(w) = writer {
                w.join().unwrap();
                assert_eq!(lazy.current().ops, 4, "case {i}");
            }
        }
    }

    #[test]
    fn groups_wait_longer_only_when_many_ops_came_in() {
        let ms = Duration::from_millis;
        let (quiet, busy) = (UNAPPLIED_BUSY_OPS - 1, UNAPPLIED_BUSY_OPS);
        // (ops waiting, age of the oldest, max age, busy age, still to wait)
        let cases = [
            (quiet, ms(5), ms(20), ms(250), ms(15)),
            (quiet, ms(20), ms(20), ms(250), ms(0)),
            (busy, ms(20), ms(20), ms(250), ms(230)),
            (busy, ms(300), ms(20), ms(250), ms(0)),
            (busy, ms(0), ms(0), ms(0), ms(0)),
        ];
        for (ops, age, max_age, busy_age, want) in cases {
            assert_eq!(due(ops, age, max_age, busy_age), want, "{ops} {age:?}");
        }
        let lazy = |d| Lazy::new(d, false).busy_age();
        assert_eq!(lazy(ms(0)), ms(0));
        assert_eq!(lazy(ms(20)), UNAPPLIED_BUSY_AGE);
        assert_eq!(lazy(ms(3_600_000)), ms(3_600_000));
    }

    #[test]
    fn the_committer_gets_the_waiting_groups_whether_or_not_the_applier_folded_them() {
        // (the applier's refold is for the current apply, seq of the group published after
        // the refold, the refold is stale, the committer defers list writes): the committer's
        // overlay, plus the writes it lacks, always equals a fold; deferred list writes are
        // out of the overlay and inside the bounds.
        for (current, late, stale, defers) in [
            (true, true, false, false),
            (true, false, false, false),
            (false, true, false, false),
            (true, true, true, false),
            (true, true, false, true),
            (true, false, false, true),
            (false, true, false, true),
            (true, true, true, true),
        ] {
            let lazy = Lazy::new(Duration::from_secs(3600), false);
            lazy.set_committer_defers(defers);
            for seq in 1..=5 {
                lazy.publish(group_of(seq, 2, true));
            }
            if current {
                lazy.refold_after(3, if stale { 6 } else { 7 });
            }
            lazy.trim(3, 7);
            if late {
                lazy.publish(group_of(6, 3, true));
            }
            let v = lazy.current();
            let case = format!("{current} {late} {stale} {defers}");
            let c = lazy.overlay_for_committer(&v);
            let mut got = c.overlay;
            let deferred = match c.deferred {
                Some((bounds, done)) => {
                    assert!(defers && current && !stale, "{case}");
                    assert!(pairs(&got).is_empty(), "list writes deferred: {case}");
                    for g in &done {
                        g.stage.for_each_op(|_, id, _, key, _| {
                            if id == 2 {
                                let (lo, hi) = (Lo::Key(key), Hi::Key(key));
                                assert!(bounds.check(&list_table(), lo, hi).is_err(), "{case}");
                            }
                        });
                    }
                    done
                }
                None => {
                    assert!(!(defers && current && !stale), "{case}");
                    Vec::new()
                }
            };
            for g in deferred.iter().chain(&c.rest) {
                got.apply_stage(&g.stage);
            }
            let fold = v.fold();
            assert_eq!(entries(&got), entries(&fold), "{case}");
            assert_eq!(pairs(&got), pairs(&fold), "{case}");
            let want = if late { 2 + 2 + 3 } else { 2 + 2 };
            assert_eq!(entries(&got).len(), want, "{case}");
            assert!(lock(&lazy.refold).is_none(), "a refold is used once");
        }
    }
}
