//! PNG plots of the summary: each figure against the target rate (log-log), one line per store.

use std::path::Path;

use super::row::Row;
use crate::common::plot::{self, Axes, Series};
use crate::common::BenchError;

/// The plotted figures: file stem, title, y label, and how to read it from a row.
const FIGURES: &[(&str, &str, &str, fn(&Row) -> Option<f64>)] = &[
    ("cpu", "CPU (user + sys)", "CPU %", |r| Some(r.cpu_pct)),
    ("syscw", "Write-family system calls", "calls / s", |r| {
        Some(r.syscw_per_s)
    }),
    ("device", "Bytes written to the device", "MiB / s", |r| {
        r.device_mib_s
    }),
    (
        "device-per-logical",
        "Device bytes per logical byte",
        "ratio",
        |r| r.device_per_logical,
    ),
];

/// Writes `<dir>/<figure>.png` for every figure; returns the files written.
pub fn write(dir: &Path, rows: &[Row]) -> Result<Vec<String>, BenchError> {
    let mut stores: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.status == "ok") {
        if !stores.contains(&r.store.as_str()) {
            stores.push(&r.store);
        }
    }
    let mut written = Vec::new();
    for (stem, title, y_label, get) in FIGURES {
        let series: Vec<Series> = stores
            .iter()
            .map(|s| Series {
                label: s.to_string(),
                points: rows
                    .iter()
                    .filter(|r| r.store == *s && r.status == "ok")
                    .filter_map(|r| get(r).map(|y| (r.target_rate, y)))
                    .collect(),
            })
            .collect();
        let file = format!("{stem}.png");
        let log_y = *stem != "device-per-logical";
        let axes = Axes { log_x: true, log_y };
        if plot::lines(&dir.join(&file), title, "blobs / s", y_label, &series, axes)? {
            written.push(file);
        }
    }
    Ok(written)
}
