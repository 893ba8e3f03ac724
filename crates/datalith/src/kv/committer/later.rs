//! The committer's batch when LMDB is written later (`kv::unapplied`): no LMDB write
//! transaction is opened. Each request is prepared against the newest LMDB snapshot plus an
//! overlay of every group not yet in LMDB and of the batch's requests before it; the group
//! is logged and synced, then published, and only then acknowledged.
//!
//! A large batch (`LATER_MAX_BATCH_BYTES`; or too large for the log), or one that finds no
//! reader slot for its snapshot, takes the ordinary path instead, once every unapplied group is
//! in LMDB.

use std::sync::Arc;

use super::super::env::EnvShared;
use super::super::error::KvError;
use super::super::overlay::Overlay;
use super::super::read::ReadTxn;
use super::super::stage::{Mark, Stage};
use super::super::unapplied::{commit_stage, Group, Lazy, Unapplied};
use super::super::wal::Logged;
use super::{BatchState, Rejected, Runner};
use crate::limits::{LATER_MAX_BATCH_BYTES, LATER_OVERLAP_MIN_OPS};

/// What the groups not yet in LMDB wrote, as the committer reads it: the published groups
/// since it was last built, then the running batch's accepted requests.
#[derive(Default)]
pub(crate) struct Working {
    overlay: Overlay,
    /// The version it was built from (`Unapplied::applied_txnid`); `None`: empty.
    base: Option<usize>,
}

impl Working {
    /// Empties it; a large overlay is dropped on the applier thread.
    fn reset(&mut self, lazy: &Lazy) {
        lazy.discard(std::mem::take(&mut self.overlay));
        self.base = None;
    }

    /// Rebuilt from `version` when the applier has moved on since it was built (else it
    /// already holds exactly the version's groups: the committer published each of them).
    fn catch_up(&mut self, version: Option<&Arc<Unapplied>>, lazy: &Lazy) {
        let started = super::timing::start();
        match version {
            None => self.reset(lazy),
            Some(v) if self.base == Some(v.applied_txnid()) => {}
            Some(v) => {
                let fresh = lazy.overlay_for_committer(v);
                lazy.discard(std::mem::replace(&mut self.overlay, fresh));
                self.base = Some(v.applied_txnid());
            }
        }
        super::timing::add(super::Step::CatchUp, started);
    }

    /// Adds the ops `stage` holds from op `from` on.
    fn add(&mut self, stage: &Stage, from: usize) {
        let started = super::timing::start();
        let o = &mut self.overlay;
        stage.for_each_op_in(from..stage.len(), |kind, id, table_kind, key, value| {
            o.op(id, table_kind, kind, key, value)
        });
        super::timing::add(super::Step::WorkingAdd, started);
    }
}

/// What a batch run here gives back: the snapshot before it (when asked for) and its stage,
/// shared with its unapplied group.
pub(super) type Done = (Option<ReadTxn>, Arc<Stage>);

