//! The JVM peer of workload W: the real Datalevin, Datalog (`transact!`, `transact-async`)
//! and KV (`transact-kv`, `transact-kv-async`), run by the harness in `bench/peers/` through
//! `bench/peers/run.sh datalevin write|mixed ...` (protocol: `bench/peers/README.md`). It
//! prints one `RESULT {json}` line per phase and writes its CSV in our format; exit 69 means
//! Datalevin is not installed (`bench/peers/install.sh datalevin`), exit 3 a failed count.
//! `datalevin-remote` (`write --remote`) is the same harness with a database of Datalevin's
//! server (`common/dtlv_server.rs`) in place of the directory: [`run_datalevin_remote`].

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::args::Plan;
use super::condition::ConditionSpec;
use super::orchestrate::RunId;
use super::result::{MixedResult, RunResult};
use crate::common::child;
use crate::common::dtlv_server::DatalevinServer;

/// Where a peer run puts its files.
pub struct PeerRun<'a> {
    pub plan: &'a Plan,
    pub peers: &'a Path,
    pub logs: &'a Path,
    pub keep_db: bool,
}

/// The harness stops submitting at `--max-secs` itself (its last argument); it is killed only
/// this long after (JVM start and Datalevin loading take ~10 s here, then the in-flight calls
/// finish and the count runs).
fn deadline(max_secs: Option<f64>, warmup_secs: f64) -> Option<Duration> {
    max_secs.map(|s| Duration::from_secs_f64(2.0 * (s + warmup_secs) + 120.0))
}

/// The harness and its `write.clj`, or why the peer is skipped.
fn harness(run: &PeerRun<'_>) -> Result<std::path::PathBuf, String> {
    let run_sh = run.peers.join("run.sh");
    if !run_sh.is_file() || !run.peers.join("datalevin").join("write.clj").is_file() {
        return Err(format!(
            "peer harness {} (run.sh, datalevin/write.clj) not found",
            run.peers.display()
        ));
    }
    Ok(run_sh)
}

