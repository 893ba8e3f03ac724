//! One line of the summary: one store at one rate, every figure per second of its run.

use serde::Serialize;

use super::child::ChildResult;
use super::stores;
use super::tracer::SyscallCounts;
use crate::common::passes::Spread;

const MIB: f64 = 1024.0 * 1024.0;

/// The figures of one store at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub store: String,
    pub target_rate: f64,
    /// `ok`, `skipped` (store not in this build) or `failed`.
    pub status: String,
    /// Why skipped or failed.
    pub note: String,
    /// Durable puts per second: durable puts / time until the last one was durable.
    pub achieved_rate: f64,
    pub cpu_pct: f64,
    pub user_pct: f64,
    pub sys_pct: f64,
    /// `syscw` from `/proc/self/io`, per second.
    pub syscw_per_s: f64,
    /// write-family calls per second counted by `perf` tracepoints (if available).
    pub write_calls_per_s: Option<f64>,
    /// fsync-family calls per second: counted by perf if available, else the store's
    /// documented calls per flush times flushes (see `fsync_source`).
    pub fsyncs_per_s: f64,
    /// `perf` or `nominal`.
    pub fsync_source: String,
    pub device_mib_s: Option<f64>,
    pub logical_mib_s: f64,
    pub device_per_logical: Option<f64>,
    /// `write_bytes` of `/proc/self/io`, per second (cross-check of the device figure).
    pub write_bytes_mib_s: f64,
    /// Bytes handed to write-family calls (`wchar`), per second: the store's own write
    /// amplification, before the file system adds its journal.
    pub wchar_mib_s: f64,
    pub flush_ms_mean: f64,
    pub flush_ms_max: f64,
    pub max_lag_ms: f64,
    pub issued: u64,
    pub durable: u64,
    pub verified_keys: u64,
    pub files_mib: f64,
    pub elapsed_s: f64,
    /// Block device whose sectors were counted.
    pub device: String,
    /// Over the passes (absent for one pass): CPU %, `syscw`/s and device MiB/s.
    pub spread: Option<PassSpread>,
}

/// The min-max (and median) of a row's headline figures over its passes.
#[derive(Debug, Clone, Serialize)]
pub struct PassSpread {
    pub passes: usize,
    pub cpu_pct: Spread,
    pub syscw_per_s: Spread,
    pub device_mib_s: Option<Spread>,
}

/// One row per (store, rate) from the rows of every pass: the pass with the median CPU %
/// stands for the row; a failed pass fails it, a skipped one leaves it skipped.
pub fn merge_passes(rows: &[&Row]) -> Option<Row> {
    let first = *rows.first()?;
    if let Some(bad) = rows.iter().find(|r| r.status != "ok") {
        return Some((*bad).clone());
    }
    if rows.len() == 1 {
        return Some(first.clone());
    }
    let cpu = Spread::of(&rows.iter().map(|r| r.cpu_pct).collect::<Vec<_>>())?;
    let syscw = Spread::of(&rows.iter().map(|r| r.syscw_per_s).collect::<Vec<_>>())?;
    let device = Spread::of(
        &rows
            .iter()
            .filter_map(|r| r.device_mib_s)
            .collect::<Vec<_>>(),
    );
    let mut out = rows[cpu.median_pass()].clone();
    out.spread = Some(PassSpread {
        passes: rows.len(),
        cpu_pct: cpu,
        syscw_per_s: syscw,
        device_mib_s: device,
    });
    Some(out)
}

impl Row {
    /// A store that did not run.
    pub fn not_run(store: &str, rate: f64, status: &str, note: String) -> Row {
        Row {
            store: store.to_string(),
            target_rate: rate,
            status: status.to_string(),
            note,
            achieved_rate: 0.0,
            cpu_pct: 0.0,
            user_pct: 0.0,
            sys_pct: 0.0,
            syscw_per_s: 0.0,
            write_calls_per_s: None,
            fsyncs_per_s: 0.0,
            fsync_source: String::new(),
            device_mib_s: None,
            logical_mib_s: 0.0,
            device_per_logical: None,
            write_bytes_mib_s: 0.0,
            wchar_mib_s: 0.0,
            flush_ms_mean: 0.0,
            flush_ms_max: 0.0,
            max_lag_ms: 0.0,
            issued: 0,
            durable: 0,
            verified_keys: 0,
            files_mib: 0.0,
            elapsed_s: 0.0,
            device: String::new(),
            spread: None,
        }
    }

    /// A completed run: the child's own figures plus the device delta and tracer counts
    /// the parent measured around it.
    pub fn from_run(
        r: &ChildResult,
        device: Option<(&str, u64)>,
        traced: Option<SyscallCounts>,
    ) -> Row {
        let t = r.totals.elapsed_s.max(1e-9);
        let c = &r.counters;
        let (fsyncs, source) = match traced {
            Some(s) => (s.syncs as f64, "perf"),
            None => (
                stores::nominal_syncs_per_flush(&r.store) * r.totals.flushes as f64,
                "nominal",
            ),
        };
        let logical = r.totals.logical_bytes as f64 / MIB / t;
        let device_mib_s = device.map(|(_, b)| b as f64 / MIB / t);
        Row {
            store: r.store.clone(),
            target_rate: r.rate,
            status: "ok".into(),
            note: String::new(),
            achieved_rate: r.totals.durable as f64 / t,
            cpu_pct: (c.user_s + c.sys_s) / t * 100.0,
            user_pct: c.user_s / t * 100.0,
            sys_pct: c.sys_s / t * 100.0,
            syscw_per_s: c.syscw as f64 / t,
            write_calls_per_s: traced.map(|s| s.writes as f64 / t),
            fsyncs_per_s: fsyncs / t,
            fsync_source: source.into(),
            device_mib_s,
            logical_mib_s: logical,
            device_per_logical: device_mib_s.filter(|_| logical > 0.0).map(|d| d / logical),
            write_bytes_mib_s: c.write_bytes as f64 / MIB / t,
            wchar_mib_s: c.wchar as f64 / MIB / t,
            flush_ms_mean: r.flush_ms_mean,
            flush_ms_max: r.flush_ms_max,
            max_lag_ms: r.totals.max_lag_s * 1e3,
            issued: r.totals.issued,
            durable: r.totals.durable,
            verified_keys: r.verified_keys,
            files_mib: r.files_bytes as f64 / MIB,
            elapsed_s: r.totals.elapsed_s,
            device: device.map(|(d, _)| d.to_string()).unwrap_or_default(),
            spread: None,
        }
    }
}
