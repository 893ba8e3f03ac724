//! The committer's batch when LMDB is written later (`kv::unapplied`): no LMDB write
//! transaction is opened. Each request is prepared against the newest LMDB snapshot plus the
//! writes of every group not yet in LMDB and of the batch's requests before it ([`Working`]:
//! an overlay, and the bounds of the list-table writes it defers); the group is logged and
//! synced, then published, and only then acknowledged.
//!
//! A large batch that does not defer (`LATER_MAX_BATCH_BYTES`; or one too large for the log),
//! or one that finds no
//! reader slot for its snapshot, takes the ordinary path instead, once every unapplied group is
//! in LMDB.

use std::sync::Arc;

use super::super::error::KvError;
use super::super::overlay::Overlay;
use super::super::pending::Pending;
use super::super::read::ReadTxn;
use super::super::shared::EnvShared;
use super::super::stage::Stage;
use super::super::unapplied::{commit_stage, Group, Lazy, Unapplied};
use super::super::view::View;
use super::super::wal::Logged;
use super::{BatchState, Rejected, Runner};
use crate::limits::{LATER_MAX_BATCH_BYTES, STAGE_HAND_OVER_BYTES};

/// What the groups not yet in LMDB wrote, as the committer reads it: the published groups
/// since it was last built, then the running batch's accepted requests.
///
/// Their list-table writes (EAV and AVE: nearly all of a transaction's) are not added to the
/// overlay when they are taken, only their keys' bounds (`kv::pending`): a request's reads
/// fail where they may meet one, and the deferred writes are then added and the request runs
/// again. Most reads never meet them (a new entity's id, a unique value never seen), and
/// adding each write to a large ordered map was the committer's largest cost after its sync
/// (W sync batch 1000: 1.8 of 4.3 ms a group). After a read met them, the next
/// `EAGER_BATCHES` batches add everything at once, so that a workload whose reads keep meeting
/// them (upserts of existing keys) does not run every batch's first request twice. The writes
/// of a plain table no writer reads (the Datalog transaction log, `Table::unread_by_writers`)
/// are deferred the same way: adding each transaction's entry to the ordered map was ~7% of
/// the committer's samples in W async at batch 1 (3 alternating pairs of 8 s runs,
/// before/after: 131,186/130,732, 139,729/155,228, 133,325/151,816 writes/s). Other plain-table writes (counters,
/// statistics: read by nearly every batch) are always added.
#[derive(Default)]
pub(crate) struct Working {
    overlay: Overlay,
    /// The version it was built from (`Unapplied::applied_txnid`); `None`: empty.
    base: Option<usize>,
    /// Published groups whose deferrable writes from an op on are not in `overlay`, in order.
    deferred: Vec<(Arc<Stage>, usize)>,
    /// The running batch's deferrable writes from this op on are not in `overlay`.
    batch_deferred: Option<usize>,
    /// Bounds of every deferred key.
    bounds: Pending,
    /// Batches left that add everything (a read met deferred writes lately).
    eager_for: u32,
    /// Whether the running batch defers (not while `eager_for`, nor when one of its requests
    /// cannot: it would add them all before it reads anyway).
    defers: bool,
}

/// See [`Working`]: batches that add every write after a read met deferred ones.
const EAGER_BATCHES: u32 = 16;

impl Working {
    /// Empties it; a large overlay is dropped on the applier thread.
    fn reset(&mut self, lazy: &Lazy) {
        lazy.discard(std::mem::take(&mut self.overlay));
        self.base = None;
        self.forget_deferred();
    }

    fn forget_deferred(&mut self) {
        self.deferred.clear();
        self.batch_deferred = None;
        self.bounds.clear();
    }