/// Runs a Datalevin condition at one batch size (and its mixed phase after batch 1), or says
/// why it cannot.
pub fn run_datalevin(spec: &ConditionSpec, id: RunId, run: &PeerRun<'_>) -> RunResult {
    let batch = id.batch;
    let plan = run.plan;
    let run_sh = match harness(run) {
        Ok(p) => p,
        Err(why) => return RunResult::skipped(spec, batch, plan.writes, &why),
    };
    let tag = id.tag(&spec.name);
    let dir = plan.db_dir.join(&tag);
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(parent) = dir.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let mut result = write_phase(spec, id, run, &run_sh, dir.as_os_str());
    if batch == 1 && plan.mixed > 0 && result.measured() && result.ok() {
        // The query-level phase, then (Datalog: Datalevin has `datoms`) the raw-index one on
        // the store it left, with the next seed, as Datalith's runner does.
        let levels: &[(&str, u64)] = if spec.name.contains("-kv") {
            &[("query", 0)]
        } else {
            &[("query", 0), ("raw", 1)]
        };
        for &(level, seed_offset) in levels {
            let m = run_mixed(
                spec,
                run,
                &run_sh,
                &dir,
                &tag,
                level,
                plan.seed + seed_offset,
            );
            if !m.count_ok {
                result.error = Some(format!(
                    "MIXED ({level}) COUNT CHECK FAILED: expected {} keys, read back {:?}",
                    m.expected_count, m.count
                ));
            }
            let failed = !m.count_ok;
            if level == "raw" {
                result.mixed_raw = Some(m);
            } else {
                result.mixed = Some(m);
            }
            if failed {
                break;
            }
        }
    }
    if !run.keep_db {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// `datalevin-remote` at one batch size: the prepared Datalevin server
/// (`$DATALEVIN_SERVER_DIR`) started for this run alone (a free port of 127.0.0.1, a fresh
/// root under the run's directory, stopped after), and the write harness on its database
/// `<tag>` (its warm-up on `<tag>-warmup` of the same server). `check` is the server's
/// start script, or why there is none (the run is then skipped with it).
pub fn run_datalevin_remote(
    spec: &ConditionSpec,
    id: RunId,
    run: &PeerRun<'_>,
    check: &Result<std::path::PathBuf, String>,
) -> RunResult {
    let plan = run.plan;
    let skip = |why: &str| RunResult::skipped(spec, id.batch, plan.writes, why);
    let script = match check {
        Ok(s) => s,
        Err(why) => return skip(why),
    };
    let run_sh = match harness(run) {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let tag = id.tag(&spec.name);
    let root = plan.db_dir.join(format!("{tag}-server"));
    let log = run.logs.join(format!("{tag}-server.log"));
    let server = match DatalevinServer::start(script, &root, &plan.heap, &log) {
        Ok(s) => s,
        Err(why) => return RunResult::failed(spec, id.batch, plan.writes, &why),
    };
    let db = server.db_uri(&tag);
    let result = write_phase(spec, id, run, &run_sh, std::ffi::OsStr::new(&db));
    drop(server);
    result
}

/// The write harness on `db` (a directory, or a database URI of Datalevin's server) at one
/// batch size: its result line as our result, the count checked.
fn write_phase(
    spec: &ConditionSpec,
    id: RunId,
    run: &PeerRun<'_>,
    run_sh: &Path,
    db: &std::ffi::OsStr,
) -> RunResult {
    let batch = id.batch;
    let plan = run.plan;
    let tag = id.tag(&spec.name);
    let csv = plan.out.join(format!("{tag}.csv"));
    let log = run.logs.join(format!("{tag}.stderr"));
    let mut cmd = Command::new("bash");
    cmd.arg(run_sh)
        .args(["datalevin", "write", &spec.name])
        .arg(db)
        .args([plan.writes.to_string(), batch.to_string()])
        .arg(&csv)
        .args([
            plan.window.to_string(),
            cap_arg(plan.max_secs),
            plan.warmup.to_string(),
            plan.warmup_secs.to_string(),
            plan.seed.to_string(),
        ]);
    crate::common::jvm::set_heap(&mut cmd, &plan.heap);
    let limit = deadline(plan.max_secs, plan.warmup_secs);
    match child::run_until(cmd, &tag, &log, limit, |_| {}) {
        Err(e) => RunResult::failed(spec, batch, plan.writes, &e.to_string()),
        Ok(out) if out.status.code() == Some(69) => RunResult::skipped(
            spec,
            batch,
            plan.writes,
            &format!("Datalevin not installed: {}", child::tail(&log, 1)),
        ),
        Ok(out) if out.timed_out => RunResult::failed(
            spec,
            batch,
            plan.writes,
            &format!(
                "killed after {:?}: the harness cannot stop at --max-secs",
                limit.unwrap_or_default()
            ),
        ),
        Ok(out) => {
            let line = out.results.iter().find(|v| v["phase"] == "write");
            let mut r = match line {
                Some(v) => from_write_line(spec, batch, plan.writes, v),
                None => RunResult::failed(
                    spec,
                    batch,
                    plan.writes,
                    &format!("no RESULT line; stderr: {}", child::tail(&log, 3)),
                ),
            };
            child::note_failed_exit(out.status, &log, &mut r.error);
            r
        }
    }
}

fn run_mixed(
    spec: &ConditionSpec,
    run: &PeerRun<'_>,
    run_sh: &Path,
    dir: &Path,
    tag: &str,
    level: &str,
    seed: u64,
) -> MixedResult {
    let plan = run.plan;
    let csv = plan.out.join(format!("{tag}-mixed-{level}.csv"));
    let log = run.logs.join(format!("{tag}-mixed-{level}.stderr"));
    let mut cmd = Command::new("bash");
    cmd.arg(run_sh)
        .args(["datalevin", "mixed", &spec.name])
        .arg(dir)
        .args([plan.mixed.to_string(), seed.to_string()])
        .arg(&csv)
        .args([
            plan.window.to_string(),
            (2 * plan.writes).to_string(),
            cap_arg(plan.max_secs),
            level.to_string(),
            plan.warmup.min(plan.mixed).to_string(),
            plan.warmup_secs.to_string(),
        ]);
    crate::common::jvm::set_heap(&mut cmd, &plan.heap);
    let mut m = MixedResult {
        read_level: level.to_string(),
        target_iterations: plan.mixed,
        seed,
        ..MixedResult::default()
    };
    match child::run_until(
        cmd,
        tag,
        &log,
        deadline(plan.max_secs, plan.warmup_secs),
        |_| {},
    ) {
        Ok(out) => {
            if let Some(v) = out.results.iter().find(|v| v["phase"] == "mixed") {
                m.iterations = u(v, "iterations");
                m.warmup_iterations = u(v, "warmup_iterations");
                m.capped = v["capped"].as_bool().unwrap_or(false);
                m.seconds = f(v, "seconds");
                m.user_s = f(v, "user_s");
                m.sys_s = f(v, "sys_s");
                m.reads_found = u(v, "reads_found");
                m.mean_read_ms = v["mean_read_ms"].as_f64();
                m.count = v["count"].as_u64();
                m.expected_count = u(v, "expected_count");
                m.count_ok = out.status.success() && m.count == Some(m.expected_count);
            }
        }
        Err(e) => eprintln!("{tag} mixed: {e}"),
    }
    m
}

/// The harness's MAX_SECS argument ("0": no cap).
fn cap_arg(max_secs: Option<f64>) -> String {
    max_secs.map_or_else(|| "0".to_string(), |s| s.to_string())
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

/// Our result from the harness's write line (field names in `bench/peers/README.md`).
fn from_write_line(spec: &ConditionSpec, batch: usize, target: u64, v: &Value) -> RunResult {
    let mut r = RunResult::new(spec, batch, target);
    r.writes = u(v, "writes");
    r.seconds = f(v, "seconds");
    r.throughput_wps = f(v, "throughput_wps");
    r.call_latency_ms = v["mean_call_latency_ms"].as_f64();
    r.commit_latency_ms = v["mean_commit_latency_ms"].as_f64();
    r.commit_p50_ms = v["commit_p50_ms"].as_f64();
    r.commit_p99_ms = v["commit_p99_ms"].as_f64();
    r.et = r
        .commit_latency_ms
        .filter(|ms| *ms > 0.0)
        .map(|ms| r.throughput_wps / ms);
    r.user_s = f(v, "user_s");
    r.sys_s = f(v, "sys_s");
    r.peak_rss_mb = f(v, "peak_rss_kb") / 1024.0;
    r.count = v["count"].as_u64();
    r.capped = v["capped"].as_bool().unwrap_or(false);
    let expected = v["expected_count"].as_u64().unwrap_or(r.writes);
    // A capped run checks the writes it made; an uncapped one must have made them all.
    r.count_ok =
        r.count == Some(expected) && expected == r.writes && (r.writes == target || r.capped);
    if !r.count_ok {
        r.error = Some(format!(
            "COUNT CHECK FAILED: harness wrote {} of {target}, expected {expected}, read back {:?}",
            r.writes, r.count
        ));
    }
    r.csv = v["csv"].as_str().map(str::to_string);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::condition;

    #[test]
    fn write_lines_of_the_harness_become_results() {
        let spec = condition::find("datalevin-async").unwrap();
        let line = serde_json::json!({
            "peer": "datalevin", "workload": "W", "phase": "write",
            "condition": "datalevin-async", "batch": 10, "writes": 1000,
            "seconds": 0.5, "throughput_wps": 2000.0, "calls": 100,
            "mean_call_latency_ms": 0.01, "mean_commit_latency_ms": 2.0,
            "user_s": 1.5, "sys_s": 0.25, "peak_rss_kb": 204800,
            "count": 1000, "expected_count": 1000, "csv": "x.csv"
        });
        let r = from_write_line(&spec, 10, 1000, &line);
        assert!(r.ok(), "{r:?}");
        assert_eq!(
            (r.writes, r.count, r.peak_rss_mb),
            (1000, Some(1000), 200.0)
        );
        assert_eq!(r.et, Some(1000.0));
        assert_eq!(r.mode, "async");

        // Capped at 400 of 1000 writes: fine when all 400 are there, not when one is missing.
        let capped = serde_json::json!({"phase": "write", "writes": 400, "capped": true,
                                        "count": 400, "expected_count": 400});
        let r = from_write_line(&spec, 10, 1000, &capped);
        assert!(r.ok() && r.capped, "{r:?}");
        let lost = serde_json::json!({"phase": "write", "writes": 400, "capped": true,
                                      "count": 399, "expected_count": 400});
        assert!(!from_write_line(&spec, 10, 1000, &lost).ok());

        let short = serde_json::json!({"phase": "write", "writes": 1000, "count": 999,
                                       "expected_count": 1000});
        let r = from_write_line(&spec, 10, 1000, &short);
        assert!(!r.ok());
        assert!(r.error.unwrap().contains("COUNT CHECK FAILED"));
    }
}
