//! Child side of workload W: runs one condition at one batch size, pure write then (batch 1)
//! the mixed phase, and reports a [`RunResult`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::condition::{Condition, ConditionSpec, Done};
use super::result::{MixedResult, RunResult};
use super::workload::{self, KeySet, MixedKeys, Values};
use super::MAX_IN_FLIGHT;
use crate::common::child::emit_progress;
use crate::common::device::{sync_all, Device};
use crate::common::metrics::{CsvOut, Mean, Row, SharedMean};
use crate::common::rusage::Usage;
use crate::common::semaphore::Semaphore;
use crate::common::BenchError;

/// What the child was asked to do.
pub struct Params<'a> {
    pub batch: usize,
    pub writes: u64,
    pub window: u64,
    pub max_secs: Option<f64>,
    pub seed: u64,
    pub mixed: u64,
    /// Untimed mixed-phase iterations before the timed ones (reads, and writes of keys already
    /// present), capped by `warmup_secs`.
    pub warmup: u64,
    pub warmup_secs: f64,
    pub csv: &'a std::path::Path,
    /// The disk under the store, whose bytes written the run reports (`None`: not measured).
    pub device: Option<&'a Device>,
}

/// How a mixed phase reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadLevel {
    /// The store's query API (Datalog, SQL, KV `get`).
    Query,
    /// The store's raw index access.
    Raw,
}

impl ReadLevel {
    fn name(self) -> &'static str {
        match self {
            ReadLevel::Query => "query",
            ReadLevel::Raw => "raw",
        }
    }
}

/// One read at `level`; `None` when the store has no raw access.
fn read_at(
    store: &mut dyn Condition,
    level: ReadLevel,
    key: u64,
) -> Option<Result<Option<String>, BenchError>> {
    match level {
        ReadLevel::Query => Some(store.read(key)),
        ReadLevel::Raw => store.read_raw(key),
    }
}

/// In-flight bookkeeping shared with completion callbacks.
struct Flight {
    sem: Arc<Semaphore>,
    commits: Arc<SharedMean>,
    failures: Arc<AtomicU64>,
    first_failure: Arc<Mutex<Option<String>>>,
}

impl Flight {
    fn new(asynchronous: bool) -> Flight {
        Flight {
            sem: Arc::new(Semaphore::new(if asynchronous { MAX_IN_FLIGHT } else { 1 })),
            commits: Arc::new(SharedMean::default()),
            failures: Arc::new(AtomicU64::new(0)),
            first_failure: Arc::new(Mutex::new(None)),
        }
    }

