//! The committer: the one thread per environment that writes.
//!
//! It blocks for one request, drains whatever else is queued (bounded by
//! `MAX_BATCH_REQUESTS` and `MAX_BATCH_BYTES`), and applies the batch in **one** LMDB write
//! transaction with **one** commit (one fsync in `Durable` mode). So the batch is 1 when the
//! system is idle and grows with load, with no timer and no knob.
//!
//! With the write-ahead log (`Durable`), a batch of small requests opens no LMDB write
//! transaction at all (`later`): it is prepared against a snapshot plus the overlay of the
//! groups LMDB does not hold yet, made durable by its log record and published to readers,
//! and LMDB is written later, many groups at once (`kv::unapplied`). What follows describes
//! the other path: large batches, and every batch of the other modes.
//!
//! Isolation without nested transactions: a request first validates against the transaction
//! (which already holds every earlier request of the batch) and stages its writes in a
//! [`Stage`]; only a request that passed is written into LMDB. A rejected request is rolled
//! back by truncating the stage, so it fails alone and its neighbours commit. (LMDB nested
//! transactions would also work, but cost a dirty-page list per request and are unavailable
//! with `MDB_WRITEMAP`.)
//!
//! If the map fills during a batch, the transaction is aborted, the map grown, and the whole
//! batch redone from scratch, which is why [`WriteRequest::prepare`] may run more than once.
//! A failed commit fails every request of the batch and poisons the environment.

use crossbeam_channel::Receiver;
use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, Weak};

use super::batch_snapshot::{BatchSnapshot, OpRange, SpareStages};
use super::commit_timing::{self as timing, Step};
use super::core::Release;
use super::error::{is_map_full, KvError};
use super::lmdb::{LmdbError, PutFlags, RwTxn};
use super::pending::Pending;
use super::read::{ReadTxn, Snapshot};
use super::shared::EnvShared;
use super::stage::Stage;
use super::tally;
use super::view::View;
use super::wal::LOG_SEQ_KEY;
use crate::limits::{DEFER_MAX_OPS, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS};

mod later;

/// Why a request was not applied; the request keeps its own detailed error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected;

/// How a request ended.
#[derive(Debug)]
pub enum Outcome {
    /// Its writes are committed, as durable as the environment promises.
    Committed,
    /// Its own validation rejected it (see the error it kept); nothing of it was written.
    Rejected,
    /// The batch it was in failed as a whole.
    Failed(KvError),
}

/// Per-batch state that requests share and that is written once per batch, after every
/// request (for example counters and statistics that every request would otherwise read and
/// rewrite). A request adds to a slot only after it has passed validation, so a rejected
/// request leaves no trace in it.
pub trait BatchSlot: Any + Send {
    /// Stages the slot's writes, after the batch's last request. May run again for the same
    /// batch (after a read that met writes it could not see yet, its writes dropped), so it
    /// must start over rather than accumulate.
    fn finish(&mut self, view: View<'_>, stage: &mut Stage) -> Result<(), KvError>;
    /// Downcasting support.
    fn as_any(&mut self) -> &mut dyn Any;
}

/// The slots of one batch (empty at the start of every batch attempt).
#[derive(Default)]
pub struct BatchState {
    slots: Vec<(TypeId, Box<dyn BatchSlot>)>,
}

impl BatchState {
    /// The slot of type `T`, created by `make` if this batch has none yet.
    pub fn slot<T: BatchSlot>(&mut self, make: impl FnOnce() -> T) -> &mut T {
        let id = TypeId::of::<T>();
        let i = match self.slots.iter().position(|(t, _)| *t == id) {
            Some(i) => i,
            None => {
                self.slots.push((id, Box::new(make())));
                self.slots.len() - 1
            }
        };
        self.slots[i]
            .1
            .as_any()
            .downcast_mut::<T>()
            .expect("slot type matches its TypeId")
    }

    /// An existing slot of type `T`.
    pub fn get<T: BatchSlot>(&mut self) -> Option<&mut T> {
        let id = TypeId::of::<T>();
        self.slots
            .iter_mut()
            .find(|(t, _)| *t == id)
            .and_then(|(_, s)| s.as_any().downcast_mut::<T>())
    }
}

/// A unit of work for the committer.
pub trait WriteRequest: Send + 'static {
    /// Bytes this request will roughly write (bounds the batch, sizes map growth).
    fn size_hint(&self) -> usize;

