//! Short queries answered on the worker thread that read their request. A query handed to a
//! blocking thread costs two thread wake-ups (to the blocking thread, and back to the worker
//! to write the answer), ~30-50 us on this project's 2-core VM, as much as a small query's
//! own work. A query the server expects to be short runs where its request was read, with
//! an in-place budget ([`BUDGET`]): the engine asks at each look of its own budget (every
//! 1024 steps) whether the time is up, and if so stops, and the query runs again, from the
//! start, on a blocking thread, as every query did before. So a worker is held at most about
//! [`BUDGET`] by one request, a client that goes away stops its query as before (on the
//! blocking thread; an in-place run is too short to need it), and a large result is built
//! on the blocking pool, not in a worker's heap.
//!
//! What a query is expected to take is what its text took the last time ([`Pace`]): a text
//! never seen, or whose last run took under [`SHORT`], runs in place first. The work lost
//! is at most one budget's worth, when a text that was short runs long (other inputs, a
//! grown database); the next run of that text goes to the blocking pool at once.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a query runs on a worker thread before it moves to a blocking thread.
pub const BUDGET: Duration = Duration::from_millis(2);

/// A text whose last run took less than this runs in place first.
pub const SHORT: Duration = Duration::from_millis(1);

/// Query texts remembered; the memory starts over when full (a server answering more
/// distinct texts than this runs each new one in place once more).
const REMEMBERED: usize = 4096;

/// How long each query text took the last time it ran.
#[derive(Default)]
pub struct Pace {
    last: Mutex<HashMap<u64, Duration>>,
}

impl Pace {
    /// Whether the query of text `key` should run in place first.
    pub fn expects_short(&self, key: u64) -> bool {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.get(&key).is_none_or(|took| *took < SHORT)
    }

    /// Notes that the query of text `key` took `took` (`BUDGET` or more when it moved).
    pub fn note(&self, key: u64, took: Duration) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.len() >= REMEMBERED && !last.contains_key(&key) {
            last.clear();
        }
        last.insert(key, took);
    }
}

/// The key of a query text in [`Pace`].
pub fn key(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// One run in place: when its time is up, and whether the engine was told to stop for it.
pub struct InPlace {
    until: Instant,
    moved: AtomicBool,
}

impl InPlace {
    /// A run starting now, with [`BUDGET`].
    pub fn start() -> InPlace {
        InPlace {
            until: Instant::now() + BUDGET,
            moved: AtomicBool::new(false),
        }
    }

    /// The engine's question at each look: whether to stop now (the budget is spent). A yes
    /// is remembered: the run's failure is then the move, not the query's.
    pub fn over(&self) -> bool {
        if Instant::now() < self.until {
            return false;
        }
        self.moved.store(true, Ordering::Relaxed);
        true
    }

    /// Whether the run was stopped to move to a blocking thread.
    pub fn moved(&self) -> bool {
        self.moved.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_runs_in_place_until_it_is_seen_to_be_long() {
        let pace = Pace::default();
        let (a, b) = (
            key("[:find ?e :where [?e :a]]"),
            key("[:find ?e :where [?e :b]]"),
        );
        assert_ne!(a, b);
        assert!(pace.expects_short(a), "never seen: in place first");
        pace.note(a, Duration::from_micros(300));
        assert!(pace.expects_short(a));
        pace.note(a, BUDGET);
        assert!(!pace.expects_short(a), "moved last time: the blocking pool");
        assert!(pace.expects_short(b));
        pace.note(a, Duration::from_micros(200));
        assert!(pace.expects_short(a), "short again");
    }

    #[test]
    fn the_memory_starts_over_when_full() {
        let pace = Pace::default();
        for k in 0..REMEMBERED as u64 {
            pace.note(k, BUDGET);
        }
        assert!(!pace.expects_short(0));
        pace.note(u64::MAX, BUDGET);
        assert!(pace.expects_short(0), "forgotten");
        assert!(!pace.expects_short(u64::MAX));
    }

    #[test]
    fn a_run_is_over_once_its_budget_is_spent() {
        let run = InPlace::start();
        assert!(!run.over() && !run.moved());
        std::thread::sleep(BUDGET + Duration::from_millis(1));
        assert!(run.over() && run.moved());
    }
}
