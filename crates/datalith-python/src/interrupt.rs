//! Running the database's work without the GIL, and Ctrl-C.
//!
//! A query runs on a thread of its own while the caller's thread, between short waits, asks
//! Python whether a signal arrived (only a thread holding the GIL may, and only the main
//! thread receives them): on `KeyboardInterrupt` it raises the query's cancellation flag,
//! waits for the query to stop (it checks the flag as it goes) and raises the interrupt.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use pyo3::prelude::*;

/// How often a waiting caller looks for signals: Ctrl-C takes effect within about this.
const SIGNAL_LOOK: Duration = Duration::from_millis(50);

/// Set when the work ends, however it ends (a panic included: the flag is set on drop).
#[derive(Default)]
struct Done {
    ended: Mutex<bool>,
    wake: Condvar,
}

struct SetOnDrop<'a>(&'a Done);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        *self.0.ended.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.0.wake.notify_all();
    }
}

impl Done {
    /// Waits up to `SIGNAL_LOOK`; whether the work has ended.
    fn wait(&self) -> bool {
        let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        let (ended, _) = self
            .wake
            .wait_timeout_while(ended, SIGNAL_LOOK, |ended| !*ended)
            .unwrap_or_else(|p| p.into_inner());
        *ended
    }
}

/// Runs `work` (given the cancellation flag) without the GIL, cancelling it if a signal
/// handler raises meanwhile (Ctrl-C); returns its result, or the handler's exception.
pub(crate) fn cancellable<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let done = Done::default();
    std::thread::scope(|scope| {
        let (cancel, done) = (&cancel, &done);
        let worker = scope.spawn(move || {
            let _set = SetOnDrop(done);
            work(cancel)
        });
        while !py.detach(|| done.wait()) {
            if let Err(signal) = py.check_signals() {
                cancel.store(true, Ordering::Release);
                // The work stops at its next check of the flag; its result is dropped.
                let _ = py.detach(|| worker.join());
                return Err(signal);
            }
        }
        py.detach(|| worker.join())
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the query's thread panicked"))
    })
}
