//! Running the database's work without the GIL, and Ctrl-C.
//!
//! A query runs on the caller's thread with the GIL released. Now and then (at most every
//! [`SIGNAL_LOOK`], when the query's budget looks at its limits) it takes the GIL back for a
//! moment and asks Python whether a signal arrived: only a thread holding the GIL may ask,
//! and only the main thread receives them. When the handler raises (`KeyboardInterrupt` on
//! Ctrl-C), the query stops as cancelled and the handler's exception is raised in its place.
//! No thread is started per call: a small query costs what it costs in Rust.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// How often a running query asks for signals: Ctrl-C takes effect within about this.
const SIGNAL_LOOK: Duration = Duration::from_millis(20);

/// Runs `work` without the GIL, giving it the question "stop now?" to ask as it goes; returns
/// its result, or the signal handler's exception if one was raised meanwhile.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&(dyn Fn() -> bool + Sync)) -> T + Send,
) -> PyResult<T> {
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let last_look = Mutex::new(Instant::now());
    let ask = || {
        let mut last = last_look.lock().unwrap_or_else(|p| p.into_inner());
        if last.elapsed() < SIGNAL_LOOK {
            return false;
        }
        *last = Instant::now();
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                true
            }
        })
    };
    let out = py.detach(|| work(&ask));
    match raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
