//! A cancellation flag that a watchdog thread raises once a time limit has passed, so that a
//! fuzzed query that would run for minutes (a cross product of every datom) ends with
//! `Cancelled` instead of being reported as a hang. The limit is generous: a query the
//! engine fails to stop within it is a finding (libFuzzer's `-timeout` reports it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long a fuzzed query may run before it is cancelled.
pub const QUERY_LIMIT: Duration = Duration::from_millis(500);

type Watched = Vec<(Instant, Weak<AtomicBool>)>;

fn watched() -> &'static Mutex<Watched> {
    static WATCHED: OnceLock<Mutex<Watched>> = OnceLock::new();
    WATCHED.get_or_init(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(10));
            let mut list = watched().lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            list.retain(|(due, flag)| match flag.upgrade() {
                Some(flag) if now >= *due => {
                    flag.store(true, Ordering::Relaxed);
                    false
                }
                Some(_) => true,
                None => false,
            });
        });
        Mutex::new(Vec::new())
    })
}

/// A flag raised `limit` from now (dropping it stops the watch).
pub fn flag_after(limit: Duration) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    watched()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((Instant::now() + limit, Arc::downgrade(&flag)));
    flag
}
