//! The child side: one store at one rate. Prints `PROGRESS <puts>` lines and one
//! `RESULT <json>` line on stdout; the parent adds the device and tracer figures.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::time::Duration;

use super::args::BlobChildArgs;
use super::pace::{self, Plan};
use super::probe::ProcCounters;
use super::stores;
use crate::common::BenchError;

/// Blob sizes of the seed: 5-15 KB, i.e. 5,000 to 15,000 bytes (the seed's logical 95.36 MB/s
/// at 10,000 blobs/s is 10,000 bytes a blob in MiB/s).
pub const MIN_BLOB_BYTES: usize = 5_000;
/// See [`MIN_BLOB_BYTES`].
pub const MAX_BLOB_BYTES: usize = 15_000;

/// What one child measured about itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildResult {
    pub store: String,
    pub rate: f64,
    pub secs: f64,
    #[serde(flatten)]
    pub totals: pace::Totals,
    pub flush_ms_mean: f64,
    pub flush_ms_max: f64,
    /// Counters from just before the first put to just after the store was closed.
    pub counters: ProcCounters,
    /// Keys read back and checked after reopening the store.
    pub verified_keys: u64,
    /// Bytes of the store's files after the run.
    pub files_bytes: u64,
}

/// Runs one store at one rate and prints its result.
pub fn run(args: BlobChildArgs) -> Result<(), BenchError> {
    let plan = Plan {
        rate: args.rate,
        secs: args.secs,
        keys: args.keys,
        min_bytes: MIN_BLOB_BYTES,
        max_bytes: MAX_BLOB_BYTES,
        flush_every: Duration::from_millis(args.flush_ms),
        seed: args.seed,
    };
    let mut store = stores::open(&args.store, &args.dir)?;
    let before = ProcCounters::now();
    let mut stdout = std::io::stdout();
    let written = pace::run(store.as_mut(), &plan, |n| {
        let _ = writeln!(stdout, "PROGRESS {n}");
        let _ = stdout.flush();
    })?;
    let latencies = store.flush_latencies();
    drop(store);
    let counters = ProcCounters::now().since(before);
    let mut store = stores::open(&args.store, &args.dir)?;
    let verified_keys = pace::verify(store.as_mut(), &args.store, &written)?;
    drop(store);
    let n = latencies.len().max(1) as f64;
    let result = ChildResult {
        store: args.store.clone(),
        rate: args.rate,
        secs: args.secs,
        totals: written.totals.clone(),
        flush_ms_mean: latencies.iter().sum::<f64>() / n * 1e3,
        flush_ms_max: latencies.iter().copied().fold(0.0, f64::max) * 1e3,
        counters,
        verified_keys,
        files_bytes: dir_bytes(&args.dir),
    };
    let json = serde_json::to_string(&result).map_err(|e| BenchError::Child {
        what: args.store.clone(),
        message: e.to_string(),
    })?;
    println!("RESULT {json}");
    Ok(())
}

/// Allocated bytes of every file under `dir` (what the store occupies on disk).
fn dir_bytes(dir: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}