    /// Rebuilt from `version` when the applier has moved on since it was built (else it
    /// already holds exactly the version's groups: the committer published each of them);
    /// `defers`: every request of the batch about to run may read past deferred writes.
    fn catch_up(&mut self, version: Option<&Arc<Unapplied>>, lazy: &Lazy, defers: bool) {
        let started = super::timing::start();
        self.eager_for = self.eager_for.saturating_sub(1);
        self.defers = defers && self.eager_for == 0;
        match version {
            None => self.reset(lazy),
            Some(v) if self.base == Some(v.applied_txnid()) => {}
            Some(v) => {
                let fresh = lazy.overlay_for_committer(v);
                lazy.discard(std::mem::replace(&mut self.overlay, fresh.overlay));
                self.forget_deferred();
                if let Some((bounds, groups)) = fresh.deferred {
                    // The refold's list-table writes, deferred by the applier.
                    lazy.spare_bounds(std::mem::replace(&mut self.bounds, bounds));
                    self.deferred = groups.into_iter().map(|g| (g.stage.clone(), 0)).collect();
                }
                self.add_deferred_unless_deferring();
                for g in fresh.rest {
                    self.take(&g.stage, 0);
                    self.seal(&g.stage);
                }
                self.base = Some(v.applied_txnid());
            }
        }
        self.add_deferred_unless_deferring();
        lazy.set_committer_defers(self.defers);
        super::timing::add(super::Step::CatchUp, started);
    }

    /// A batch that does not defer adds its writes as they come: the deferred ones of earlier
    /// batches go first, so that each table's writes reach the overlay in order.
    fn add_deferred_unless_deferring(&mut self) {
        if !self.defers && !self.deferred.is_empty() {
            // Between batches: the batch has deferred nothing yet.
            debug_assert!(self.batch_deferred.is_none());
            self.materialize_published();
            self.bounds.clear();
        }
    }

    /// Whether the next batch defers, if its requests may (`catch_up` counts it down).
    fn will_defer(&self) -> bool {
        self.eager_for <= 1
    }

    /// Takes the writes `stage` holds from op `from` on: adds them to the overlay, or, for a
    /// deferrable write while deferring (`Stage::for_each_kept_op_in`), records its key's
    /// bounds.
    fn take(&mut self, stage: &Stage, from: usize) {
        let started = super::timing::start();
        let o = &mut self.overlay;
        let deferred = stage.for_each_kept_op_in(
            from..stage.len(),
            self.defers,
            |kind, id, table_kind, key, value| o.op(id, table_kind, kind, key, value),
        );
        if deferred {
            // A second pass, not a collected list: a batch of 30,000 writes has ~120,000
            // list keys, and growing a vector of them faulted in fresh pages every batch.
            // Measured and dropped: noting the batch's last request's keys on a scoped thread
            // while the group's record is written and synced (W sync at batch 1000, 8
            // alternating pairs, ahead in 3; both cores are busy there, so the noting only
            // moved to the core the applier needs).
            self.bounds
                .note_keys(stage.deferrable_keys_in(from..stage.len()));
            self.batch_deferred.get_or_insert(from);
        }
        super::timing::add(super::Step::WorkingAdd, started);
    }

    /// The running batch's stage becomes the published `stage`: its deferred writes stay
    /// deferred.
    fn seal(&mut self, stage: &Arc<Stage>) {
        if let Some(f) = self.batch_deferred.take() {
            self.deferred.push((stage.clone(), f));
        }
    }

    /// Adds every deferred write to the overlay (a read met one); `stage` is the running
    /// batch's, holding only taken writes.
    fn materialize(&mut self, stage: &Stage) {
        let started = super::timing::start();
        self.materialize_published();
        if let Some(f) = self.batch_deferred.take() {
            add_deferred(&mut self.overlay, stage, f);
        }
        self.bounds.clear();
        super::timing::add(super::Step::WorkingAdd, started);
    }

    /// A read met deferred writes: adds them, and everything for the next batches.
    fn met_deferred(&mut self, stage: &Stage) {
        self.materialize(stage);
        self.defers = false;
        self.eager_for = EAGER_BATCHES;
    }

    /// Adds the published groups' deferred writes to the overlay; the caller clears the
    /// bounds once nothing is deferred.
    fn materialize_published(&mut self) {
        for (s, from) in self.deferred.drain(..) {
            add_deferred(&mut self.overlay, &s, from);
        }
    }