    /// Validates against `view` (the state after every earlier request of the batch) and
    /// stages writes. Returning `Err(Rejected)` drops this request alone: it must keep its
    /// own error for [`WriteRequest::finish`]. May run again for the same request after the
    /// batch is redone, so it must start over rather than accumulate.
    fn prepare(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<(), Rejected>;

    /// Called exactly once, after the batch is durable or has failed.
    fn finish(self: Box<Self>, outcome: Outcome);

    /// Whether this request wants the state before its batch kept (for its report's
    /// `db_before`/`db_after`). The committer then begins one read snapshot per batch.
    fn wants_batch_snapshot(&self) -> bool {
        false
    }

    /// Whether the committer may write this request's staged ops into LMDB later in the
    /// batch, with other requests' in one sorted pass, instead of right after its `prepare`
    /// (`kv::pending`). Saying yes is a promise: any read of `prepare` may then fail with
    /// [`KvError::PendingWrites`], after which `prepare` must return `Err(Rejected)` and will
    /// run again from the start; so it must not change the [`BatchState`] before its last read.
    fn defers_apply(&self) -> bool {
        false
    }

    /// Whether this request's writes may reach LMDB after its batch (`kv::unapplied`). A
    /// request that counts what LMDB holds into its writes itself (a count of new keys that
    /// readers of the overlay would count again) says no: its batch then commits straight into
    /// LMDB, where the counts and the keys they count arrive together.
    fn may_apply_later(&self) -> bool {
        true
    }

    /// Whether this request's batch, when it commits straight into LMDB (the ordinary path:
    /// too large for the LMDB writer to take later), is made durable by a checkpoint (its LMDB
    /// commit, then a synced data file) instead of a record in the write-ahead log
    /// (`kv::wal`). A bulk load says yes: its index writes, which nothing derives from a
    /// smaller entry, would be written twice (`docs/measurements.md`, "Q's init").
    fn checkpoints_instead_of_logging(&self) -> bool {
        false
    }

    /// Hands an applied request its batch's snapshot and where its writes sit in it; called
    /// after the commit, before [`WriteRequest::finish`], if the snapshot could be taken.
    fn attach_batch_snapshot(&mut self, _batch: &Arc<BatchSnapshot>, _ops: OpRange) {}
}

pub(crate) type BoxedRequest = Box<dyn WriteRequest>;

/// The state of whoever is committing: the committer thread, or a blocking caller that found
/// the committer idle and commits on its own thread (sparing two thread switches per call).
#[derive(Default)]
pub(crate) struct Runner {
    stage: Stage,
    batch: Vec<BoxedRequest>,
    outcomes: Vec<Option<bool>>,
    /// Per applied request (same order as `outcomes`), its ops in `stage`.
    ops: Vec<OpRange>,
    /// The batch's staged ops not yet written into LMDB.
    pending: Pending,
    bytes: usize,
    /// When LMDB is written later: what the groups not yet in LMDB wrote, this batch's
    /// accepted requests included (see `later`).
    working: later::Working,
    /// Stages of dropped batch snapshots, for the next batches.
    spares: Arc<SpareStages>,
}

impl Runner {
    pub(crate) fn push(&mut self, r: BoxedRequest) {
        self.bytes += r.size_hint();
        self.batch.push(r);
    }

    /// Takes whatever is queued, within the batch bounds.
    pub(crate) fn drain(&mut self, rx: &Receiver<BoxedRequest>) {
        while self.batch.len() < MAX_BATCH_REQUESTS && self.bytes < MAX_BATCH_BYTES {
            match rx.try_recv() {
                Ok(r) => self.push(r),
                Err(_) => break,
            }
        }
    }

