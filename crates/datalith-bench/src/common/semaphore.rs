//! A counting semaphore: caps the async writes in flight (the seed caps them at 1000), and
//! lets the runner wait until every one of them is durable.

use std::sync::{Condvar, Mutex};

/// `permits` slots; `acquire` blocks while none is free.
#[derive(Debug)]
pub struct Semaphore {
    free: Mutex<usize>,
    changed: Condvar,
    permits: usize,
}

impl Semaphore {
    /// A semaphore with `permits` slots (at least one).
    pub fn new(permits: usize) -> Semaphore {
        let permits = permits.max(1);
        Semaphore {
            free: Mutex::new(permits),
            changed: Condvar::new(),
            permits,
        }
    }

    /// Takes a slot, waiting for one if needed.
    pub fn acquire(&self) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.changed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
    }

    /// Gives a slot back (called from completion callbacks: quick, never blocks long).
    pub fn release(&self) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        *free = (*free + 1).min(self.permits);
        self.changed.notify_all();
    }

    /// Waits until every slot is free again: nothing is in flight.
    pub fn wait_idle(&self) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free < self.permits {
            free = self.changed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn caps_in_flight_and_waits_for_idle() {
        let sem = Arc::new(Semaphore::new(3));
        for _ in 0..3 {
            sem.acquire();
        }
        let s2 = sem.clone();
        let releaser = std::thread::spawn(move || {
            for _ in 0..3 {
                std::thread::sleep(std::time::Duration::from_millis(5));
                s2.release();
            }
        });
        sem.acquire(); // waits for the first release
        sem.release();
        sem.wait_idle();
        releaser.join().unwrap();
        assert_eq!(*sem.free.lock().unwrap(), 3);
    }
}
