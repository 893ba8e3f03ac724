//! The paced writer: one thread puts blobs at a steady rate and asks the store to make them
//! durable every flush interval. Write `n` is due at `t0 + n / rate`; a writer that falls
//! behind writes without sleeping until it has caught up, so a store that cannot sustain the
//! rate shows it as a lower achieved rate and a growing lag, never as a shorter schedule.
//! The run ends at `secs` with a last flush; puts still unissued then are not written.

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

use super::stores::{fingerprint, BlobStore};
use crate::common::BenchError;

/// What to write.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Blobs per second.
    pub rate: f64,
    /// Length of the schedule.
    pub secs: f64,
    /// Keys are uniform over `0..keys`.
    pub keys: u32,
    /// Blob sizes are uniform over `min_bytes..=max_bytes`.
    pub min_bytes: usize,
    /// See `min_bytes`.
    pub max_bytes: usize,
    /// Every this long the store makes what it has durable.
    pub flush_every: Duration,
    /// Seed of the key, size and content generator.
    pub seed: u64,
}

impl Plan {
    /// Writes the schedule holds.
    pub fn total_writes(&self) -> u64 {
        (self.rate * self.secs).floor() as u64
    }

    fn due(&self, t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_secs_f64(n as f64 / self.rate)
    }
}

/// What the writer did.
#[derive(Debug, Clone)]
pub struct Written {
    /// The counts and times of the run.
    pub totals: Totals,
    /// For each key, the `(length, fingerprint)` of the last blob written to it.
    pub expected: Vec<Option<(usize, u64)>>,
}

/// The counts and times of one paced run (also the child's result, flattened into it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Totals {
    /// Puts issued.
    pub issued: u64,
    /// Puts durable at the end (all of them unless the store failed).
    pub durable: u64,
    /// Bytes of blob payload issued.
    pub logical_bytes: u64,
    /// From the first due time to the moment the last put became durable.
    pub elapsed_s: f64,
    /// The most a put was issued after its due time.
    pub max_lag_s: f64,
    /// Flush calls made.
    pub flushes: u64,
}

/// Sleeping for less than this costs more in timer overhead and wake-ups than it helps the
/// smoothness of the rate: at 10,000 blobs/s the writer wakes every millisecond and writes ~10.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// Runs `plan` against `store`; `progress` gets the number of puts issued about once a second.
pub fn run(
    store: &mut dyn BlobStore,
    plan: &Plan,
    mut progress: impl FnMut(u64),
) -> Result<Written, BenchError> {
    let mut rng = SmallRng::seed_from_u64(plan.seed);
    let total = plan.total_writes();
    let mut expected = vec![None; plan.keys as usize];
    let (mut issued, mut logical_bytes, mut flushes) = (0u64, 0u64, 0u64);
    let mut max_lag = Duration::ZERO;
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(plan.secs);
    let mut next_flush = t0 + plan.flush_every;
    let mut next_progress = t0 + Duration::from_secs(1);
    loop {
        let now = Instant::now();
        if now >= next_flush {
            store.flush()?;
            flushes += 1;
            while next_flush <= now {
                next_flush += plan.flush_every;
            }
            continue;
        }
        if now >= next_progress {
            progress(issued);
            next_progress += Duration::from_secs(1);
        }
        if now >= end {
            break;
        }
        // After the last put the writer still waits out the schedule (and its flushes), so
        // the run lasts `secs` plus the last flush whatever the rate.
        let due = if issued < total {
            plan.due(t0, issued)
        } else {
            end
        };
        if due <= now && issued < total {
            max_lag = max_lag.max(now - due);
            let key = rng.random_range(0..plan.keys);
            let len = rng.random_range(plan.min_bytes..=plan.max_bytes);
            let mut blob = vec![0u8; len];
            rng.fill_bytes(&mut blob);
            expected[key as usize] = Some((len, fingerprint(&blob)));
            store.put(key, blob)?;
            issued += 1;
            logical_bytes += len as u64;
            continue;
        }
        let wake = due.min(next_flush).min(end);
        std::thread::sleep((wake - now).max(MIN_SLEEP));
    }
    store.finish()?;
    flushes += 1;
    let elapsed_s = t0.elapsed().as_secs_f64();
    progress(issued);
    Ok(Written {
        totals: Totals {
            issued,
            durable: store.durable_puts(),
            logical_bytes,
            elapsed_s,
            max_lag_s: max_lag.as_secs_f64(),
            flushes,
        },
        expected,
    })
}

