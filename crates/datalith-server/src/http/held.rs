//! Worker threads a transaction may hold while it commits. A transaction runs on the worker
//! thread that read its request (`pipeline::in_place_workers`); the library blocks that
//! thread until its group's sync. Handing the worker's other tasks to another thread first
//! (`block_in_place`) costs a thread wake-up and the core's hand-back on every write. That
//! hand-off only matters when the worker's other tasks would otherwise wait, so a
//! transaction holds its worker outright while another worker stays free to read requests,
//! accept connections and run timers: at most all workers but one are held
//! ([`Held::try_hold`]), and a transaction past that hands off as before. Measured in the
//! crate's README (W at batch 100 over loopback).

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many workers transactions hold outright now.
#[derive(Default)]
pub struct Held {
    count: AtomicUsize,
}

impl Held {
    /// A hold of the calling worker while fewer than `workers - 1` are held; `None` when
    /// holding it would leave no worker free (hand off with `block_in_place` instead).
    pub fn try_hold(&self, workers: usize) -> Option<Hold<'_>> {
        let limit = workers.saturating_sub(1);
        self.count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Hold { held: self })
    }
}

/// One worker held; released when dropped (also when the transaction panics).
pub struct Hold<'a> {
    held: &'a Held,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.held.count.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_now(held: &Held) -> usize {
        held.count.load(Ordering::Acquire)
    }

    #[test]
    fn all_workers_but_one_may_be_held() {
        // (workers, holds granted)
        let table = [(1, 0), (2, 1), (4, 3)];
        for (workers, granted) in table {
            let held = Held::default();
            let holds: Vec<_> = (0..workers).map_while(|_| held.try_hold(workers)).collect();
            assert_eq!(holds.len(), granted, "{workers} workers");
            assert_eq!(held_now(&held), granted);
            drop(holds);
            assert_eq!(held_now(&held), 0, "released when dropped");
        }
    }

    #[test]
    fn a_hold_released_lets_the_next_transaction_hold() {
        let held = Held::default();
        let first = held.try_hold(2).expect("one of two workers");
        assert!(held.try_hold(2).is_none(), "the other stays free");
        drop(first);
        assert!(held.try_hold(2).is_some());
    }
}
