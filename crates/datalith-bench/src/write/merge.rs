//! Merging the passes of workload W: one [`RunResult`] per (condition, batch) from the runs
//! every pass made. Invariant: the merged result is the run of the pass whose throughput is
//! the median of the passes (its CSV, latencies and counts stand for the cell), with
//! `throughput_wps` the median and the spreads of throughput and mixed rates attached; a pass
//! that failed makes the cell that failed run, and a skipped cell stays skipped.

use super::args::Plan;
use super::result::RunResult;
use crate::common::passes::Spread;

/// One result per (condition, batch), in table order (batch, then condition).
pub fn passes(plan: &Plan, by_pass: &[Vec<RunResult>]) -> Vec<RunResult> {
    let mut out = Vec::new();
    for &batch in &plan.batches {
        for spec in &plan.conditions {
            let runs: Vec<&RunResult> = by_pass
                .iter()
                .filter_map(|rs| {
                    rs.iter()
                        .find(|r| r.condition == spec.name && r.batch == batch)
                })
                .collect();
            if let Some(r) = merge(&runs) {
                out.push(r);
            }
        }
    }
    out
}

/// The cell of one (condition, batch) over its passes.
fn merge(runs: &[&RunResult]) -> Option<RunResult> {
    let first = *runs.first()?;
    if let Some((i, bad)) = runs.iter().enumerate().find(|(_, r)| !r.ok()) {
        let mut r = (*bad).clone();
        if runs.len() > 1 {
            r.error = r.error.map(|e| format!("pass {}: {e}", i + 1));
        }
        return Some(r);
    }
    if let Some(skipped) = runs.iter().find(|r| r.skipped.is_some()) {
        return Some((*skipped).clone());
    }
    let throughput: Vec<f64> = runs.iter().map(|r| r.throughput_wps).collect();
    let Some(spread) = Spread::of(&throughput) else {
        return Some(first.clone());
    };
    let mut r = runs[spread.median_pass()].clone();
    r.throughput_wps = spread.median;
    r.throughput_spread = Some(spread);
    let rates = |raw: bool| -> Option<Spread> {
        let xs: Vec<f64> = runs
            .iter()
            .filter_map(|r| if raw { &r.mixed_raw } else { &r.mixed }.as_ref())
            .map(|m| m.rate())
            .collect();
        Spread::of(&xs)
    };
    r.mixed_spread = rates(false);
    r.mixed_raw_spread = rates(true);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::result::MixedResult;

    fn run(throughput: f64, mixed_rate: f64, csv: &str) -> RunResult {
        RunResult {
            condition: "c".into(),
            batch: 1,
            throughput_wps: throughput,
            count_ok: true,
            csv: Some(csv.into()),
            mixed: Some(MixedResult {
                iterations: mixed_rate as u64,
                seconds: 1.0,
                count_ok: true,
                ..MixedResult::default()
            }),
            ..RunResult::default()
        }
    }

    #[test]
    fn merge_table() {
        let (a, b, c) = (
            run(300.0, 30.0, "a"),
            run(100.0, 10.0, "b"),
            run(200.0, 50.0, "c"),
        );
        let m = merge(&[&a, &b, &c]).unwrap();
        assert_eq!(
            m.csv.as_deref(),
            Some("c"),
            "the median pass stands for the cell"
        );
        assert_eq!(m.throughput_wps, 200.0);
        let t = m.throughput_spread.unwrap();
        assert_eq!((t.min, t.max, t.passes.len()), (100.0, 300.0, 3));
        let mx = m.mixed_spread.unwrap();
        assert_eq!((mx.median, mx.min, mx.max), (30.0, 10.0, 50.0));
        assert!(m.mixed_raw_spread.is_none());

        let mut failed = run(1.0, 1.0, "f");
        failed.error = Some("boom".into());
        let m = merge(&[&a, &failed]).unwrap();
        assert_eq!(m.error.as_deref(), Some("pass 2: boom"));

        let mut skipped = run(0.0, 0.0, "s");
        skipped.skipped = Some("not installed".into());
        let m = merge(&[&skipped, &a]).unwrap();
        assert_eq!(m.skipped.as_deref(), Some("not installed"));
        assert!(merge(&[]).is_none());
    }
}
