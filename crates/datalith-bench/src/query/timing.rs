//! Timing: warm up, then repeat for a fixed time; the median of the timed runs. Every peer
//! (in process and in `bench/peers/`) warms up the same way: a read task for two thirds of the
//! timed seconds and at least [`READ_WARM_MIN`] calls (Datascript's own benchmark warms up 2 s
//! for its 3 s), a write task exactly one untimed run.

use std::time::{Duration, Instant};

use crate::common::BenchError;

/// How long to run a task.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Seconds of timed repetitions (after a warm-up of a third of that).
    pub secs: f64,
    /// Seconds one run of a many-commit write task may take before it stops (see [`Cap`]).
    pub cap_secs: f64,
    /// Timed runs at least, whatever the time.
    pub min_runs: usize,
    /// Seconds of warm-up before the timed runs (see [`Plan::for_kind`]).
    pub warm_secs: f64,
    /// Warm-up runs at least, whatever the time.
    pub warm_min: usize,
}

/// Warm-up calls a read task makes at least (the same in `bench/peers/`).
pub const READ_WARM_MIN: usize = 3;

impl Plan {
    /// The plan for a task of `kind`: reads warm up for two thirds of `secs` (at least
    /// [`READ_WARM_MIN`] calls); writes make exactly one untimed warm-up run.
    pub fn for_kind(self, kind: super::tasks::Kind) -> Plan {
        match kind {
            super::tasks::Kind::Read => Plan {
                warm_secs: self.secs * 2.0 / 3.0,
                warm_min: READ_WARM_MIN,
                ..self
            },
            super::tasks::Kind::Write => Plan {
                warm_secs: 0.0,
                warm_min: 1,
                ..self
            },
        }
    }
}

/// What one task measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Median ms of one pass; over passes, the median of the pass medians.
    pub median_ms: f64,
    /// The fastest and slowest pass median (equal to `median_ms` for one pass).
    pub min_ms: f64,
    pub max_ms: f64,
    /// Passes merged into this figure.
    pub passes: usize,
    pub runs: usize,
    /// The task's result count (rows of a query, datoms left after a write).
    pub count: u64,
}

/// Runs `setup` (untimed), `body` (timed) and `count` (untimed) repeatedly: first the plan's
/// warm-up (`warm_secs`, at least `warm_min` runs), then until `secs` have passed and `min_runs` are done,
/// or only once if that one run took `secs` or more.
/// Every run must give the same count.
pub fn measure<S, T>(
    plan: Plan,
    what: &str,
    mut setup: impl FnMut() -> Result<S, BenchError>,
    mut body: impl FnMut(S) -> Result<T, BenchError>,
    mut count_of: impl FnMut(T) -> Result<u64, BenchError>,
) -> Result<Measured, BenchError> {
    let mut count: Option<u64> = None;
    let mut once = |timed: &mut Vec<f64>| -> Result<(), BenchError> {
        let s = setup()?;
        let t0 = Instant::now();
        let out = body(s)?;
        timed.push(t0.elapsed().as_secs_f64() * 1e3);
        let n = count_of(out)?;
        match count {
            Some(c) if c != n => Err(BenchError::Store {
                store: what.to_string(),
                op: "repeat",
                message: format!("count changed between runs: {c} then {n}"),
            }),
            _ => {
                count = Some(n);
                Ok(())
            }
        }
    };
    let warm = Duration::from_secs_f64(plan.warm_secs.max(0.0));
    let start = Instant::now();
    let mut discard = Vec::new();
    while discard.len() < plan.warm_min || start.elapsed() < warm {
        once(&mut discard)?;
    }
    let mut timed = Vec::new();
    let start = Instant::now();
    let limit = Duration::from_secs_f64(plan.secs.max(0.0));
    while timed.len() < plan.min_runs.max(1) || start.elapsed() < limit {
        once(&mut timed)?;
        // One run longer than the whole budget is the measurement (a 100K-commit write task
        // on a durable store would otherwise take minutes more).
        if timed.len() == 1 && !limit.is_zero() && start.elapsed() >= limit {
            break;
        }
    }
    let median_ms = median(&mut timed);
    Ok(Measured {
        median_ms,
        min_ms: median_ms,
        max_ms: median_ms,
        passes: 1,
        runs: timed.len(),
        count: count.unwrap_or(0),
    })
}

/// The median (mean of the two middle values for an even count); 0 for none.
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        let cases: [(&[f64], f64); 4] = [
            (&[], 0.0),
            (&[3.0], 3.0),
            (&[5.0, 1.0, 3.0], 3.0),
            (&[4.0, 1.0, 3.0, 2.0], 2.5),
        ];
        for (xs, want) in cases {
            assert_eq!(median(&mut xs.to_vec()), want);
        }
    }

    #[test]
    fn repeats_at_least_min_runs_and_checks_counts() {
        let plan = Plan {
            secs: 0.0,
            cap_secs: 1.0,
            min_runs: 4,
            warm_secs: 0.0,
            warm_min: 1,
        };
        let mut setups = 0;
        let m = measure(
            plan,
            "t",
            || {
                setups += 1;
                Ok(())
            },
            |()| Ok(7),
            Ok,
        )
        .unwrap();
        assert_eq!((m.runs, m.count), (4, 7));
        assert_eq!(setups, 5, "one warm-up run and four timed");
        let mut n = 0;
        let err = measure(
            plan,
            "t",
            || Ok(()),
            |()| {
                n += 1;
                Ok(n)
            },
            Ok,
        );
        assert!(err.is_err());
    }
}

/// The `op` of the error a run over its time cap ends with (reported as skipped, with the
/// measured per-commit cost, rather than failed).
pub const OVER_CAP: &str = "over-time-cap";

/// A cap on one run of a many-commit write task: on a disk whose flush takes milliseconds,
/// 100K durable commits take minutes, and the run says so instead of holding the machine.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    start: Instant,
    limit: Duration,
}

impl Cap {
    /// Starts the clock (call first thing in the timed body).
    pub fn start(secs: f64) -> Cap {
        Cap {
            start: Instant::now(),
            limit: Duration::from_secs_f64(secs.max(0.0)),
        }
    }

    /// Fails once the cap has passed, after `done` of `total` commits.
    pub fn check(&self, store: &str, done: usize, total: usize) -> Result<(), BenchError> {
        let t = self.start.elapsed();
        if t <= self.limit || done == 0 {
            return Ok(());
        }
        Err(BenchError::Store {
            store: store.to_string(),
            op: OVER_CAP,
            message: format!(
                "one run passed the {:.0} s cap after {done} of {total} commits ({:.3} ms per \
                 commit: a full run would take {:.0} s)",
                self.limit.as_secs_f64(),
                t.as_secs_f64() * 1e3 / done as f64,
                t.as_secs_f64() * total as f64 / done as f64
            ),
        })
    }
}
