//! The real Datalevin's `init-db` through `bench/peers/run.sh datalevin init DIR N WARMUP`
//! (harness `bench/peers/datalevin/init.clj`, protocol in `bench/peers/README.md`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::result::InitResult;
use super::{InitCondition, PhaseRun, WARMUP};
use crate::common::child;

const C: InitCondition = InitCondition::Datalevin;

/// Runs the harness on the empty directory `dir`.
pub fn run(dir: &Path, run: &PhaseRun<'_>) -> InitResult {
    let n = run.plan.writes;
    let run_sh = run.peers.join("run.sh");
    if !run_sh.is_file() || !run.peers.join("datalevin").join("init.clj").is_file() {
        return InitResult::skipped(
            C,
            n,
            &format!(
                "peer harness {} (run.sh, datalevin/init.clj) not found",
                run.peers.display()
            ),
        );
    }
    if let Some(parent) = dir.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let log = run.logs.join(format!("{}.stderr", C.name()));
    let mut cmd = Command::new("bash");
    cmd.arg(&run_sh)
        .args(["datalevin", "init"])
        .arg(dir)
        .args([n.to_string(), WARMUP.min(n).to_string()]);
    crate::common::jvm::set_heap(&mut cmd, &run.plan.heap);
    // JVM start (~10 s), the data, the load and the check; generous, but not forever.
    let limit = run
        .plan
        .max_secs
        .map(|s| Duration::from_secs_f64(4.0 * s + 180.0));
    match child::run_until(cmd, C.name(), &log, limit, |_| {}) {
        Err(e) => InitResult::failed(C, n, &e.to_string()),
        Ok(out) if out.status.code() == Some(69) => InitResult::skipped(
            C,
            n,
            &format!("Datalevin not installed: {}", child::tail(&log, 1)),
        ),
        Ok(out) if out.timed_out => InitResult::failed(
            C,
            n,
            &format!("killed after {:?}", limit.unwrap_or_default()),
        ),
        Ok(out) => {
            let mut r = match out.results.iter().find(|v| v["phase"] == "init") {
                Some(v) => from_line(n, v),
                None => InitResult::failed(
                    C,
                    n,
                    &format!("no RESULT line; stderr: {}", child::tail(&log, 3)),
                ),
            };
            child::note_failed_exit(out.status, &log, &mut r.error);
            r
        }
    }
}

/// Our result from the harness's line.
fn from_line(n: u64, v: &Value) -> InitResult {
    let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
    let mut r = InitResult::new(C, n);
    r.items = v["datoms"].as_u64().unwrap_or(0);
    r.seconds = f("seconds");
    r.prep_seconds = f("prep_seconds");
    r.user_s = f("user_s");
    r.sys_s = f("sys_s");
    r.peak_rss_mb = f("peak_rss_kb") / 1024.0;
    r.count = v["count"].as_u64();
    let count_v = v["count_v"].as_u64();
    r.count_ok = r.count == Some(n) && count_v == Some(n) && v["count_ok"] == true;
    if !r.count_ok {
        let p = format!(
            "expected {n} :k and :v datoms, harness read back {:?} and {count_v:?}",
            r.count
        );
        r.error = Some(format!("COUNT CHECK FAILED: {p}"));
        r.check = Some(p);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_lines_become_results() {
        let good = serde_json::json!({"peer": "datalevin", "phase": "init", "entities": 10,
            "datoms": 20, "seconds": 0.5, "prep_seconds": 0.1, "user_s": 1.0, "sys_s": 0.5,
            "peak_rss_kb": 2048, "count": 10, "count_v": 10, "expected_count": 10,
            "count_ok": true});
        let cases = [
            (good.clone(), true),
            (
                serde_json::json!({"phase": "init", "count": 9, "count_v": 10, "count_ok": false}),
                false,
            ),
            (
                serde_json::json!({"phase": "init", "count": 10, "count_v": 9, "count_ok": false}),
                false,
            ),
        ];
        for (line, ok) in cases {
            let r = from_line(10, &line);
            assert_eq!(r.ok(), ok, "{line}");
        }
        let r = from_line(10, &good);
        assert_eq!((r.items, r.peak_rss_mb, r.seconds), (20, 2.0, 0.5));
    }
}