    /// The committer's view: `raw` with the overlay, failing reads that may meet a deferred
    /// write.
    fn view<'t>(&'t self, raw: View<'t>) -> View<'t> {
        let view = raw.with_overlay(&self.overlay);
        match self.bounds.is_empty() {
            true => view,
            false => view.with_pending(&self.bounds),
        }
    }

    /// Whether a read met deferred writes since the last call.
    fn take_hit(&self) -> bool {
        self.bounds.take_hit()
    }
}

/// Adds `stage`'s deferrable writes (list tables', and those of tables no writer reads) from
/// op `from` on to `overlay`.
fn add_deferred(overlay: &mut Overlay, stage: &Stage, from: usize) {
    stage.for_each_deferrable_op_in(from..stage.len(), |kind, id, table_kind, key, value| {
        overlay.op(id, table_kind, kind, key, value)
    })
}

/// What a batch run here gives back: the snapshot before it (when asked for) and its stage,
/// shared with its unapplied group.
pub(super) type Done = (Option<ReadTxn>, Arc<Stage>);

/// A request read past a deferred write and went on (breaking `WriteRequest::defers_apply`'s
/// promise): the batch starts over on the ordinary path.
struct BrokenPromise;

/// Runs the batch with LMDB written later, if this environment does so; `None` sends it down
/// the ordinary path (every unapplied group is then in LMDB already).
pub(super) fn commit_batch_later(
    r: &mut Runner,
    shared: &Arc<EnvShared>,
    want: bool,
) -> Option<Result<Done, KvError>> {
    let (Some(lazy), Some(wal)) = (shared.lazy.as_ref(), shared.core.wal.as_ref()) else {
        return None;
    };
    if let Some(cause) = shared.core.poison_cause() {
        return Some(Err(KvError::Poisoned { cause }));
    }
    // Before any snapshot is taken: the writer may need every snapshot closed to grow the map.
    lazy.wait_for_backlog();
    let defers = r.batch.iter().all(|q| q.defers_apply());
    // A batch that defers its list writes costs the committer's overlay little per op,
    // however large (`LATER_MAX_BATCH_BYTES`).
    let large = (r.bytes > LATER_MAX_BATCH_BYTES && !(defers && r.working.will_defer()))
        || r.bytes as u64 >= wal.largest_record() / 2
        || r.batch.iter().any(|q| !q.may_apply_later());
    let before = match large {
        true => None,
        false => ReadTxn::try_begin(shared.clone()),
    };
    let Some(before) = before else {
        r.working.reset(lazy);
        return lazy.apply_all(&shared.core).err().map(Err);
    };
    r.working.catch_up(before.unapplied(), lazy, defers);
    r.stage.clear();
    r.outcomes.clear();
    r.ops.clear();
    let mut state = BatchState::default();
    let prepared = prepare_all(r, &before, &mut state)
        .and_then(|()| finish_slots(r, &before, &mut state).map_err(Ok));
    match prepared {
        Ok(()) => {}
        Err(Ok(e)) => return Some(Err(shared.core.poison(e))),
        Err(Err(BrokenPromise)) => {
            // The overlay holds some of this batch's writes: rebuilt at the next batch.
            drop(before);
            r.working.reset(lazy);
            r.stage.clear();
            return lazy.apply_all(&shared.core).err().map(Err);
        }
    }
    if shared.core.take_injected_failure() {
        return Some(Err(shared.core.poison(KvError::CommitFailed {
            cause: "injected failure".into(),
        })));
    }
    if r.stage.is_empty() {
        // Nothing to make durable (every request was rejected or wrote nothing).
        return Some(Ok((want.then_some(before), Arc::new(r.take_stage()))));
    }
    let seq = lazy.last_seq().map_or_else(|| wal.next_seq(), |s| s + 1);
    let logged = match wal.log_group(&shared.core.env, &r.stage, seq, false) {
        Ok(logged) => logged,
        Err(e) => return Some(Err(shared.core.poison(e))),
    };
    if logged.is_direct() {
        // Too large for the log after all: LMDB gets every unapplied group, then this one,
        // now (applying may grow the map, which waits for every snapshot: ours goes first).
        shared.core.stats.record_direct_batch();
        drop(before);
        r.working.reset(lazy);
        let written = lazy
            .apply_all(&shared.core)
            .and_then(|()| write_now(shared, &mut r.stage, seq, &logged));
        return Some(written.map(|()| (None, Arc::new(r.take_stage()))));
    }
    // The group keeps a compact copy and the committer its own stage, grown to its largest
    // batch, for the next. Handing the stage itself over left the committer a fresh one to
    // allocate every batch, since a group holds its stage until LMDB has it (W sync, code
    // before/after, alternating pairs: b1 8,632/9,013, 8,561/8,846, 8,616/8,188, 7,666/8,644
    // writes/s; b100 262,034/356,992, 349,075/350,940, 317,485/331,740; peak RSS at b1
    // 221/83 MB).
    // A large stage (a bulk load, a transaction of many datoms) is handed over whole: copying
    // it costs more than the next large batch's fresh stage.
    let stage = match r.stage.staged_bytes() > STAGE_HAND_OVER_BYTES {
        true => Arc::new(std::mem::take(&mut r.stage)),
        false => Arc::new(r.stage.compact()),
    };
    r.stage.clear();
    r.working.seal(&stage);
    lazy.publish(Group::new(seq, stage.clone(), logged));
    Some(Ok((want.then_some(before), stage)))
}

