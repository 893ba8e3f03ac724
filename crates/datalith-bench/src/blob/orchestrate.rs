//! The parent side: for each rate and store, an empty data directory, a `sync`, the device
//! counter, the child (under `perf stat` when it works), another `sync`, the counter again.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::args::BlobArgs;
use super::child::ChildResult;
use super::plots;
use super::probe::{sync_all, Device};
use super::row::Row;
use super::stores;
use super::summary::{self, Header};
use super::tracer::{self, Tracer};
use crate::common::BenchError;

/// Name of the hidden subcommand that runs one store at one rate.
pub const CHILD_COMMAND: &str = "__blob-child";

/// Full-size seconds per store and rate (the seed's).
const FULL_SECS: f64 = 120.0;
/// `--quick` seconds per store and rate.
const QUICK_SECS: f64 = 2.0;

/// Runs every store at every rate and writes the summary.
pub fn run(args: BlobArgs) -> Result<(), BenchError> {
    let secs = args
        .secs
        .unwrap_or(if args.quick { QUICK_SECS } else { FULL_SECS });
    check_args(&args, secs)?;
    let out = args.out.join("blob");
    let data = args.data_dir.clone().unwrap_or_else(|| out.join("data"));
    std::fs::create_dir_all(&out).map_err(BenchError::io(&out))?;
    std::fs::create_dir_all(&data).map_err(BenchError::io(&data))?;
    let device = Device::of(&data);
    let tracer = if args.no_perf { None } else { Tracer::detect() };
    let exe = std::env::current_exe().map_err(BenchError::io(Path::new("current_exe")))?;
    eprintln!(
        "blob: {secs} s per run, rates {:?}, stores {:?}, device {}, syscalls counted by {}",
        args.rates,
        args.stores,
        device.as_ref().map(|d| d.name.as_str()).unwrap_or("none"),
        if tracer.is_some() {
            "perf"
        } else {
            "nobody (nominal fsyncs)"
        }
    );
    let passes = args.passes.unwrap_or(if args.quick {
        1
    } else {
        crate::common::passes::MIN_PASSES
    });
    let mut by_pass: Vec<Vec<Row>> = Vec::new();
    let mut rows = Vec::new();
    for pass in 0..passes {
        let order = crate::common::passes::rotated(&args.stores, pass);
        eprintln!("blob: pass {}/{passes}: {}", pass + 1, order.join(", "));
        let mut pass_rows = Vec::new();
        for &rate in &args.rates {
            for store in &order {
                let row = if !stores::available(store) {
                    Row::not_run(
                        store,
                        rate,
                        "skipped",
                        "build without feature `rocksdb`".into(),
                    )
                } else {
                    let run = OneRun {
                        exe: &exe,
                        store,
                        rate,
                        secs,
                        args: &args,
                        data: &data,
                        out: &out,
                        device: device.as_ref(),
                        tracer: tracer.as_ref(),
                    };
                    match run.run() {
                        Ok(row) => row,
                        Err(e) => {
                            eprintln!("blob: {store} at {rate}/s failed: {e}");
                            Row::not_run(store, rate, "failed", e.to_string())
                        }
                    }
                };
                print_row(&row);
                pass_rows.push(row);
            }
        }
        by_pass.push(pass_rows);
        rows = merged(&args, &by_pass);
        // Rewritten after every pass so an interrupted run still leaves its figures.
        summary::write(
            &out,
            &header(&args, secs, passes, device.as_ref(), &tracer),
            &rows,
        )?;
    }
    let pngs = plots::write(&out, &rows)?;
    eprintln!(
        "blob: summary in {} (plots: {})",
        out.join("summary.md").display(),
        pngs.join(", ")
    );
    if let Some(failed) = rows.iter().find(|r| r.status == "failed") {
        return Err(BenchError::Child {
            what: format!("{} at {}/s", failed.store, failed.target_rate),
            message: failed.note.clone(),
        });
    }
    Ok(())
}

