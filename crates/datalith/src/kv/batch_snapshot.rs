//! The snapshot a group commit keeps for its requests' reports: the state just before the
//! batch, plus the batch's staged writes, from which the exact state before and after each
//! request is rebuilt on demand as an [`Overlay`].
//!
//! Why before the batch rather than after: replaying writes forward needs nothing but the
//! writes themselves, while undoing them would need what they overwrote (a deleted `giants`
//! record, say), which the stage does not keep.
//!
//! Costs: one read transaction begun per batch (only if a request asks for it, see
//! [`super::WriteRequest::wants_batch_snapshot`]); the batch's stage itself is handed over,
//! not copied, and goes back to a small pool of spare stages when the snapshot is dropped or
//! released, so the committer's next batch stages into warm memory rather than fresh pages
//! (copying or regrowing tens of MB per batch showed as a quarter of the committer's time in
//! page faults). The overlays are built only when a report's `db_before`/`db_after` is asked
//! for.
//!
//! An open snapshot pins LMDB pages and takes a reader slot, and a map growth must wait for
//! every snapshot to close. So the environment keeps these snapshots *releasable*: only the
//! latest `MAX_RETAINED_BATCH_SNAPSHOTS` batches keep theirs, and all are released before the
//! map grows. A database value already built from one holds the snapshot itself (like any
//! `Db`) and is not affected.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use super::core::Release;
use super::overlay::Overlay;
use super::read::Snapshot;
use super::stage::Stage;

/// The state before one group commit and the writes of its requests.
pub struct BatchSnapshot {
    /// `None` once released: both go together, so a released batch holds no memory but
    /// this shell.
    kept: Mutex<Option<Kept>>,
}

struct Kept {
    snapshot: Arc<Snapshot>,
    /// The batch's staged writes: the applied requests' ops in order, then the batch's own
    /// final writes (counters, statistics), which no request's range reaches. Shared with the
    /// batch's unapplied group, if LMDB is written later (`kv::unapplied`).
    stage: Arc<Stage>,
    /// Where the stage goes back when this is dropped.
    spares: Arc<SpareStages>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        // Reused only if nothing else holds it (an unapplied group may).
        if let Ok(stage) = Arc::try_unwrap(std::mem::take(&mut self.stage)) {
            self.spares.give_back(stage);
        }
    }
}

impl BatchSnapshot {
    pub(crate) fn new(
        snapshot: Snapshot,
        stage: Arc<Stage>,
        spares: Arc<SpareStages>,
    ) -> BatchSnapshot {
        BatchSnapshot {
            kept: Mutex::new(Some(Kept {
                snapshot: Arc::new(snapshot),
                stage,
                spares,
            })),
        }
    }

    /// The snapshot of the state before the batch and the writes of the batch's ops
    /// numbered `0..end` (the state after every request whose ops end at or before `end`);
    /// `None` if the batch was released.
    pub fn state_until(&self, end: usize) -> Option<(Arc<Snapshot>, Overlay)> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let k = kept.as_ref()?;
        // From the groups before the batch that LMDB did not hold yet, if any.
        let mut o = k
            .snapshot
            .overlay()
            .map(|o| (**o).clone())
            .unwrap_or_default();
        k.stage
            .for_each_op_in(0..end, |kind, id, table_kind, key, value| {
                o.op(id, table_kind, kind, key, value)
            });
        Some((k.snapshot.clone(), o))
    }
}

/// The environment keeps it releasable (`core::Retained`).
impl Release for BatchSnapshot {
    fn release(&self) {
        let taken = self.kept.lock().unwrap_or_else(|p| p.into_inner()).take();
        // Closed outside the lock.
        drop(taken);
    }
}

/// Where a request's writes sit in its batch's stage: ops `start..end`.
pub type OpRange = Range<usize>;

/// Stages that batch snapshots gave back, for the committer's next batches.
#[derive(Default)]
pub(crate) struct SpareStages {
    stages: Mutex<Vec<Stage>>,
}

impl SpareStages {
    /// A cleared stage, warm if one is spare.
    pub(crate) fn take(&self) -> Stage {
        self.stages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_default()
    }

    fn give_back(&self, mut stage: Stage) {
        stage.clear();
        let mut stages = self.stages.lock().unwrap_or_else(|p| p.into_inner());
        // The committer needs one per batch; a few cover reports that outlive their batch.
        if stages.len() < SPARE_STAGES {
            stages.push(stage);
        }
    }
}

/// Spare stages kept at most (each holds up to `Stage::clear`'s retained capacity).
const SPARE_STAGES: usize = 2;