/// Prepares each request of the batch in order against the state after every earlier one.
fn prepare_all(
    r: &mut Runner,
    before: &ReadTxn,
    state: &mut BatchState,
) -> Result<(), Result<KvError, BrokenPromise>> {
    for req in r.batch.iter_mut() {
        if !req.defers_apply() {
            // It reads without failing: everything before it must be in the overlay.
            r.working.materialize(&r.stage);
        }
        loop {
            let mark = r.stage.mark();
            let view = r.working.view(before.raw_view());
            let started = super::timing::start();
            let prepared = req.prepare(view, &mut r.stage, state);
            super::timing::add(super::Step::Prepare, started);
            let hit = r.working.take_hit();
            match prepared {
                Err(Rejected) if hit => {
                    r.stage.rollback(mark);
                    r.working.met_deferred(&r.stage);
                    continue;
                }
                Ok(()) if hit => return Err(Err(BrokenPromise)),
                Ok(()) => {
                    r.outcomes.push(Some(true));
                    r.ops.push(mark.ops()..r.stage.len());
                    r.working.take(&r.stage, mark.ops());
                }
                Err(Rejected) => {
                    r.stage.rollback(mark);
                    r.outcomes.push(Some(false));
                }
            }
            break;
        }
    }
    Ok(())
}

/// The batch's shared writes, after every request: a slot reads the state after all of them
/// (and after the slots before it), through the same deferral as a request.
fn finish_slots(r: &mut Runner, before: &ReadTxn, state: &mut BatchState) -> Result<(), KvError> {
    for (_, slot) in state.slots.iter_mut() {
        loop {
            let mark = r.stage.mark();
            let view = r.working.view(before.raw_view());
            let finished = slot.finish(view, &mut r.stage);
            if r.working.take_hit() {
                r.stage.rollback(mark);
                r.working.met_deferred(&r.stage);
                continue;
            }
            finished?;
            r.working.take(&r.stage, mark.ops());
            break;
        }
    }
    Ok(())
}