/// Checks that `store` holds exactly the last blob written to every key, and nothing else.
pub fn verify(store: &mut dyn BlobStore, name: &str, written: &Written) -> Result<u64, BenchError> {
    let fail = |message: String| BenchError::Store {
        store: name.to_string(),
        op: "verify",
        message,
    };
    let mut present = 0u64;
    for (key, want) in written.expected.iter().enumerate() {
        let Some(want) = want else { continue };
        present += 1;
        let got = store.read_back(key as u32)?;
        if got != Some(*want) {
            return Err(fail(format!(
                "key {key}: expected (len, first 8 bytes) {want:?}, found {got:?}"
            )));
        }
    }
    let count = store.count()?;
    if count != present {
        return Err(fail(format!("{count} keys stored, {present} written")));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::stores;

    fn plan(rate: f64, secs: f64, keys: u32) -> Plan {
        Plan {
            rate,
            secs,
            keys,
            min_bytes: 50,
            max_bytes: 150,
            flush_every: Duration::from_millis(100),
            seed: 7,
        }
    }

    /// Each store at a small rate: every scheduled put is issued, made durable, and read back
    /// after the store is reopened.
    #[test]
    fn every_store_keeps_the_schedule_and_reads_back() {
        let cases: &[(&str, f64, f64, u32)] = &[
            ("datalith", 200.0, 0.35, 50),
            ("datalith-blocking", 200.0, 0.35, 50),
            ("datalith-nosync-fsync", 200.0, 0.35, 50),
            ("sqlite", 200.0, 0.35, 50),
            ("datalith", 50.0, 0.3, 5),
        ];
        for &(name, rate, secs, keys) in cases {
            let dir = tempfile::tempdir().expect("temp dir");
            let p = plan(rate, secs, keys);
            let mut store = stores::open(name, dir.path()).expect("open");
            let w = run(store.as_mut(), &p, |_| {}).expect("run");
            // How far the pacer keeps up depends on the machine's load (a benchmark's
            // concern, not this test's): it must issue something, never more than the
            // schedule, and what it issued must all be durable and read back.
            let total = p.total_writes();
            assert!(
                w.totals.issued >= 1 && w.totals.issued <= total,
                "{name}: {} of {total}",
                w.totals.issued
            );
            assert_eq!(w.totals.durable, w.totals.issued, "{name}");
            assert!(
                w.totals.flushes >= 1,
                "{name}: {} flushes",
                w.totals.flushes
            );
            assert!(w.totals.elapsed_s >= secs, "{name}");
            drop(store);
            let mut store = stores::open(name, dir.path()).expect("reopen");
            let distinct = w.expected.iter().flatten().count() as u64;
            assert_eq!(verify(store.as_mut(), name, &w).expect("verify"), distinct);
        }
    }

    /// A store that lost a put fails the check.
    #[test]
    fn verify_catches_a_missing_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = plan(100.0, 0.2, 1000);
        let mut store = stores::open("sqlite", dir.path()).expect("open");
        let mut w = run(store.as_mut(), &p, |_| {}).expect("run");
        let absent = w
            .expected
            .iter()
            .position(Option::is_none)
            .expect("a key never written");
        w.expected[absent] = Some((100, 0));
        assert!(verify(store.as_mut(), "sqlite", &w).is_err());
    }
}