/// Runs the batch with LMDB written later, if this environment does so; `None` sends it down
/// the ordinary path (every unapplied group is then in LMDB already).
pub(super) fn commit_batch_later(
    r: &mut Runner,
    shared: &Arc<EnvShared>,
    want: bool,
) -> Option<Result<Done, KvError>> {
    let (Some(lazy), Some(wal)) = (shared.lazy.as_ref(), shared.wal.as_ref()) else {
        return None;
    };
    if let Some(cause) = shared.poison_cause() {
        return Some(Err(KvError::Poisoned { cause }));
    }
    let large = r.bytes > LATER_MAX_BATCH_BYTES
        || r.bytes as u64 >= wal.largest_record() / 2
        || r.batch.iter().any(|q| !q.may_apply_later());
    let before = match large {
        true => None,
        false => ReadTxn::try_begin(shared.clone()),
    };
    let Some(before) = before else {
        r.working.reset(lazy);
        return lazy.apply_all(shared).err().map(Err);
    };
    r.working.catch_up(before.unapplied(), lazy);
    r.stage.clear();
    r.outcomes.clear();
    r.ops.clear();
    let mut state = BatchState::default();
    // The ops staged but not yet in the working overlay start here: each request reads every
    // earlier one's, but the batch's last writes are added while the disk writes its record.
    let mut unadded = Mark::START;
    for req in r.batch.iter_mut() {
        r.working.add(&r.stage, unadded.ops());
        unadded = r.stage.mark();
        let mark = unadded;
        let view = before.raw_view().with_overlay(&r.working.overlay);
        let started = super::timing::start();
        let prepared = req.prepare(view, &mut r.stage, &mut state);
        super::timing::add(super::Step::Prepare, started);
        match prepared {
            Ok(()) => {
                r.outcomes.push(Some(true));
                r.ops.push(mark.ops()..r.stage.len());
            }
            Err(Rejected) => {
                r.stage.rollback(mark);
                r.outcomes.push(Some(false));
            }
        }
    }
    if let Err(e) = finish_slots(r, &before, &mut state, &mut unadded) {
        return Some(Err(shared.poison(e)));
    }
    if shared.take_injected_failure() {
        return Some(Err(shared.poison(KvError::CommitFailed {
            cause: "injected failure".into(),
        })));
    }
    if r.stage.is_empty() {
        // Nothing to make durable (every request was rejected or wrote nothing).
        return Some(Ok((want.then_some(before), Arc::new(r.take_stage(shared)))));
    }
    let seq = lazy.last_seq().map_or_else(|| wal.next_seq(), |s| s + 1);
    // Few ops are added faster than starting the record's write-back costs.
    let overlap = r.stage.len() - unadded.ops() >= LATER_OVERLAP_MIN_OPS;
    if !overlap {
        r.working.add(&r.stage, unadded.ops());
    }
    let (working, stage) = (&mut r.working, &r.stage);
    let meanwhile = overlap.then_some(|| working.add(stage, unadded.ops()));
    let logged = match wal.log_group(&shared.env, &r.stage, seq, meanwhile) {
        Ok(logged) => logged,
        Err(e) => return Some(Err(shared.poison(e))),
    };
    if logged.is_direct() {
        // Too large for the log after all: LMDB gets every unapplied group, then this one,
        // now (applying may grow the map, which waits for every snapshot: ours goes first).
        drop(before);
        r.working.reset(lazy);
        let written = lazy
            .apply_all(shared)
            .and_then(|()| write_now(shared, &mut r.stage, seq, &logged));
        return Some(written.map(|()| (None, Arc::new(r.take_stage(shared)))));
    }
    let stage = Arc::new(r.take_stage(shared));
    lazy.publish(Group::new(seq, stage.clone(), logged));
    Some(Ok((want.then_some(before), stage)))
}

/// The batch's shared writes, after every request. A slot reads the state after every
/// request, but the ops from `unadded` on are not in the working overlay yet: its reads fail
/// where they may meet them (`kv::pending`), and it then runs again with them added.
fn finish_slots(
    r: &mut Runner,
    before: &ReadTxn,
    state: &mut BatchState,
    unadded: &mut Mark,
) -> Result<(), KvError> {
    r.pending.clear();
    r.pending.note(&r.stage, *unadded);
    for (_, slot) in state.slots.iter_mut() {
        loop {
            let mark = r.stage.mark();
            let view = before
                .raw_view()
                .with_overlay(&r.working.overlay)
                .with_pending(&r.pending);
            let finished = slot.finish(view, &mut r.stage);
            if r.pending.take_hit() {
                r.stage.rollback(mark);
                r.pending.clear();
                r.working.add(&r.stage, unadded.ops());
                *unadded = r.stage.mark();
                continue;
            }
            if let Err(e) = finished {
                r.pending.clear();
                return Err(e);
            }
            r.pending.note(&r.stage, mark);
            break;
        }
    }
    r.pending.clear();
    Ok(())
}

/// Writes a group that skipped the log into LMDB and checkpoints it.
fn write_now(
    shared: &EnvShared,
    stage: &mut Stage,
    seq: u64,
    logged: &Logged,
) -> Result<(), KvError> {
    let wal = shared.wal.as_ref().expect("only with a log");
    commit_stage(shared, stage, seq, logged, true)?;
    wal.after_commit(&shared.env, logged)
        .map_err(|e| shared.poison(e))?;
    shared.after_commit();
    Ok(())
}
