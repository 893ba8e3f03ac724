//! Plots of workload W (PNG and SVG): throughput over writes (log y) per batch size;
//! throughput, commit latency (mean, and p50/p99 of every call) and effective
//! throughput by batch size per condition (log-log).

use std::path::PathBuf;

use super::args::Plan;
use super::result::RunResult;
use crate::common::metrics::read_csv;
use crate::common::plot::{self, Axes, Series};
use crate::common::BenchError;

/// Draws every plot; returns the files written.
pub fn write(plan: &Plan, results: &[RunResult]) -> Result<Vec<PathBuf>, BenchError> {
    let mut written = Vec::new();
    let measured: Vec<&RunResult> = results.iter().filter(|r| r.measured()).collect();
    for &batch in &plan.batches {
        let mut series = Vec::new();
        for r in measured.iter().filter(|r| r.batch == batch) {
            let Some(csv) = &r.csv else { continue };
            let rows = read_csv(std::path::Path::new(csv))?;
            series.push(Series {
                label: r.condition.clone(),
                points: rows
                    .iter()
                    .map(|row| (row.writes as f64, row.throughput_wps))
                    .collect(),
            });
        }
        let path = plan.out.join(format!("throughput-b{batch}.png"));
        if plot::lines(
            &path,
            &format!("Pure write throughput, batch size {batch}"),
            "writes",
            "writes per second (log)",
            &series,
            Axes {
                log_x: false,
                log_y: true,
            },
        )? {
            written.push(path);
        }
    }
    let by_batch = |metric: &dyn Fn(&RunResult) -> Option<f64>| {
        let mut names: Vec<&str> = Vec::new();
        for r in &measured {
            if !names.contains(&r.condition.as_str()) {
                names.push(&r.condition);
            }
        }
        names
            .into_iter()
            .map(|n| Series {
                label: n.to_string(),
                points: measured
                    .iter()
                    .filter(|r| r.condition == n)
                    .filter_map(|r| metric(r).map(|v| (r.batch as f64, v)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let log_log = Axes {
        log_x: true,
        log_y: true,
    };
    let path = plan.out.join("throughput-by-batch.png");
    if plot::lines(
        &path,
        "Pure write throughput by batch size (median of passes)",
        "records per call (log)",
        "writes per second (log)",
        &by_batch(&|r| Some(r.throughput_wps)),
        log_log,
    )? {
        written.push(path);
    }
    let mut pct = Vec::new();
    for (name, get) in [
        (
            "p50",
            (|r: &RunResult| r.commit_p50_ms) as fn(&RunResult) -> Option<f64>,
        ),
        ("p99", |r: &RunResult| r.commit_p99_ms),
    ] {
        for mut s in by_batch(&get) {
            s.label = format!("{} {name}", s.label);
            pct.push(s);
        }
    }
    let path = plan.out.join("commit-latency-p50-p99.png");
    if plot::lines(
        &path,
        "Commit latency by batch size: p50 and p99 of every call",
        "records per call (log)",
        "ms (log)",
        &pct,
        log_log,
    )? {
        written.push(path);
    }
    let path = plan.out.join("commit-latency.png");
    if plot::lines(
        &path,
        "Mean commit latency by batch size",
        "records per call (log)",
        "ms (log)",
        &by_batch(&|r| r.commit_latency_ms),
        log_log,
    )? {
        written.push(path);
    }
    let path = plan.out.join("effective-throughput.png");
    if plot::lines(
        &path,
        "Effective throughput (1 ms target) by batch size",
        "records per call (log)",
        "ET (log)",
        &by_batch(&|r| r.et),
        log_log,
    )? {
        written.push(path);
    }
    Ok(written)
}