    /// Commits the batch and completes every request of it.
    pub(crate) fn run_batch(&mut self, shared: &Arc<EnvShared>) {
        if self.batch.is_empty() {
            return;
        }
        shared.core.stats.record_batch(self.batch.len());
        let want = self.batch.iter().any(|r| r.wants_batch_snapshot());
        let started = timing::start();
        let (result, before, stage) = match later::commit_batch_later(self, shared, want) {
            Some(Ok((before, stage))) => (Ok(()), before, Some(stage)),
            Some(Err(e)) => (Err(e), None, None),
            None => {
                // Nobody writes LMDB behind this batch's transaction (readers would otherwise
                // wait on LMDB's writer lock for it).
                let _applying = shared.lazy.as_ref().map(|l| {
                    shared.core.stats.record_direct_batch();
                    l.hold()
                });
                let scratch = Scratch {
                    stage: &mut self.stage,
                    outcomes: &mut self.outcomes,
                    ops: &mut self.ops,
                    pending: &mut self.pending,
                };
                match commit_batch(shared, &mut self.batch, scratch, self.bytes, want) {
                    Ok(before) => (Ok(()), before, None),
                    Err(e) => (Err(e), None, None),
                }
            }
        };
        timing::add(Step::Total, started);
        timing::count_group(stage.as_ref().map_or(self.stage.len(), |s| s.len()));
        let started = timing::start();
        let snapshot = match before {
            Some(before) => {
                // The stage itself moves to the snapshot (replays stop at a request's end, so
                // the batch's final writes after the last request are never replayed); the
                // next batch stages into a spare.
                let stage = match stage {
                    Some(shared_with_group) => shared_with_group,
                    None => Arc::new(self.take_stage()),
                };
                let b = Arc::new(BatchSnapshot::new(
                    Snapshot::new(before),
                    stage,
                    self.spares.clone(),
                ));
                let releasable: Weak<dyn Release> = Arc::downgrade(&b) as _;
                shared.core.retained.push(releasable);
                Some(b)
            }
            None => None,
        };
        let mut applied = 0;
        for (i, mut req) in self.batch.drain(..).enumerate() {
            let ok = self.outcomes.get(i).copied().flatten();
            let outcome = match (&result, ok) {
                (Err(e), _) => Outcome::Failed(e.clone_for_batch()),
                (Ok(()), Some(true)) => {
                    if let (Some(b), Some(ops)) = (&snapshot, self.ops.get(applied)) {
                        req.attach_batch_snapshot(b, ops.clone());
                    }
                    applied += 1;
                    Outcome::Committed
                }
                (Ok(()), _) => Outcome::Rejected,
            };
            req.finish(outcome);
        }
        self.ops.clear();
        self.outcomes.clear();
        self.stage.clear();
        self.bytes = 0;
        timing::add(Step::Finish, started);
    }

    /// Hands over the batch's stage, leaving a spare (warm if one is free) for the next.
    fn take_stage(&mut self) -> Stage {
        let mut next = self.spares.take();
        // With no spare back yet (the reports of recent batches still live: the usual case
        // under a stream of async writes), the fresh stage starts at this batch's size instead
        // of regrowing by doubling, which copies everything staged so far and touches about
        // twice the pages (measured: ~8% of the committer's time on W at batch 1000). Capped
        // like `Stage::clear`'s keep.
        next.reserve(
            self.stage.len().min(KEEP_STAGE_BYTES / 64),
            self.stage.staged_bytes().min(KEEP_STAGE_BYTES),
        );
        std::mem::replace(&mut self.stage, next)
    }
}

/// At most this many staged bytes are reserved ahead for the next batch.
const KEEP_STAGE_BYTES: usize = 64 << 20;

/// The committer's own state, shared by the environment handle (whose blocking callers may
/// commit on their own thread) and the committer thread.
pub(crate) struct Committer {
    /// Whoever commits holds this (the committer thread, or a blocking caller).
    pub(crate) runner: Mutex<Runner>,
    /// The queue's receiving end.
    pub(crate) queue: Receiver<BoxedRequest>,
}

impl Committer {
    pub(crate) fn new(queue: Receiver<BoxedRequest>) -> Committer {
        Committer {
            runner: Mutex::new(Runner::default()),
            queue,
        }
    }