/// Writes a group that skipped the log into LMDB and checkpoints it.
fn write_now(
    shared: &EnvShared,
    stage: &mut Stage,
    seq: u64,
    logged: &Logged,
) -> Result<(), KvError> {
    let wal = shared.core.wal.as_ref().expect("only with a log");
    commit_stage(&shared.core, stage, seq, logged, true)?;
    wal.after_commit(&shared.core.env, logged)
        .map_err(|e| shared.core.poison(e))?;
    shared.core.after_commit();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::pending::{Hi, Lo};
    use crate::kv::table::TableKind;
    use crate::kv::wal::Logged;
    use std::time::Duration;

    fn list() -> crate::kv::Table {
        crate::kv::Table::for_test("l", 2, TableKind::List)
    }

    fn key(seq: u64) -> [u8; 9] {
        [seq as u8, 0, 0, 0, 0, 0, 0, 0, 1]
    }

    fn group(seq: u64) -> Group {
        let mut stage = Stage::default();
        stage.list_add(&list(), &key(seq), b"v");
        Group::new(seq, Arc::new(stage), Logged::for_test(seq, seq * 100, 100))
    }

    fn listed(w: &Working) -> Vec<Vec<u8>> {
        match w.overlay.table(2) {
            Some(crate::kv::overlay::TableOverlay::List(m)) => {
                m.all_pairs().map(|(k, _, _)| k.to_vec()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// A deferring committer caught up after this: groups 1..=3 published (made by `group`),
    /// the applier wrote group 1 and refolded 2 and 3, then `later` (if any) was published.
    fn refolded(group: &dyn Fn(u64) -> Group, later: Option<Group>) -> Working {
        let lazy = Lazy::new(Duration::from_secs(3600), false);
        lazy.set_committer_defers(true);
        for seq in 1..=3 {
            lazy.publish(group(seq));
        }
        lazy.refold_after(1, 7);
        lazy.trim(1, 7);
        if let Some(g) = later {
            lazy.publish(g);
        }
        let mut w = Working::default();
        w.catch_up(Some(&lazy.current()), &lazy, true);
        w
    }

    #[test]
    fn after_an_apply_the_committer_defers_the_refolded_writes_and_adds_them_when_read() {
        // Group 4 came after the refold.
        let mut w = refolded(&group, Some(group(4)));
        assert!(listed(&w).is_empty(), "every list write deferred");
        for seq in 2..=4 {
            let k = key(seq);
            let read = w.bounds.check(&list(), Lo::Key(&k), Hi::Key(&k));
            assert!(read.is_err(), "a read of group {seq}'s key meets its write");
        }
        w.met_deferred(&Stage::default());
        assert_eq!(
            listed(&w),
            vec![key(2).to_vec(), key(3).to_vec(), key(4).to_vec()]
        );
        assert!(w.bounds.is_empty() && !w.defers && w.eager_for == EAGER_BATCHES);
    }

    fn plain_keys(w: &Working, id: u32) -> Vec<Vec<u8>> {
        match w.overlay.table(id) {
            Some(crate::kv::overlay::TableOverlay::Plain(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// A table no writer reads is held back like a list table, through the refold (groups 2
    /// and 3) and as the committer takes a group (4), and added when a read meets it; other
    /// plain tables are added at once.
    #[test]
    fn the_writes_of_a_table_no_writer_reads_wait_as_bounds_until_a_read_meets_one() {
        let plain = crate::kv::Table::for_test("p", 1, TableKind::Plain);
        let log = crate::kv::Table::for_test("g", 3, TableKind::Plain).unread_by_writers();
        let group = |seq: u64| {
            let mut stage = Stage::default();
            stage.put(&plain, &key(seq), b"counter");
            stage.list_add(&list(), &key(seq), b"v");
            stage.put(&log, &key(seq), b"entry");
            Group::new(seq, Arc::new(stage), Logged::for_test(seq, seq * 100, 100))
        };
        let mut w = refolded(&group, None);
        let g4 = group(4);
        w.take(&g4.stage, 0);
        let all = |seqs: std::ops::RangeInclusive<u64>| -> Vec<Vec<u8>> {
            seqs.map(|s| key(s).to_vec()).collect()
        };
        assert_eq!(plain_keys(&w, 1), all(2..=4), "plain writes added at once");
        assert!(plain_keys(&w, 3).is_empty(), "the log's writes held back");
        assert!(listed(&w).is_empty(), "list writes held back");
        for seq in 2..=4 {
            let k = key(seq);
            let read = w.bounds.check(&log, Lo::Key(&k), Hi::Key(&k));
            assert!(
                read.is_err(),
                "a read of group {seq}'s log key meets its write"
            );
        }
        w.met_deferred(&g4.stage);
        assert_eq!(plain_keys(&w, 3), all(2..=4), "added once a read met one");
        assert_eq!(listed(&w), all(2..=4));
    }
}
