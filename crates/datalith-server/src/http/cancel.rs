//! Stopping the work of a request whose client has gone. The handler's future is dropped
//! when the connection closes; the query it started runs on a blocking thread and would go
//! on to its timeout. The guard sets the query's cancel flag when dropped, so the query
//! stops within milliseconds (the engine reads the flag every 1024 steps).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets its flag when dropped.
pub struct CancelOnDrop(Arc<AtomicBool>);

impl CancelOnDrop {
    /// A guard with a fresh flag.
    pub fn new() -> Self {
        CancelOnDrop(Arc::new(AtomicBool::new(false)))
    }

    /// A guard that sets `flag`, given by whoever reads it (a query writing an answer that
    /// the guard's holder sends).
    pub fn on(flag: Arc<AtomicBool>) -> Self {
        CancelOnDrop(flag)
    }

    /// The flag, for the query.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        // After a finished request this changes nothing: no one reads the flag any more.
        self.0.store(true, Ordering::Relaxed);
    }
}
