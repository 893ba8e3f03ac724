//! The results of paged queries, kept so that the pages after the first are slices of one
//! result instead of each running the query whole (the engine has no cursor: paging a
//! 100,000-row answer 1,000 rows at a time ran the query 100 times). A result is kept under
//! its database value (the basis the first page answered from) and everything else that
//! decides it (the query, its inputs, the point in time); a value never changes, so a kept
//! result is that value's answer for as long as it is kept, leased or not.
//!
//! Bounded: `--page-cache-bytes` a database (an estimate of the values' memory), each result
//! kept until it goes unused for the longest lease (`--max-lease-ms`), the least recently
//! used leaving first when a new one needs room; a result larger than the whole budget is not
//! kept (its pages run the query, as before).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datalith::edn::Edn;

/// A kept result: its rows and the collection they came in.
#[derive(Clone)]
pub struct Kept {
    /// The rows, in the engine's order.
    pub rows: Arc<Vec<Edn>>,
    /// Makes a page of rows the kind of collection the result was (a page of a set is a set).
    pub rebuild: fn(Vec<Edn>) -> Edn,
}

/// Every kept result of one database.
pub struct Pages {
    budget: usize,
    idle: Duration,
    kept: Mutex<Vec<Entry>>,
}

struct Entry {
    key: String,
    kept: Kept,
    bytes: usize,
    used: Instant,
}

impl Pages {
    /// At most `budget` bytes of results, each dropped after `idle` unused; 0 keeps none.
    pub fn new(budget: usize, idle: Duration) -> Pages {
        Pages {
            budget,
            idle,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The result kept under `key`, if any (now the most recently used).
    pub fn get(&self, key: &str) -> Option<Kept> {
        let now = Instant::now();
        let mut kept = self.lock();
        kept.retain(|e| now.duration_since(e.used) < self.idle);
        let entry = kept.iter_mut().find(|e| e.key == key)?;
        entry.used = now;
        Some(entry.kept.clone())
    }

    /// Keeps `rows` under `key` when they fit the budget, making room by dropping the least
    /// recently used; answers them either way.
    pub fn keep(&self, key: String, rows: Vec<Edn>, rebuild: fn(Vec<Edn>) -> Edn) -> Kept {
        let bytes = rows.iter().map(approximate_bytes).sum::<usize>()
            + rows.capacity() * std::mem::size_of::<Edn>();
        let kept = Kept {
            rows: Arc::new(rows),
            rebuild,
        };
        if bytes > self.budget {
            return kept;
        }
        let now = Instant::now();
        let mut all = self.lock();
        all.retain(|e| now.duration_since(e.used) < self.idle && e.key != key);
        let mut used: usize = all.iter().map(|e| e.bytes).sum();
        while used + bytes > self.budget {
            let Some(oldest) = (0..all.len()).min_by_key(|&i| all[i].used) else {
                break;
            };
            used -= all.swap_remove(oldest).bytes;
        }
        all.push(Entry {
            key,
            kept: kept.clone(),
            bytes,
            used: now,
        });
        kept
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The heap bytes a value holds beyond its own slot (what keeping it costs, roughly).
fn approximate_bytes(value: &Edn) -> usize {
    let slot = std::mem::size_of::<Edn>();
    match value {
        Edn::String(s) | Edn::Regex(s) => s.capacity(),
        Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => {
            items.capacity() * slot + items.iter().map(approximate_bytes).sum::<usize>()
        }
        Edn::Map(pairs) => {
            pairs.capacity() * 2 * slot
                + pairs
                    .iter()
                    .map(|(k, v)| approximate_bytes(k) + approximate_bytes(v))
                    .sum::<usize>()
        }
        Edn::Tagged(_, inner) => slot + approximate_bytes(inner),
        // Keywords and symbols share their text; numbers and the rest live in the slot.
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: i64) -> Vec<Edn> {
        (0..n).map(|i| Edn::Vector(vec![Edn::Long(i)])).collect()
    }

    #[test]
    fn results_are_kept_within_the_budget_least_recently_used_leaving_first() {
        let one = {
            let r = rows(100);
            r.iter().map(approximate_bytes).sum::<usize>()
                + r.capacity() * std::mem::size_of::<Edn>()
        };
        let pages = Pages::new(2 * one + one / 2, Duration::from_secs(60));
        pages.keep("a".into(), rows(100), Edn::Set);
        pages.keep("b".into(), rows(100), Edn::Set);
        // "a" used last: "b" leaves for "c".
        assert!(pages.get("a").is_some());
        pages.keep("c".into(), rows(100), Edn::Set);
        assert!(pages.get("b").is_none());
        let a = pages.get("a").expect("a kept");
        assert_eq!(a.rows.len(), 100);
        assert_eq!((a.rebuild)(vec![]), Edn::Set(vec![]));
        assert!(pages.get("c").is_some());
        // Larger than the whole budget: answered, not kept, nothing else dropped.
        let big = pages.keep("big".into(), rows(1000), Edn::Vector);
        assert_eq!(big.rows.len(), 1000);
        assert!(pages.get("big").is_none());
        assert!(pages.get("a").is_some() && pages.get("c").is_some());
        // A budget of 0 keeps nothing.
        let none = Pages::new(0, Duration::from_secs(60));
        none.keep("a".into(), rows(1), Edn::Set);
        assert!(none.get("a").is_none());
    }

    #[test]
    fn a_result_unused_for_the_idle_time_is_dropped() {
        let pages = Pages::new(1 << 20, Duration::from_millis(50));
        pages.keep("a".into(), rows(10), Edn::Set);
        assert!(pages.get("a").is_some());
        std::thread::sleep(Duration::from_millis(80));
        assert!(pages.get("a").is_none());
    }
}
