//! Timing of one row on one peer: warm up (two thirds of the timed seconds, at least
//! [`WARM_MIN`] calls, as workload Q's reads and the Datomic harness), then repeat for the
//! timed seconds and at least `min_runs` calls, each call timed; the median and the minimum.
//! Every call must give the same answer.

use std::time::{Duration, Instant};

use super::data::Answer;
use crate::common::BenchError;
// One median for every workload (the Q workload's, with its tests).
use crate::query::timing::median;

/// Warm-up calls at least (the same in `bench/peers/datomic/history.clj`).
pub const WARM_MIN: usize = 3;

/// How long to run a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Seconds of timed calls (the warm-up is two thirds of it).
    pub secs: f64,
    /// Timed calls at least.
    pub min_runs: usize,
}

/// What one row measured on one peer (in one pass, or merged over the passes).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The median call (over the passes: the median of the pass medians).
    pub median_ms: f64,
    /// The fastest call (over the passes: the fastest of all).
    pub min_ms: f64,
    /// The lowest and highest pass median (both `median_ms` for one pass).
    pub pass_lo_ms: f64,
    pub pass_hi_ms: f64,
    pub passes: usize,
    pub runs: usize,
    pub answer: Answer,
}

/// Runs `call` under `plan`; `what` names it in errors.
pub fn measure(
    plan: Plan,
    what: &str,
    mut call: impl FnMut() -> Result<Answer, BenchError>,
) -> Result<Measured, BenchError> {
    let mut answer: Option<Answer> = None;
    let mut once = |timed: &mut Vec<f64>| -> Result<(), BenchError> {
        let t0 = Instant::now();
        let got = call()?;
        timed.push(t0.elapsed().as_secs_f64() * 1e3);
        match answer {
            Some(a) if a != got => Err(BenchError::Store {
                store: what.to_string(),
                op: "repeat",
                message: format!("the answer changed between calls: {a:?} then {got:?}"),
            }),
            _ => {
                answer = Some(got);
                Ok(())
            }
        }
    };
    let secs = plan.secs.max(0.0);
    let warm = Duration::from_secs_f64(secs * 2.0 / 3.0);
    let start = Instant::now();
    let mut discard = Vec::new();
    while discard.len() < WARM_MIN || start.elapsed() < warm {
        once(&mut discard)?;
    }
    let mut timed = Vec::new();
    let limit = Duration::from_secs_f64(secs);
    let start = Instant::now();
    while timed.len() < plan.min_runs.max(1) || start.elapsed() < limit {
        once(&mut timed)?;
    }
    let median_ms = median(&mut timed);
    Ok(Measured {
        median_ms,
        min_ms: timed[0],
        pass_lo_ms: median_ms,
        pass_hi_ms: median_ms,
        passes: 1,
        runs: timed.len(),
        answer: answer.unwrap_or(Answer {
            count: 0,
            checksum: 0,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warms_up_repeats_and_checks_the_answer() {
        let plan = Plan {
            secs: 0.0,
            min_runs: 4,
        };
        let a = Answer {
            count: 2,
            checksum: 9,
        };
        let mut calls = 0;
        let m = measure(plan, "t", || {
            calls += 1;
            Ok(a)
        })
        .unwrap();
        assert_eq!((m.runs, m.answer, m.passes), (4, a, 1));
        assert_eq!(calls, WARM_MIN + 4);
        assert!(m.min_ms <= m.median_ms);
        let mut n = 0;
        let changed = measure(plan, "t", || {
            n += 1;
            Ok(Answer {
                count: n,
                checksum: 0,
            })
        });
        assert!(changed.is_err());
    }
}
