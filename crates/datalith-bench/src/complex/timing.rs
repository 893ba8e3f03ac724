//! One pass of one (peer, query): a warm-up run (its answer is the one checked), then timed
//! runs for `secs` (at least one); the pass's figure is the median timed run. The same for
//! every in-process peer; `bench/peers` harnesses follow the same plan (`external.rs`).

use std::time::{Duration, Instant};

use super::cell::PassOutcome;
use super::peer::{Peer, RunError};
use super::queries::Query;

/// Runs `query` on `peer` for one pass.
pub fn pass(peer: &mut dyn Peer, query: &Query, secs: f64, limit: Duration) -> PassOutcome {
    let answer = match peer.run(query, limit) {
        Ok(a) => a,
        Err(RunError::Timeout) => return PassOutcome::TimedOut,
        Err(RunError::Failed(m)) => return PassOutcome::Failed(m),
    };
    let mut times: Vec<f64> = Vec::new();
    let start = Instant::now();
    while times.is_empty() || start.elapsed().as_secs_f64() < secs {
        let t = Instant::now();
        match peer.run(query, limit) {
            Ok(a) if a.rows.len() == answer.rows.len() => {
                times.push(t.elapsed().as_secs_f64() * 1e3)
            }
            Ok(a) => {
                return PassOutcome::Failed(format!(
                    "a timed run gave {} rows, the warm-up run {}",
                    a.rows.len(),
                    answer.rows.len()
                ))
            }
            Err(RunError::Timeout) => return PassOutcome::TimedOut,
            Err(RunError::Failed(m)) => return PassOutcome::Failed(m),
        }
    }
    times.sort_by(f64::total_cmp);
    let m = times.len() / 2;
    let ms = if times.len() % 2 == 1 {
        times[m]
    } else {
        (times[m - 1] + times[m]) / 2.0
    };
    PassOutcome::Ran {
        ms,
        runs: times.len(),
        answer,
    }
}