    /// Runs `request` on this thread with whatever else is queued, if nobody is committing;
    /// hands it back otherwise.
    pub(crate) fn try_run(
        &self,
        shared: &Arc<EnvShared>,
        request: BoxedRequest,
    ) -> Result<(), BoxedRequest> {
        match self.runner.try_lock() {
            Ok(mut runner) => {
                runner.drain(&self.queue);
                runner.push(request);
                runner.run_batch(shared);
                Ok(())
            }
            Err(_) => Err(request),
        }
    }
}

/// The committer's loop; returns when every sender is gone.
pub(crate) fn run(shared: Arc<EnvShared>, committer: Arc<Committer>) {
    while let Ok(first) = committer.queue.recv() {
        let mut runner = committer.runner.lock().unwrap_or_else(|p| p.into_inner());
        runner.push(first);
        runner.drain(&committer.queue);
        runner.run_batch(&shared);
    }
}

/// What a batch fills in: the stage, whether each request was applied (`outcomes`), the
/// stage ops of each applied request (`ops`), and the ops not yet written (`pending`).
struct Scratch<'a> {
    stage: &'a mut Stage,
    outcomes: &'a mut Vec<Option<bool>>,
    ops: &'a mut Vec<OpRange>,
    pending: &'a mut Pending,
}

impl Scratch<'_> {
    /// Empty, for a new attempt at the batch.
    fn clear(&mut self) {
        self.outcomes.clear();
        self.ops.clear();
        self.stage.clear();
        self.pending.clear();
    }
}

/// Applies and commits one batch. With `want`, returns a snapshot of the state before the
/// batch when a reader slot was free.
///
/// The steps: [`apply_requests`] (validate and stage each request, write it into the
/// transaction), [`finish_slots`] (the batch's shared writes), [`stamp_log_seq`], then
/// [`commit_durably`] (through the write-ahead log where there is one). A full map aborts
/// the attempt, grows the map and starts over; so does a request that broke its deferral
/// promise (then without deferral).
fn commit_batch(
    shared: &Arc<EnvShared>,
    batch: &mut [BoxedRequest],
    mut scratch: Scratch<'_>,
    bytes: usize,
    want: bool,
) -> Result<Option<ReadTxn>, KvError> {
    if let Some(cause) = shared.core.poison_cause() {
        return Err(KvError::Poisoned { cause });
    }
    shared.core.ensure_room(bytes)?;
    // Cleared when a request that defers its writes did not fail a read that met pending ones:
    // the batch is then redone with every request's writes applied right after it.
    let mut may_defer = true;
    loop {
        scratch.clear();
        let mut state = BatchState::default();
        let mut txn = shared
            .core
            .env
            .write_txn()
            .map_err(|e| shared.core.poison(KvError::from(e)))?;
        shared.core.warm_ahead(&txn, bytes);
        // Begun while the write transaction is open: exactly the state the batch starts from.
        // Never waits for a reader slot (a reader may be waiting for this very commit).
        let before = if want {
            ReadTxn::try_begin(shared.clone())
        } else {
            None
        };
        let seq = shared.core.wal.as_ref().map(|wal| wal.next_seq());
        let applied = apply_requests(batch, &mut scratch, &mut txn, &mut state, may_defer)
            .and_then(|()| finish_slots(&mut state, scratch.stage, &mut txn))
            .and_then(|()| {
                Ok(tally::add(
                    &mut txn,
                    shared.core.meta,
                    scratch.stage.tallies(),
                )?)
            })
            .and_then(|()| stamp_log_seq(shared, seq, &mut txn));
        match applied {
            Ok(()) => {}
            Err(Interrupt::MapFull) => {
                txn.abort();
                // A growth waits for every snapshot, ours included.
                drop(before);
                shared.core.grow_map(true)?;
                continue;
            }
            Err(Interrupt::RedoInOrder) => {
                txn.abort();
                drop(before);
                may_defer = false;
                continue;
            }
            Err(Interrupt::Failed(e)) => {
                txn.abort();
                return Err(shared.core.poison(e));
            }
        }
        if shared.core.take_injected_failure() {
            txn.abort();
            return Err(shared.core.poison(KvError::CommitFailed {
                cause: "injected failure".into(),
            }));
        }
        let checkpointed = batch.iter().any(|q| q.checkpoints_instead_of_logging());
        match commit_durably(shared, txn, scratch.stage, seq, checkpointed)? {
            Committed::Yes => {}
            Committed::MapFull => {
                drop(before);
                shared.core.grow_map(true)?;
                continue;
            }
        }
        // An early growth needs every snapshot closed: when one is due (rarely: the map
        // doubles each time), snapshots kept for reports give way.
        let before = match before {
            Some(ours) if shared.core.map_getting_full() => {
                drop(ours);
                shared.core.retained.release_all();
                None
            }
            other => other,
        };
        shared.core.after_commit();
        return Ok(before);
    }
}

