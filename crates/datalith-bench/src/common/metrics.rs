//! Latency means over windows and the CSV rows of the seeds' format.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::BenchError;

/// The CSV header, exactly as `BENCHMARKS.md` spells it.
pub const CSV_HEADER: &str = "writes,seconds,throughput_wps,call_latency_ms,commit_latency_ms";

/// A running mean of durations.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mean {
    sum_s: f64,
    n: u64,
}

impl Mean {
    /// Adds one sample.
    pub fn add(&mut self, d: Duration) {
        self.sum_s += d.as_secs_f64();
        self.n += 1;
    }

    /// The mean in milliseconds, or `None` without samples.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_s * 1e3 / self.n as f64)
    }
}

/// Latencies recorded from other threads (completion callbacks run on the store's committer):
/// the window since the last CSV row, the whole run, and every sample (nanoseconds) for the
/// run's percentiles.
#[derive(Debug, Default)]
pub struct SharedMean {
    inner: Mutex<(Mean, Mean, Vec<u64>)>,
}

impl SharedMean {
    /// Records one sample in the window, the total and the samples.
    pub fn record(&self, d: Duration) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.add(d);
        g.1.add(d);
        g.2.push(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// The `q` quantile (0..=1, nearest rank) of every sample, in milliseconds; `None` without
    /// samples.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        quantile_ms(&mut g.2, q)
    }

    /// The window so far, starting a new one.
    pub fn take_window(&self) -> Mean {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut g.0)
    }

    /// Every sample of the run.
    pub fn total(&self) -> Mean {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).1
    }
}

/// The `q` quantile (nearest rank) of nanosecond samples, in milliseconds (sorts them).
pub fn quantile_ms(samples: &mut [u64], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let i = ((samples.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    Some(samples[i] as f64 / 1e6)
}

/// One CSV row: cumulative writes and time, throughput, and the window's mean latencies
/// (empty when no call or commit finished in the window).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub writes: u64,
    pub seconds: f64,
    pub throughput_wps: f64,
    pub call_latency_ms: Option<f64>,
    pub commit_latency_ms: Option<f64>,
}

impl Row {
    fn to_line(&self) -> String {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
        format!(
            "{},{:.6},{:.3},{},{}",
            self.writes,
            self.seconds,
            self.throughput_wps,
            opt(self.call_latency_ms),
            opt(self.commit_latency_ms)
        )
    }

    fn parse(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 5 {
            return None;
        }
        let opt = |s: &str| -> Option<Option<f64>> {
            if s.is_empty() || s.eq_ignore_ascii_case("nan") {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        Some(Row {
            writes: f[0].parse::<f64>().ok()? as u64,
            seconds: f[1].parse().ok()?,
            throughput_wps: f[2].parse().ok()?,
            call_latency_ms: opt(f[3])?,
            commit_latency_ms: opt(f[4])?,
        })
    }
}

/// A CSV file being written, header first.
pub struct CsvOut {
    out: BufWriter<File>,
    path: PathBuf,
}

impl CsvOut {
    /// Creates (truncates) `path` and writes the header.
    pub fn create(path: &Path) -> Result<CsvOut, BenchError> {
        let file = File::create(path).map_err(BenchError::io(path))?;
        let mut csv = CsvOut {
            out: BufWriter::new(file),
            path: path.to_path_buf(),
        };
        csv.line(CSV_HEADER)?;
        Ok(csv)
    }

    /// Appends a row.
    pub fn row(&mut self, row: &Row) -> Result<(), BenchError> {
        self.line(&row.to_line())
    }

    fn line(&mut self, s: &str) -> Result<(), BenchError> {
        writeln!(self.out, "{s}").map_err(BenchError::io(&self.path))
    }

    /// Flushes the file.
    pub fn finish(mut self) -> Result<(), BenchError> {
        self.out.flush().map_err(BenchError::io(&self.path))
    }
}

/// Reads a CSV in this format (ours or a peer harness's); rows that do not parse are skipped.
pub fn read_csv(path: &Path) -> Result<Vec<Row>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(BenchError::io(path))?;
    Ok(text.lines().skip(1).filter_map(Row::parse).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let cases: [(&[u64], f64, Option<f64>); 5] = [
            (&[], 0.5, None),
            (&[2_000_000], 0.99, Some(2.0)),
            (&[3_000_000, 1_000_000, 2_000_000], 0.5, Some(2.0)),
            (&[3_000_000, 1_000_000, 2_000_000], 1.0, Some(3.0)),
            (&[3_000_000, 1_000_000, 2_000_000], 0.0, Some(1.0)),
        ];
        for (xs, q, want) in cases {
            assert_eq!(quantile_ms(&mut xs.to_vec(), q), want, "{xs:?} {q}");
        }
    }

    #[test]
    fn rows_round_trip_through_csv_lines() {
        let cases = [
            Row {
                writes: 10_000,
                seconds: 1.5,
                throughput_wps: 6666.667,
                call_latency_ms: Some(0.125),
                commit_latency_ms: None,
            },
            Row {
                writes: 3,
                seconds: 0.25,
                throughput_wps: 12.0,
                call_latency_ms: None,
                commit_latency_ms: Some(2.0),
            },
        ];
        for row in cases {
            assert_eq!(Row::parse(&row.to_line()), Some(row));
        }
    }

    #[test]
    fn header_and_garbage_do_not_parse() {
        for line in [CSV_HEADER, "", "1,2,3", "a,b,c,d,e"] {
            assert_eq!(Row::parse(line), None, "{line}");
        }
    }

    #[test]
    fn mean_of_durations() {
        let mut m = Mean::default();
        assert_eq!(m.mean_ms(), None);
        m.add(Duration::from_millis(1));
        m.add(Duration::from_millis(3));
        assert!((m.mean_ms().unwrap() - 2.0).abs() < 1e-9);
    }
}
