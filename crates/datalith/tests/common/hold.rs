//! Keeping the committer busy, so that requests submitted meanwhile share its next batch.

use datalith::kv::{BatchState, Environment, Outcome, Rejected, Stage, View, WriteRequest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A request that keeps the committer busy for its milliseconds once it runs.
struct Hold(Arc<AtomicBool>, u64);

impl WriteRequest for Hold {
    fn size_hint(&self) -> usize {
        0
    }

    fn prepare(
        &mut self,
        _view: View<'_>,
        _stage: &mut Stage,
        _batch: &mut BatchState,
    ) -> Result<(), Rejected> {
        self.0.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(self.1));
        Ok(())
    }

    fn finish(self: Box<Self>, _outcome: Outcome) {}

    /// It reads nothing: holding the committer leaves deferred writes deferred.
    fn defers_apply(&self) -> bool {
        true
    }
}

/// Returns once the committer is busy (for `ms`) with a batch of its own: requests submitted
/// now queue up and share the next group commit.
pub fn hold_committer(env: &Environment, ms: u64) {
    let started = Arc::new(AtomicBool::new(false));
    env.submit(Box::new(Hold(started.clone(), ms)));
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
}