fn check_args(args: &BlobArgs, secs: f64) -> Result<(), BenchError> {
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(BenchError::Arg {
            arg: "--secs",
            message: format!("{secs} is not a positive number of seconds"),
        });
    }
    if let Some(r) = args.rates.iter().find(|r| !(**r > 0.0 && r.is_finite())) {
        return Err(BenchError::Arg {
            arg: "--rates",
            message: format!("{r} is not a positive rate"),
        });
    }
    if args.keys == 0 {
        return Err(BenchError::Arg {
            arg: "--keys",
            message: "at least one key".into(),
        });
    }
    if let Some(s) = args
        .stores
        .iter()
        .find(|s| !stores::STORES.iter().any(|(n, _)| n == s))
    {
        return Err(BenchError::Arg {
            arg: "--stores",
            message: format!(
                "unknown store {s:?}; known: {}",
                stores::STORES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(())
}

/// One row per (rate, store) in table order, merged over the passes so far.
fn merged(args: &BlobArgs, by_pass: &[Vec<Row>]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &rate in &args.rates {
        for store in &args.stores {
            let runs: Vec<&Row> = by_pass
                .iter()
                .filter_map(|p| {
                    p.iter()
                        .find(|r| &r.store == store && r.target_rate == rate)
                })
                .collect();
            if let Some(r) = crate::blob::row::merge_passes(&runs) {
                rows.push(r);
            }
        }
    }
    rows
}

fn header(
    args: &BlobArgs,
    secs: f64,
    passes: usize,
    device: Option<&Device>,
    tracer: &Option<Tracer>,
) -> Header {
    Header {
        secs,
        passes,
        device: device
            .map(|d| format!("{} ({})", d.name, d.id))
            .unwrap_or_else(|| "none found: device bytes n/a".into()),
        tracer: tracer.is_some(),
        stores: args
            .stores
            .iter()
            .filter_map(|s| stores::STORES.iter().find(|(n, _)| n == s))
            .map(|(n, w)| (n.to_string(), w.to_string()))
            .collect(),
    }
}

fn print_row(r: &Row) {
    if r.status != "ok" {
        eprintln!(
            "  {:<24} {:>6}/s  {}: {}",
            r.store, r.target_rate, r.status, r.note
        );
        return;
    }
    eprintln!(
        "  {:<24} {:>6}/s  achieved {:>9.1}  cpu {:>6.2}%  syscw/s {:>8.0}  fsync/s {:>5.1}  dev {:>7} MiB/s  logical {:>7.2}  ratio {}",
        r.store,
        r.target_rate,
        r.achieved_rate,
        r.cpu_pct,
        r.syscw_per_s,
        r.fsyncs_per_s,
        r.device_mib_s.map(|v| format!("{v:.2}")).unwrap_or_else(|| "n/a".into()),
        r.logical_mib_s,
        r.device_per_logical.map(|v| format!("{v:.2}")).unwrap_or_else(|| "n/a".into()),
    );
}

/// One store at one rate.
struct OneRun<'a> {
    exe: &'a Path,
    store: &'a str,
    rate: f64,
    secs: f64,
    args: &'a BlobArgs,
    data: &'a Path,
    out: &'a Path,
    device: Option<&'a Device>,
    tracer: Option<&'a Tracer>,
}

impl OneRun<'_> {
    fn run(&self) -> Result<Row, BenchError> {
        let tag = format!("{}-{}", self.store, self.rate);
        let dir = self.data.join(&tag);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(BenchError::io(&dir))?;
        }
        std::fs::create_dir_all(&dir).map_err(BenchError::io(&dir))?;
        let perf_out: PathBuf = self.out.join(format!("{tag}.perf"));
        let mut cmd = match self.tracer {
            Some(t) => t.wrap(self.exe, &perf_out),
            None => Command::new(self.exe),
        };
        cmd.arg(CHILD_COMMAND)
            .args(["--store", self.store])
            .arg("--rate")
            .arg(self.rate.to_string())
            .arg("--secs")
            .arg(self.secs.to_string())
            .arg("--dir")
            .arg(&dir)
            .arg("--keys")
            .arg(self.args.keys.to_string())
            .arg("--seed")
            .arg(self.args.seed.to_string())
            .arg("--flush-ms")
            .arg(self.args.flush_ms.to_string());
        sync_all();
        let before = self.device.map(Device::bytes_written).transpose()?;
        let result = self.spawn(cmd, &tag)?;
        sync_all();
        let after = self.device.map(Device::bytes_written).transpose()?;
        let device = match (self.device, before, after) {
            (Some(d), Some(b), Some(a)) => Some((d.name.as_str(), a.saturating_sub(b))),
            _ => None,
        };
        let traced = self.tracer.and_then(|_| tracer::read(&perf_out));
        if !self.args.keep_data {
            std::fs::remove_dir_all(&dir).map_err(BenchError::io(&dir))?;
        }
        if result.totals.durable != result.totals.issued {
            return Err(BenchError::Store {
                store: self.store.to_string(),
                op: "verify",
                message: format!(
                    "{} puts issued, {} durable",
                    result.totals.issued, result.totals.durable
                ),
            });
        }
        Ok(Row::from_run(&result, device, traced))
    }

    fn spawn(&self, mut cmd: Command, tag: &str) -> Result<ChildResult, BenchError> {
        let fail = |message: String| BenchError::Child {
            what: tag.to_string(),
            message,
        };
        let log = self.out.join(format!("{tag}.log"));
        let (mut child, stdout) = crate::common::child::spawn_logged(&mut cmd, tag, &log)?;
        let total = (self.rate * self.secs).floor() as u64;
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(format!("{} @ {}/s", self.store, self.rate));
        let mut result = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| fail(format!("reading stdout: {e}")))?;
            if let Some(n) = line.strip_prefix("PROGRESS ") {
                if let Ok(n) = n.trim().parse() {
                    bar.set_position(n);
                }
            } else if let Some(json) = line.strip_prefix("RESULT ") {
                result = Some(
                    serde_json::from_str::<ChildResult>(json)
                        .map_err(|e| fail(format!("bad RESULT line ({e}): {json}")))?,
                );
            }
        }
        bar.finish_and_clear();
        let status = child.wait().map_err(|e| fail(format!("waiting: {e}")))?;
        if !status.success() {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: String = tail.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
            return Err(fail(format!("exited with {status}: {tail}")));
        }
        result.ok_or_else(|| fail("printed no RESULT line".into()))
    }
}
