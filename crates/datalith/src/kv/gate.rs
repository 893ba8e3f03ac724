//! The reader gate: counts open read transactions so that (a) LMDB's reader table is never
//! exhausted (a reader past the limit waits instead of failing) and (b) the committer can
//! resize the memory map, which LMDB allows only while no transaction of this process is open.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct GateState {
    readers: u32,
    /// Set while the committer wants to resize: new readers wait so a resize cannot starve.
    resizing: bool,
    /// Open snapshots by ticket (tickets grow, so the first entry is the oldest): when each
    /// opened and how many pages the file used then. A held snapshot keeps LMDB from reusing
    /// the pages freed after it, and it blocks map growth; `stat` and the growth error name it.
    open: BTreeMap<u64, (Instant, usize)>,
    next_ticket: u64,
    /// Threads waiting on `changed` (a reader for a slot, a growth for the readers to leave):
    /// a reader leaving wakes them only when there are any. `Condvar::notify_all` makes a
    /// system call whether or not anyone waits, and every snapshot (each query's, each
    /// committed batch's) ends with a `leave`.
    waiting: u32,
}

/// A reader slot taken from the gate; give it back with [`ReaderGate::leave`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) struct Ticket(u64);

/// The oldest snapshot open in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OldestSnapshot {
    /// How long it has been open.
    pub(crate) age: Duration,
    /// Pages the file used when it opened (compare with the pages used now: the file's growth
    /// since is an upper bound of the space it keeps LMDB from reusing).
    pub(crate) used_pages_at_open: usize,
    /// Snapshots open in this process, the oldest included.
    pub(crate) open_snapshots: u32,
}

/// A growth that could not wait any longer for snapshots to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StillOpen(pub(crate) OldestSnapshot);

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

    /// Waits for a free reader slot and takes it; `used_pages` is the file's size in pages
    /// now (for [`ReaderGate::oldest`]). Pair with [`ReaderGate::leave`].
    pub(crate) fn enter(&self, used_pages: usize) -> Ticket {
        let mut s = self.lock();
        while s.resizing || s.readers >= self.max_readers {
            s.waiting += 1;
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
            s.waiting -= 1;
        }
        Self::admit(&mut s, used_pages)
    }

    /// Takes a free reader slot if there is one right now (never waits): for the committer,
    /// which must not wait for readers that may be waiting for it.
    pub(crate) fn try_enter(&self, used_pages: usize) -> Option<Ticket> {
        let mut s = self.lock();
        if s.resizing || s.readers >= self.max_readers {
            return None;
        }
        Some(Self::admit(&mut s, used_pages))
    }

    fn admit(s: &mut GateState, used_pages: usize) -> Ticket {
        s.readers += 1;
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.open.insert(ticket, (Instant::now(), used_pages));
        debug_assert_eq!(s.open.len(), s.readers as usize);
        Ticket(ticket)
    }

    /// Gives a slot back.
    pub(crate) fn leave(&self, ticket: Ticket) {
        let mut s = self.lock();
        debug_assert!(s.readers > 0, "reader gate: leave without enter");
        let known = s.open.remove(&ticket.0).is_some();
        debug_assert!(known, "reader gate: a ticket given back twice");
        s.readers = s.readers.saturating_sub(1);
        let anyone_waits = s.waiting > 0;
        drop(s);
        if anyone_waits {
            self.changed.notify_all();
        }
    }

    /// The oldest snapshot open now, if any.
    pub(crate) fn oldest(&self) -> Option<OldestSnapshot> {
        Self::oldest_of(&self.lock())
    }

    fn oldest_of(s: &GateState) -> Option<OldestSnapshot> {
        let (_, (since, used)) = s.open.first_key_value()?;
        Some(OldestSnapshot {
            age: since.elapsed(),
            used_pages_at_open: *used,
            open_snapshots: s.readers,
        })
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

    /// Waits until every reader has left (blocking new ones meanwhile), then runs `f`; gives
    /// up after `patience`, letting the waiting readers in again, and names the oldest
    /// snapshot that was still open. A snapshot held for a long report must delay a growth,
    /// never stop every writer and reader behind it for good.
    pub(crate) fn exclusive<T>(
        &self,
        patience: Duration,
        f: impl FnOnce() -> T,
    ) -> Result<T, StillOpen> {
        let deadline = Instant::now() + patience;
        let mut s = self.lock();
        s.resizing = true;
        while s.readers > 0 {
            let now = Instant::now();
            if now >= deadline {
                let oldest = Self::oldest_of(&s).expect("a reader is open");
                s.resizing = false;
                drop(s);
                self.changed.notify_all();
                return Err(StillOpen(oldest));
            }
            s.waiting += 1;
            s = self
                .changed
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            s.waiting -= 1;
        }
        let out = f();
        s.resizing = false;
        drop(s);
        self.changed.notify_all();
        Ok(out)
    }

    /// Whether a growth of the map waits for the open readers to leave (new ones wait too):
    /// whoever holds a snapshot only by choice should let it go.
    pub(crate) fn growth_waiting(&self) -> bool {
        self.lock().resizing
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
        let a = gate.enter(1);
        let b = gate.enter(1);
        let g2 = gate.clone();
        let t = std::thread::spawn(move || {
            let c = g2.enter(1);
            g2.leave(c);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished(), "third reader must wait for a slot");
        gate.leave(a);
        t.join().unwrap();
        gate.leave(b);
        assert_eq!(gate.open_readers(), 0);
    }

    #[test]
    fn exclusive_waits_for_readers_and_try_exclusive_does_not() {
        let gate = Arc::new(ReaderGate::new(8));
        let a = gate.enter(1);
        assert_eq!(gate.try_exclusive(|| 1), None);
        assert!(!gate.growth_waiting());
        let g2 = gate.clone();
        let t = std::thread::spawn(move || g2.exclusive(Duration::from_secs(60), || 7));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished());
        // Holders of snapshots kept by choice can see the growth waiting for them.
        assert!(gate.growth_waiting());
        gate.leave(a);
        assert_eq!(t.join().unwrap(), Ok(7));
        assert!(!gate.growth_waiting());
        assert_eq!(gate.try_exclusive(|| 2), Some(2));
    }

    #[test]
    fn exclusive_gives_up_on_a_held_snapshot_and_lets_waiting_readers_in() {
        let gate = Arc::new(ReaderGate::new(8));
        let held = gate.enter(10);
        let g2 = gate.clone();
        let growth = std::thread::spawn(move || g2.exclusive(Duration::from_millis(200), || 7));
        std::thread::sleep(Duration::from_millis(50));
        // A reader arriving during the attempt waits for it, then gets in.
        let g3 = gate.clone();
        let reader = std::thread::spawn(move || {
            let t = g3.enter(11);
            g3.leave(t);
        });
        let Err(StillOpen(oldest)) = growth.join().unwrap() else {
            panic!("the growth must give up while the snapshot is held");
        };
        assert!(oldest.age >= Duration::from_millis(200));
        assert_eq!(oldest.used_pages_at_open, 10);
        reader.join().unwrap();
        assert_eq!(gate.oldest().map(|o| o.open_snapshots), Some(1));
        gate.leave(held);
        assert_eq!(gate.oldest(), None);
        assert_eq!(gate.exclusive(Duration::from_millis(1), || 8), Ok(8));
    }
}
