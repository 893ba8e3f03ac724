//! The result of one condition at one batch size: one line of `summary.jsonl`, the `RESULT`
//! line of a child.

use serde::{Deserialize, Serialize};

use super::condition::ConditionSpec;

/// Pure-write phase (and, for batch 1, the mixed phase) of one condition.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RunResult {
    pub condition: String,
    pub durability: String,
    /// `sync` or `async`.
    pub mode: String,
    pub batch: usize,
    /// Writes asked for.
    pub target_writes: u64,
    /// Writes done (fewer when capped).
    pub writes: u64,
    /// Stopped by `--max-secs`.
    pub capped: bool,
    /// Wall seconds until the last write was durable.
    pub seconds: f64,
    pub throughput_wps: f64,
    pub call_latency_ms: Option<f64>,
    pub commit_latency_ms: Option<f64>,
    /// Median and 99th percentile of the commit latency of every call (submit to durable).
    #[serde(default)]
    pub commit_p50_ms: Option<f64>,
    #[serde(default)]
    pub commit_p99_ms: Option<f64>,
    /// Effective throughput for a 1 ms target: throughput x (1 ms / commit latency).
    pub et: Option<f64>,
    pub user_s: f64,
    pub sys_s: f64,
    pub peak_rss_mb: f64,
    /// Bytes the disk under the store was sent from the first call until the count check
    /// returned, each end after a `sync` (`common::device`; the whole machine's writes to
    /// that disk); `None` without a block device or for a peer run outside this runner.
    #[serde(default)]
    pub device_bytes: Option<u64>,
    /// Records read back at the end.
    pub count: Option<u64>,
    pub count_ok: bool,
    /// Write calls that completed with an error.
    pub failed_calls: u64,
    /// Path of the CSV.
    pub csv: Option<String>,
    /// Store counters (Datalith: commits, requests, largest batch).
    pub counters: Option<serde_json::Value>,
    /// The mixed phase with reads through the store's query API (Datalog for a Datalog store).
    pub mixed: Option<MixedResult>,
    /// The mixed phase again, right after, with reads through the store's raw index access
    /// (stores that have one: Datalith and Datalevin Datalog).
    #[serde(default)]
    pub mixed_raw: Option<MixedResult>,
    /// Throughput over the passes (median, min, max); `throughput_wps` is its median.
    #[serde(default)]
    pub throughput_spread: Option<crate::common::passes::Spread>,
    /// Mixed-phase iterations per second over the passes.
    #[serde(default)]
    pub mixed_spread: Option<crate::common::passes::Spread>,
    /// Raw-read mixed-phase iterations per second over the passes.
    #[serde(default)]
    pub mixed_raw_spread: Option<crate::common::passes::Spread>,
    /// Why the condition did not run.
    pub skipped: Option<String>,
    /// Why the run failed.
    pub error: Option<String>,
}

/// Mixed read/write phase on the store the batch-1 pure write left.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct MixedResult {
    /// How the reads went: `query` (the store's query API) or `raw` (its raw index access).
    #[serde(default)]
    pub read_level: String,
    /// Untimed warm-up iterations before the timed ones (reads, and writes of keys already
    /// present, so the count is unchanged).
    #[serde(default)]
    pub warmup_iterations: u64,
    pub target_iterations: u64,
    pub iterations: u64,
    pub capped: bool,
    pub seed: u64,
    pub seconds: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// Reads that found a value.
    pub reads_found: u64,
    /// Mean time of one read call.
    pub mean_read_ms: Option<f64>,
    pub count: Option<u64>,
    pub expected_count: u64,
    pub count_ok: bool,
    pub failed_calls: u64,
}

impl MixedResult {
    /// Iterations per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.iterations as f64 / self.seconds
        } else {
            0.0
        }
    }
}

impl RunResult {
    /// A result carrying only the condition's identity.
    pub fn new(spec: &ConditionSpec, batch: usize, target_writes: u64) -> RunResult {
        RunResult {
            condition: spec.name.clone(),
            durability: spec.durability.to_string(),
            mode: if spec.asynchronous { "async" } else { "sync" }.into(),
            batch,
            target_writes,
            ..RunResult::default()
        }
    }

    /// A condition that did not run.
    pub fn skipped(spec: &ConditionSpec, batch: usize, target: u64, why: &str) -> RunResult {
        RunResult {
            skipped: Some(why.to_string()),
            ..RunResult::new(spec, batch, target)
        }
    }

    /// A condition whose run failed before producing a result.
    pub fn failed(spec: &ConditionSpec, batch: usize, target: u64, why: &str) -> RunResult {
        RunResult {
            error: Some(why.to_string()),
            ..RunResult::new(spec, batch, target)
        }
    }

    /// Ran, wrote everything it reports, and read it all back.
    pub fn ok(&self) -> bool {
        let mixed_ok = [&self.mixed, &self.mixed_raw].iter().all(|m| match m {
            Some(m) => m.count_ok && m.failed_calls == 0,
            None => true,
        });
        self.skipped.is_some()
            || (self.error.is_none() && self.count_ok && self.failed_calls == 0 && mixed_ok)
    }

    /// Ran (not skipped, not failed before measuring).
    pub fn measured(&self) -> bool {
        self.skipped.is_none() && self.error.is_none()
    }
}
