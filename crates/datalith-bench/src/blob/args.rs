//! Command-line arguments of `datalith-bench blob` and of its hidden per-run child.

use clap::Args;
use std::path::PathBuf;

/// Workload B (seed 004): steady-rate blob writes, durable every 500 ms, against SQLite and
/// RocksDB. Each store at each rate runs in its own child process.
#[derive(Debug, Clone, Args)]
pub struct BlobArgs {
    /// Smoke-test size: a few seconds per rate.
    #[arg(long)]
    pub quick: bool,
    /// Seconds per store and rate (default 120, or 2 with --quick).
    #[arg(long)]
    pub secs: Option<f64>,
    /// Target rates in blobs per second, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10,100,1000,5000,10000")]
    pub rates: Vec<f64>,
    /// Stores to run, comma-separated: datalith, sqlite, rocksdb, and the Datalith
    /// alternatives datalith-blocking, datalith-nordahead, datalith-writemap-fsync,
    /// datalith-nosync-fsync.
    #[arg(long, value_delimiter = ',', default_value = "datalith,sqlite,rocksdb")]
    pub stores: Vec<String>,
    /// Output directory; results go to `<out>/blob/`.
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Directory for the stores' data (default `<out>/blob/data`). Its block device is the one
    /// whose sectors are counted, so put it on a device nothing else writes to if you can.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Keys are uniform over this many.
    #[arg(long, default_value_t = 20_000)]
    pub keys: u32,
    /// Seed of the key, size and content generator.
    #[arg(long, default_value_t = 4)]
    pub seed: u64,
    /// Milliseconds between durability points.
    #[arg(long, default_value_t = 500)]
    pub flush_ms: u64,
    /// Do not count system calls with `perf stat` tracepoints even if perf works.
    #[arg(long)]
    pub no_perf: bool,
    /// Keep each run's data directory instead of deleting it after the run.
    #[arg(long)]
    pub keep_data: bool,
    /// Passes over every store at every rate, the store order rotated by one each pass
    /// (default 3, or 1 with --quick); a row is the pass with the median CPU %, with the
    /// min-max of CPU, write calls and device bytes over the passes.
    #[arg(long)]
    pub passes: Option<usize>,
}

/// One store at one rate, run in this (child) process so that its counters are its own.
#[derive(Debug, Clone, Args)]
pub struct BlobChildArgs {
    /// Store name (see `blob --stores`).
    #[arg(long)]
    pub store: String,
    /// Blobs per second.
    #[arg(long)]
    pub rate: f64,
    /// Seconds of schedule.
    #[arg(long)]
    pub secs: f64,
    /// Empty directory for the store.
    #[arg(long)]
    pub dir: PathBuf,
    /// Keys are uniform over this many.
    #[arg(long)]
    pub keys: u32,
    /// Generator seed.
    #[arg(long)]
    pub seed: u64,
    /// Milliseconds between durability points.
    #[arg(long)]
    pub flush_ms: u64,
}