/// Why an attempt at a batch stopped before its commit.
enum Interrupt {
    /// The map is full: grow it and start over.
    MapFull,
    /// A request went on past a read that met pending writes: start over without deferral.
    RedoInOrder,
    /// The batch fails (and the environment is poisoned).
    Failed(KvError),
}

impl From<LmdbError> for Interrupt {
    fn from(e: LmdbError) -> Interrupt {
        match is_map_full(&e) {
            true => Interrupt::MapFull,
            false => Interrupt::Failed(KvError::from(e)),
        }
    }
}

/// Step 1: validates and stages each request in order and writes the applied ones into `txn`
/// (right after each, or, for requests that defer, later in one sorted pass).
fn apply_requests(
    batch: &mut [BoxedRequest],
    s: &mut Scratch<'_>,
    txn: &mut RwTxn,
    state: &mut BatchState,
    may_defer: bool,
) -> Result<(), Interrupt> {
    for req in batch.iter_mut() {
        let defer = may_defer && req.defers_apply();
        if !defer {
            // It reads LMDB as it is: everything before it must be there.
            apply_pending(s.pending, s.stage, txn)?;
        }
        apply_request(req, defer, s, txn, state)?;
    }
    apply_pending(s.pending, s.stage, txn)?;
    Ok(())
}

/// One request of [`apply_requests`]: records in `s.outcomes` whether it was applied.
fn apply_request(
    req: &mut BoxedRequest,
    defer: bool,
    s: &mut Scratch<'_>,
    txn: &mut RwTxn,
    state: &mut BatchState,
) -> Result<(), Interrupt> {
    loop {
        let mark = s.stage.mark();
        let start = s.stage.len();
        let view = match defer {
            true => View::new(txn).with_pending(s.pending),
            false => View::new(txn),
        };
        let started = timing::start();
        let prepared = req.prepare(view, s.stage, state);
        timing::add(Step::Prepare, started);
        let hit = s.pending.take_hit();
        let applied = match prepared {
            Err(Rejected) if hit => {
                // A read met writes of earlier requests still pending: write them, drop what
                // this request staged, and run it again.
                s.stage.rollback(mark);
                apply_pending(s.pending, s.stage, txn)?;
                continue;
            }
            // The request went on past a failed read (breaking its promise): its state is
            // suspect, and it may have touched the batch state.
            Ok(()) if hit => return Err(Interrupt::RedoInOrder),
            Ok(()) if defer && s.stage.len() - start >= DEFER_MAX_OPS => {
                // Large enough to be written well on its own: with what is pending, now, in
                // one sorted pass, and no bounds to keep for it.
                s.pending.include(mark);
                apply_pending(s.pending, s.stage, txn)
            }
            Ok(()) if defer => {
                s.pending.note(s.stage, mark);
                Ok(())
            }
            Ok(()) => {
                let started = timing::start();
                let applied = s.stage.apply(mark, txn);
                timing::add(Step::StageApply, started);
                applied
            }
            Err(Rejected) => {
                s.stage.rollback(mark);
                s.outcomes.push(Some(false));
                return Ok(());
            }
        };
        applied?;
        s.outcomes.push(Some(true));
        s.ops.push(start..s.stage.len());
        return Ok(());
    }
}

