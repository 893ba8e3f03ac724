//! The machine a run measured, described at its start: CPU, cores, RAM, kernel, the time one
//! `fdatasync` of a small write takes on the results folder's disk (the figure durable
//! commits pay), the commit of the source tree and the date.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

/// What the run ran on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub ram_gib: f64,
    pub kernel: String,
    /// Median and 99th percentile microseconds of a 4 KiB write + `fdatasync`.
    pub flush_us_p50: f64,
    pub flush_us_p99: f64,
    pub flushes_measured: usize,
    /// `git rev-parse HEAD`, with `-dirty` when the tree has changes.
    pub commit: String,
    /// UTC, `YYYY-MM-DD HH:MM:SS`.
    pub date: String,
}

/// Flushes timed at the start of a run.
const FLUSHES: usize = 200;

impl Machine {
    /// Describes this machine, timing flushes in `dir`.
    pub fn describe(dir: &Path) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map_or_else(|| "unknown CPU".into(), |s| s.trim().to_string());
        let ram_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
                line.split_whitespace().nth(1)?.parse::<f64>().ok()
            })
            .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".into(), |s| s.trim().to_string());
        let (p50, p99, n) = flush_times(dir).unwrap_or((f64::NAN, f64::NAN, 0));
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            ram_gib,
            kernel,
            flush_us_p50: p50,
            flush_us_p99: p99,
            flushes_measured: n,
            commit: commit(),
            date: crate::common::clock::utc_now(),
        }
    }

    /// The Markdown lines of `RESULTS.md`'s header.
    pub fn markdown(&self) -> String {
        format!(
            "- date (UTC): {}\n- commit: `{}`\n- CPU: {} ({} cores)\n- RAM: {:.1} GiB\n- kernel: \
             {}\n- disk flush (4 KiB write + fdatasync in the results folder, {} times, at the \
             start): p50 {:.0} us, p99 {:.0} us\n",
            self.date,
            self.commit,
            self.cpu,
            self.cores,
            self.ram_gib,
            self.kernel,
            self.flushes_measured,
            self.flush_us_p50,
            self.flush_us_p99
        )
    }
}

/// p50 and p99 microseconds of [`FLUSHES`] small writes each followed by `fdatasync`.
fn flush_times(dir: &Path) -> std::io::Result<(f64, f64, usize)> {
    let path = dir.join(".flush-probe");
    let mut f = std::fs::File::create(&path)?;
    let block = [0x5au8; 4096];
    let mut us = Vec::with_capacity(FLUSHES);
    for _ in 0..FLUSHES {
        let t = Instant::now();
        f.write_all(&block)?;
        f.sync_data()?;
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(f);
    let _ = std::fs::remove_file(&path);
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
    Ok((at(0.5), at(0.99), us.len()))
}

fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(head) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{head}-dirty")
            } else {
                head
            }
        }
        None => "unknown (not a git checkout)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_is_well_formed_and_flushes_are_timed() {
        let d = crate::common::clock::utc_now();
        assert_eq!(d.len(), 19, "{d}");
        assert!(d.starts_with("20"), "{d}");
        let dir = tempfile::tempdir().unwrap();
        let (p50, p99, n) = flush_times(dir.path()).unwrap();
        assert_eq!(n, FLUSHES);
        assert!(p50 > 0.0 && p99 >= p50);
    }
}
