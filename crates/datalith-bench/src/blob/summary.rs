//! `summary.md` (one table per rate, then the verdict against what the issue asks) and
//! `summary.jsonl` (one object per store and rate).

use std::fmt::Write as _;
use std::path::Path;

use super::row::Row;
use crate::common::BenchError;

/// What the run was, for the header of the summary.
pub struct Header {
    pub secs: f64,
    /// Passes over every store at every rate (store order rotated each pass).
    pub passes: usize,
    pub device: String,
    pub tracer: bool,
    pub stores: Vec<(String, String)>,
}

/// Writes both summary files into `dir`.
pub fn write(dir: &Path, header: &Header, rows: &[Row]) -> Result<(), BenchError> {
    let md = dir.join("summary.md");
    std::fs::write(&md, markdown(header, rows)).map_err(BenchError::io(&md))?;
    let jsonl = dir.join("summary.jsonl");
    let mut text = String::new();
    for row in rows {
        let line = serde_json::to_string(row).map_err(|e| BenchError::Child {
            what: "summary".into(),
            message: e.to_string(),
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(&jsonl, text).map_err(BenchError::io(&jsonl))
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "n/a".into())
}

/// The Markdown summary.
pub fn markdown(header: &Header, rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Workload B: steady-rate blob writes (seed 004)\n");
    let _ = writeln!(
        s,
        "{} s per store and rate; blobs of 5,000-15,000 random bytes, keys uniform over 20,000, \
         durable every 500 ms. Device: `{}` (sectors-written delta around each child, after \
         `sync`; other processes writing to it add noise). fsyncs/s: {}. MiB = 2^20 bytes. \
         `write_bytes` (from /proc/self/io) is only a cross-check: kernels with large page-cache \
         folios charge a whole folio per dirtied page, so it can exceed the device figure. \
         LMDB also writes its meta page through an O_DSYNC descriptor: one more sync per \
         Datalith commit, counted as a write call, not as an fsync.\n",
        header.secs,
        header.device,
        if header.tracer {
            "counted with perf tracepoints (whole child, incl. open and read-back)"
        } else {
            "nominal (calls our flush path is documented to make), perf not available"
        },
    );
    let _ = writeln!(
        s,
        "{} passes over every store at every rate, the store order rotated by one each pass; \
         each row is the pass with the median CPU %, and the spread table gives the min-max \
         of CPU, syscw and device bytes over the passes. Timers and counters, the same for \
         every store: the child's own CPU accounting, `/proc/self/io` and the device's sector \
         count from the start of its schedule to its last durable write and final `sync`.\n",
        header.passes
    );
    let mut rates: Vec<f64> = rows.iter().map(|r| r.target_rate).collect();
    rates.dedup();
    for rate in &rates {
        let _ = writeln!(s, "## {rate} blobs/s\n");
        let _ = writeln!(
            s,
            "| store | achieved/s | CPU % (usr+sys) | syscw/s | write calls/s (perf) | fsyncs/s | device MiB/s | logical MiB/s | device/logical | write_bytes MiB/s | flush ms mean / max | max lag ms | verified keys |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for r in rows.iter().filter(|r| r.target_rate == *rate) {
            if r.status != "ok" {
                let _ = writeln!(
                    s,
                    "| {} | {}: {} | | | | | | | | | | | |",
                    r.store, r.status, r.note
                );
                continue;
            }
            let _ = writeln!(
                s,
                "| {} | {:.1} | {:.2} ({:.2}+{:.2}) | {:.0} | {} | {:.1} | {} | {:.2} | {} | {:.2} | {:.1} / {:.1} | {:.1} | {} |",
                r.store,
                r.achieved_rate,
                r.cpu_pct,
                r.user_pct,
                r.sys_pct,
                r.syscw_per_s,
                opt(r.write_calls_per_s, 0),
                r.fsyncs_per_s,
                opt(r.device_mib_s, 2),
                r.logical_mib_s,
                opt(r.device_per_logical, 2),
                r.write_bytes_mib_s,
                r.flush_ms_mean,
                r.flush_ms_max,
                r.max_lag_ms,
                r.verified_keys,
            );
        }
        s.push('\n');
    }
    s.push_str(&verdict(rows, &rates));
    spread_table(&mut s, rows);
    let _ = writeln!(s, "\n## Stores\n");
    for (name, what) in &header.stores {
        let _ = writeln!(s, "- `{name}`: {what}");
    }
    s
}

/// The min-max over the passes of each row's headline figures.
fn spread_table(s: &mut String, rows: &[Row]) {
    let spread: Vec<&Row> = rows.iter().filter(|r| r.spread.is_some()).collect();
    if spread.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## Spread over passes (min-max)\n");
    let _ = writeln!(
        s,
        "| store | rate/s | passes | CPU % | syscw/s | device MiB/s |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|");
    for r in spread {
        if let Some(p) = &r.spread {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                r.store,
                r.target_rate,
                p.passes,
                p.cpu_pct.range_text(|x| format!("{x:.2}")),
                p.syscw_per_s.range_text(|x| format!("{x:.0}")),
                p.device_mib_s
                    .as_ref()
                    .map_or("n/a".into(), |d| d.range_text(|x| format!("{x:.2}")))
            );
        }
    }
}

/// What the issue asks, checked against this run: Datalith below both peers in CPU, write
/// calls and device bytes at every rate; 10,000/s sustained within 1%; device/logical < 1.9.
fn verdict(rows: &[Row], rates: &[f64]) -> String {
    let mut s = String::from("## Verdict (`datalith` against the peers in this run)\n\n");
    let find = |store: &str, rate: f64| {
        rows.iter()
            .find(|r| r.store == store && r.target_rate == rate && r.status == "ok")
    };
    let peers = ["sqlite", "rocksdb"];
    for &rate in rates {
        let Some(d) = find("datalith", rate) else {
            continue;
        };
        let mut parts = Vec::new();
        for peer in peers {
            let Some(p) = find(peer, rate) else {
                parts.push(format!("{peer}: not run"));
                continue;
            };
            let cmp = |name: &str, ours: Option<f64>, theirs: Option<f64>| match (ours, theirs) {
                (Some(a), Some(b)) => format!(
                    "{name} {} ({:.2} vs {:.2})",
                    if a < b { "lower" } else { "NOT lower" },
                    a,
                    b
                ),
                _ => format!("{name} n/a"),
            };
            parts.push(format!(
                "vs {peer}: {}, {}, {}",
                cmp("CPU %", Some(d.cpu_pct), Some(p.cpu_pct)),
                cmp("syscw/s", Some(d.syscw_per_s), Some(p.syscw_per_s)),
                cmp("device MiB/s", d.device_mib_s, p.device_mib_s),
            ));
        }
        let sustained = d.achieved_rate >= 0.99 * rate;
        let _ = writeln!(
            s,
            "- {rate}/s: achieved {:.1} ({}); device/logical {}; {}",
            d.achieved_rate,
            if sustained {
                "within 1%"
            } else {
                "NOT within 1%"
            },
            opt(d.device_per_logical, 2),
            parts.join("; "),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(store: &str, rate: f64, cpu: f64, dev: f64) -> Row {
        let mut r = Row::not_run(store, rate, "ok", String::new());
        r.cpu_pct = cpu;
        r.achieved_rate = rate;
        r.device_mib_s = Some(dev);
        r.logical_mib_s = dev / 1.5;
        r.device_per_logical = Some(1.5);
        r
    }

    #[test]
    fn verdict_names_each_comparison() {
        let rows = vec![
            row("datalith", 10.0, 1.0, 0.2),
            row("sqlite", 10.0, 2.0, 0.1),
            Row::not_run("rocksdb", 10.0, "skipped", "feature off".into()),
        ];
        let header = Header {
            secs: 2.0,
            passes: 1,
            device: "vda".into(),
            tracer: false,
            stores: vec![],
        };
        let md = markdown(&header, &rows);
        for want in [
            "## 10 blobs/s",
            "CPU % lower (1.00 vs 2.00)",
            "device MiB/s NOT lower (0.20 vs 0.10)",
            "rocksdb: not run",
            "| rocksdb | skipped: feature off |",
            "within 1%",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
