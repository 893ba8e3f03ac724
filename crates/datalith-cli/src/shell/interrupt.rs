//! Ctrl-C while a query runs. The line editor reads keys in raw mode, where Ctrl-C is a key,
//! not a signal; while a query runs the terminal is back in cooked mode and Ctrl-C sends
//! SIGINT. The handler only sets a flag, which `q_cancellable` polls; the query then stops
//! with `Cancelled` and the session goes on.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT; cleared before each query.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    CANCEL.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT handler (once, for the interactive shell).
pub fn install() {
    // SAFETY: `sigaction` with a zeroed struct, an empty mask and a handler that performs only
    // an atomic store, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0;
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Clears the flag before a query starts.
pub fn reset() {
    CANCEL.store(false, Ordering::SeqCst);
}
