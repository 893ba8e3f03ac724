//! The reader gate: counts open read transactions so that (a) LMDB's reader table is never
//! exhausted (a reader past the limit waits instead of failing) and (b) the committer can
//! resize the memory map, which LMDB allows only while no transaction of this process is open.

use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct GateState {
    readers: u32,
    /// Set while the committer wants to resize: new readers wait so a resize cannot starve.
    resizing: bool,
}

/// Admission control for read transactions.
#[derive(Debug)]
pub(crate) struct ReaderGate {
    state: Mutex<GateState>,
    changed: Condvar,
    max_readers: u32,
}

impl ReaderGate {
    pub(crate) fn new(max_readers: u32) -> Self {
        assert!(max_readers > 0);
        ReaderGate {
            state: Mutex::new(GateState::default()),
            changed: Condvar::new(),
            max_readers,
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // A panic while holding this lock cannot leave the counters half-updated (each
        // critical section is a single increment or flag change), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a free reader slot and takes it. Pair with [`ReaderGate::leave`].
    pub(crate) fn enter(&self) {
        let mut s = self.lock();
        while s.resizing || s.readers >= self.max_readers {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.readers += 1;
    }

    /// Takes a free reader slot if there is one right now (never waits): for the committer,
    /// which must not wait for readers that may be waiting for it.
    pub(crate) fn try_enter(&self) -> bool {
        let mut s = self.lock();
        if s.resizing || s.readers >= self.max_readers {
            return false;
        }
        s.readers += 1;
        true
    }

    /// Gives a slot back.
    pub(crate) fn leave(&self) {
        let mut s = self.lock();
        debug_assert!(s.readers > 0, "reader gate: leave without enter");
        s.readers = s.readers.saturating_sub(1);
        drop(s);
        self.changed.notify_all();
    }

    /// Runs `f` while no reader is open, if that is the case right now; returns `None` when
    /// readers are open (an opportunistic resize is simply skipped).
    pub(crate) fn try_exclusive<T>(&self, f: impl FnOnce() -> T) -> Option<T> {
        let s = self.lock();
        if s.readers > 0 || s.resizing {
            return None;
        }
        // Holding the mutex keeps new readers out for the duration of `f`.
        let out = f();
        drop(s);
        Some(out)
    }

    /// Waits until every reader has left (blocking new ones meanwhile), then runs `f`.
    pub(crate) fn exclusive<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut s = self.lock();
        s.resizing = true;
        while s.readers > 0 {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        let out = f();
        s.resizing = false;
        drop(s);
        self.changed.notify_all();
        out
    }

    #[cfg(test)]
    pub(crate) fn open_readers(&self) -> u32 {
        self.lock().readers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn readers_past_the_limit_wait_instead_of_failing() {
        let gate = Arc::new(ReaderGate::new(2));
        gate.enter();
        gate.enter();
        let g2 = gate.clone();
        let t = std::thread::spawn(move || {
            g2.enter();
            g2.leave();
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished(), "third reader must wait for a slot");
        gate.leave();
        t.join().unwrap();
        gate.leave();
        assert_eq!(gate.open_readers(), 0);
    }

    #[test]
    fn exclusive_waits_for_readers_and_try_exclusive_does_not() {
        let gate = Arc::new(ReaderGate::new(8));
        gate.enter();
        assert_eq!(gate.try_exclusive(|| 1), None);
        let g2 = gate.clone();
        let t = std::thread::spawn(move || g2.exclusive(|| 7));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished());
        gate.leave();
        assert_eq!(t.join().unwrap(), 7);
        assert_eq!(gate.try_exclusive(|| 2), Some(2));
    }
}