/// Step 2: the batch's shared writes (counters, statistics), after every request.
fn finish_slots(
    state: &mut BatchState,
    stage: &mut Stage,
    txn: &mut RwTxn,
) -> Result<(), Interrupt> {
    let started = timing::start();
    for (_, slot) in state.slots.iter_mut() {
        let mark = stage.mark();
        slot.finish(View::new(txn), stage)
            .map_err(Interrupt::Failed)?;
        stage.apply(mark, txn)?;
    }
    timing::add(Step::Slots, started);
    Ok(())
}

/// Step 3: with a log, the group's sequence number goes into the same LMDB transaction as its
/// writes, so the state always says which records it holds (replay skips those).
fn stamp_log_seq(shared: &EnvShared, seq: Option<u64>, txn: &mut RwTxn) -> Result<(), Interrupt> {
    if let Some(seq) = seq {
        txn.put(
            shared.core.meta,
            LOG_SEQ_KEY,
            &seq.to_be_bytes(),
            PutFlags::NONE,
        )?;
    }
    Ok(())
}

/// Whether [`commit_durably`] committed.
enum Committed {
    Yes,
    /// LMDB's commit found the map full (no log in use): grow and redo the batch.
    MapFull,
}

/// Step 4: makes the batch durable and visible. With a log: the record is written and synced,
/// then LMDB commits without a sync (see `kv::wal`). A failure once the record is written
/// poisons the environment; the record is then replayed when it is opened again, so a
/// request reported failed may turn out committed (never the reverse).
fn commit_durably(
    shared: &EnvShared,
    txn: RwTxn,
    stage: &Stage,
    seq: Option<u64>,
    checkpointed: bool,
) -> Result<Committed, KvError> {
    match (&shared.core.wal, seq) {
        (Some(wal), Some(seq)) => {
            let logged = match wal.log_group(&shared.core.env, stage, seq, checkpointed) {
                Ok(logged) => logged,
                Err(e) => {
                    txn.abort();
                    return Err(shared.core.poison(e));
                }
            };
            wal.commit(txn, &logged).map_err(|e| {
                shared.core.poison(KvError::CommitFailed {
                    cause: e.to_string(),
                })
            })?;
            wal.after_commit(&shared.core.env, &logged)
                .map_err(|e| shared.core.poison(e))?;
        }
        _ => {
            let flushing = shared.core.flush_ahead(stage.len());
            let started = timing::start();
            let committed = txn.commit();
            timing::add(Step::LmdbCommit, started);
            drop(flushing);
            match committed {
                Ok(()) => {}
                Err(e) if is_map_full(&e) => return Ok(Committed::MapFull),
                Err(e) => {
                    return Err(shared.core.poison(KvError::CommitFailed {
                        cause: e.to_string(),
                    }))
                }
            }
        }
    }
    // Writes into a part of the map the file no longer backs went nowhere.
    if let Some(e) = shared.core.shrink_error() {
        return Err(shared.core.poison(KvError::CommitFailed {
            cause: e.to_string(),
        }));
    }
    Ok(Committed::Yes)
}

/// Writes the batch's pending ops (all of them, sorted together) into LMDB.
fn apply_pending(
    pending: &mut Pending,
    stage: &mut Stage,
    txn: &mut RwTxn,
) -> Result<(), LmdbError> {
    if let Some(from) = pending.from() {
        let started = timing::start();
        let applied = stage.apply(from, txn);
        timing::add(Step::StageApply, started);
        applied?;
    }
    pending.clear();
    Ok(())
}

impl KvError {
    /// Every request of a failed batch gets its own copy of the batch's error.
    pub(crate) fn clone_for_batch(&self) -> KvError {
        match self {
            KvError::Poisoned { cause } => KvError::Poisoned {
                cause: cause.clone(),
            },
            KvError::CommitFailed { cause } => KvError::CommitFailed {
                cause: cause.clone(),
            },
            KvError::MapLimit { max } => KvError::MapLimit { max: *max },
            KvError::Closed => KvError::Closed,
            KvError::SnapshotBlocksGrowth {
                age_ms,
                open_snapshots,
                waited_ms,
            } => KvError::SnapshotBlocksGrowth {
                age_ms: *age_ms,
                open_snapshots: *open_snapshots,
                waited_ms: *waited_ms,
            },
            other => KvError::CommitFailed {
                cause: other.to_string(),
            },
        }
    }
}