    /// Takes a slot; the returned callback records the commit latency from `submitted` and
    /// gives the slot back.
    fn submit(&self) -> (Instant, Done) {
        self.sem.acquire();
        let submitted = Instant::now();
        let (sem, commits, failures, first) = (
            self.sem.clone(),
            self.commits.clone(),
            self.failures.clone(),
            self.first_failure.clone(),
        );
        let done: Done = Box::new(move |r| {
            commits.record(submitted.elapsed());
            if let Err(e) = r {
                failures.fetch_add(1, Ordering::Relaxed);
                first
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
            }
            sem.release();
        });
        (submitted, done)
    }

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    fn first_failure(&self) -> Option<String> {
        self.first_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn over(start: Instant, cap: Option<f64>) -> bool {
    cap.is_some_and(|s| start.elapsed() >= Duration::from_secs_f64(s))
}

/// Runs the pure write (and the mixed phase when `p.mixed > 0`).
pub fn run(
    spec: &ConditionSpec,
    store: &mut dyn Condition,
    p: &Params<'_>,
) -> Result<RunResult, BenchError> {
    let mut result = RunResult::new(spec, p.batch, p.writes);
    result.csv = Some(p.csv.display().to_string());
    let mut values = Values::new(p.seed);
    let flight = Flight::new(spec.asynchronous);
    let mut csv = CsvOut::create(p.csv)?;
    let mut call_window = Mean::default();
    let mut call_total = Mean::default();
    // Everything written before the run (the store's creation, the warm-up) reaches the
    // disk first, so the counter starts from the run's own writes.
    let device0 = p.device.and_then(|d| {
        sync_all();
        d.bytes_written().ok()
    });
    let usage0 = Usage::now();
    let start = Instant::now();
    let mut written = 0u64;
    let mut next_row = p.window;
    let mut stop_error = None;
    while written < p.writes {
        if over(start, p.max_secs) {
            result.capped = true;
            break;
        }
        let len = (p.batch as u64).min(p.writes - written);
        let records = values.batch(written, len);
        let (submitted, done) = flight.submit();
        let outcome = store.write_batch(records, done);
        let call = submitted.elapsed();
        call_window.add(call);
        call_total.add(call);
        if let Err(e) = outcome {
            stop_error = Some(e.to_string());
            break;
        }
        written += len;
        if flight.failures() > 0 {
            break;
        }
        if written >= next_row && written < p.writes {
            let secs = start.elapsed().as_secs_f64();
            csv.row(&Row {
                writes: written,
                seconds: secs,
                throughput_wps: written as f64 / secs,
                call_latency_ms: std::mem::take(&mut call_window).mean_ms(),
                commit_latency_ms: flight.commits.take_window().mean_ms(),
            })?;
            next_row = (written / p.window + 1) * p.window;
            emit_progress(written);
        }
    }
    // Async: the run ends when the last write is durable.
    flight.sem.wait_idle();
    let seconds = start.elapsed().as_secs_f64();
    let usage = Usage::now().since(usage0);
    if written > 0 {
        csv.row(&Row {
            writes: written,
            seconds,
            throughput_wps: written as f64 / seconds,
            call_latency_ms: call_window.mean_ms(),
            commit_latency_ms: flight.commits.take_window().mean_ms(),
        })?;
    }
    csv.finish()?;
    emit_progress(written);

    result.writes = written;
    result.seconds = seconds;
    result.throughput_wps = written as f64 / seconds.max(1e-9);
    result.call_latency_ms = call_total.mean_ms();
    result.commit_latency_ms = flight.commits.total().mean_ms();
    result.commit_p50_ms = flight.commits.quantile_ms(0.5);
    result.commit_p99_ms = flight.commits.quantile_ms(0.99);
    result.et = result
        .commit_latency_ms
        .filter(|ms| *ms > 0.0)
        .map(|ms| result.throughput_wps / ms);
    result.user_s = usage.user_s;
    result.sys_s = usage.sys_s;
    result.peak_rss_mb = usage.peak_rss_mb;
    result.failed_calls = flight.failures();
    result.counters = store.counters();
    result.error = stop_error.or_else(|| flight.first_failure());
    let count = store.count()?;
    result.device_bytes = p.device.zip(device0).and_then(|(d, before)| {
        sync_all();
        d.bytes_written()
            .ok()
            .map(|after| after.saturating_sub(before))
    });
    result.count = Some(count);
    result.count_ok = count == written && result.failed_calls == 0;
    if !result.count_ok {
        result.error.get_or_insert(format!(
            "COUNT CHECK FAILED: wrote {written} distinct keys, read back {count}"
        ));
        return Ok(result);
    }
    if p.mixed > 0 && result.error.is_none() {
        let mut keys = KeySet::new(2 * p.writes);
        (0..written).for_each(|i| keys.insert(workload::key(i)));
        // The query-level phase first, then (stores with raw index access) the raw one on the
        // store it left, with its own key stream.
        for (level, seed) in [(ReadLevel::Query, p.seed), (ReadLevel::Raw, p.seed + 1)] {
            if level == ReadLevel::Raw && store.read_raw(2).is_none() {
                continue;
            }
            let m = mixed(spec, store, p, level, seed, &mut values, &mut keys)?;
            if !m.count_ok {
                result.error = Some(format!(
                    "MIXED ({}) COUNT CHECK FAILED: expected {} keys, read back {:?}",
                    level.name(),
                    m.expected_count,
                    m.count
                ));
            }
            match level {
                ReadLevel::Query => result.mixed = Some(m),
                ReadLevel::Raw => result.mixed_raw = Some(m),
            }
            if result.error.is_some() {
                break;
            }
        }
        result.counters = store.counters();
    }
    Ok(result)
}

/// One read (at `level`) then one write per iteration, each its own call, keys uniform in
/// 1..=2N; after an untimed warm-up of the same calls on keys already present.
fn mixed(
    spec: &ConditionSpec,
    store: &mut dyn Condition,
    p: &Params<'_>,
    level: ReadLevel,
    seed: u64,
    values: &mut Values,
    keys: &mut KeySet,
) -> Result<MixedResult, BenchError> {
    let mut m = MixedResult {
        read_level: level.name().into(),
        target_iterations: p.mixed,
        seed,
        ..MixedResult::default()
    };
    let flight = Flight::new(spec.asynchronous);
    // Warm-up: the same read and write calls, on keys the store already holds (so the count
    // check is unchanged); its own key stream.
    let mut warm_keys = MixedKeys::new(seed ^ 0x7761_726d, p.writes);
    let warm_start = Instant::now();
    while m.warmup_iterations < p.warmup.min(p.mixed)
        && !over(warm_start, Some(p.warmup_secs.max(0.0)))
    {
        let key = warm_keys.next_key();
        if let Some(r) = read_at(store, level, key) {
            r?;
        }
        if keys.contains(key) {
            let (_, done) = flight.submit();
            let record = super::condition::Record {
                key,
                value: values.next_uuid(),
            };
            store.write_batch(vec![record], done)?;
        }
        m.warmup_iterations += 1;
    }
    flight.sem.wait_idle();
    let mut chooser = MixedKeys::new(seed, p.writes);
    let usage0 = Usage::now();
    let start = Instant::now();
    let progress_every = p.window.max(1);
    let mut reads = Mean::default();
    for i in 0..p.mixed {
        if over(start, p.max_secs) {
            m.capped = true;
            break;
        }
        let key = chooser.next_key();
        let t = Instant::now();
        let found = match read_at(store, level, key) {
            Some(r) => r?.is_some(),
            None => false,
        };
        reads.add(t.elapsed());
        m.reads_found += u64::from(found);
        let (_, done) = flight.submit();
        let record = super::condition::Record {
            key,
            value: values.next_uuid(),
        };
        store.write_batch(vec![record], done)?;
        keys.insert(key);
        m.iterations = i + 1;
        if flight.failures() > 0 {
            break;
        }
        if m.iterations % progress_every == 0 {
            emit_progress(p.writes + m.iterations);
        }
    }
    flight.sem.wait_idle();
    m.seconds = start.elapsed().as_secs_f64();
    m.mean_read_ms = reads.mean_ms();
    let usage = Usage::now().since(usage0);
    m.user_s = usage.user_s;
    m.sys_s = usage.sys_s;
    m.failed_calls = flight.failures();
    let count = store.count()?;
    m.count = Some(count);
    m.expected_count = keys.len();
    m.count_ok = count == keys.len() && m.failed_calls == 0;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::condition::{self, Family, Record};

    fn params(csv: &std::path::Path, writes: u64, batch: usize, mixed: u64) -> Params<'_> {
        Params {
            batch,
            writes,
            window: 10,
            max_secs: None,
            seed: 3,
            mixed,
            warmup: 5,
            warmup_secs: 5.0,
            csv,
            device: None,
        }
    }

    #[test]
    fn every_in_process_store_writes_reads_back_and_mixes() {
        let tmp = tempfile::tempdir().unwrap();
        let mut specs: Vec<_> = [Family::Kv, Family::Datalog]
            .into_iter()
            .flat_map(condition::all)
            .collect();
        // SQLite is in both families: run it once.
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs.dedup_by(|a, b| a.name == b.name);
        for spec in specs {
            if spec.runner() != condition::Runner::InProcess {
                continue;
            }
            for (writes, batch, mixed) in [(50, 1, 40), (95, 10, 0)] {
                let dir = tmp.path().join(format!("{}-{batch}", spec.name));
                let csv = tmp.path().join(format!("{}-{batch}.csv", spec.name));
                let mut store = condition::open(&spec, &dir).unwrap();
                let r = run(&spec, store.as_mut(), &params(&csv, writes, batch, mixed)).unwrap();
                assert!(r.ok(), "{} b{batch}: {r:?}", spec.name);
                assert_eq!((r.writes, r.count), (writes, Some(writes)), "{}", spec.name);
                assert_eq!(r.mixed.is_some(), mixed > 0);
                assert_eq!(store.read(2).unwrap().map(|v| v.len()), Some(36));
                let rows = crate::common::metrics::read_csv(&csv).unwrap();
                assert_eq!(rows.last().map(|r| r.writes), Some(writes), "{}", spec.name);
            }
        }
    }

    /// A store that loses every other write: the count check must fail the run.
    struct Lossy(u64);

    impl Condition for Lossy {
        fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
            self.0 += records.len() as u64;
            done(Ok(()));
            Ok(())
        }
        fn read(&mut self, _key: u64) -> Result<Option<String>, BenchError> {
            Ok(None)
        }
        fn count(&mut self) -> Result<u64, BenchError> {
            Ok(self.0 / 2)
        }
    }

    #[test]
    fn wrong_count_fails_the_run() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = tmp.path().join("lossy.csv");
        let spec = condition::find("kv-sync-durable").unwrap();
        let r = run(&spec, &mut Lossy(0), &params(&csv, 20, 1, 5)).unwrap();
        assert!(!r.ok());
        assert!(!r.count_ok);
        assert!(r.error.unwrap().contains("COUNT CHECK FAILED"));
        assert!(
            r.mixed.is_none(),
            "no mixed phase on a store that failed its count"
        );
    }
}
