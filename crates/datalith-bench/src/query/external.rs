//! The JVM and Node peers (Datalevin, Datomic, Datascript), each run by its harness
//! `bench/peers/<peer>/query.sh` in its own process.
//!
//! Protocol (also in `bench/peers/README.md`): the harness is called as
//! `query.sh --data FILE --tasks t1,t2 --secs S --min-runs N --dir DIR`; it loads the people
//! file, runs each task with the same timing rule as ours (warm-up a third of `S`, then repeat
//! until `S` seconds and `N` runs; write tasks on a fresh store each run, with the schema
//! installed before the clock starts), and prints on stdout, per task, one line
//! `RESULT {"task":"q1","median_ms":0.61,"runs":812,"count":2497}` (or `"skipped":"why"`,
//! or `"error":"what"`), and `PROGRESS <tasks done>` after each. A harness whose runtime is
//! missing prints `RESULT {"unavailable":"why"}` and exits 0. With `DATALITH_PEER_NO_INSTALL=1`
//! (quick runs) it does not try to install its runtime first.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::peer::{Cell, Outcome};
use super::tasks::Task;
use super::timing::{Measured, Plan};
use crate::common::child;

/// The external peers, in run order.
pub const PEERS: [&str; 3] = ["datalevin", "datomic", "datascript"];

/// Where `bench/peers` is: `--peers-dir`, else the nearest `bench/peers` above the current
/// directory, else the one of the source tree this binary was built from.
pub fn peers_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(d) = cwd
            .ancestors()
            .map(|d| d.join("bench").join("peers"))
            .find(|d| d.is_dir())
        {
            return d;
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .join("bench")
        .join("peers")
}

/// What a harness run needs.
pub struct Invocation<'a> {
    pub peers_dir: &'a Path,
    pub data: &'a Path,
    pub dir: &'a Path,
    pub log_dir: &'a Path,
    pub plan: Plan,
    pub install: bool,
}

/// Runs `peer`'s harness over `tasks`; every task gets a cell (measured, skipped or failed).
pub fn run(
    peer: &str,
    tasks: &[Task],
    inv: &Invocation<'_>,
    mut progress: impl FnMut(),
) -> Vec<Cell> {
    let cells = |outcome: Outcome| -> Vec<Cell> {
        tasks
            .iter()
            .map(|t| Cell {
                peer: peer.to_string(),
                task: t.name.to_string(),
                outcome: outcome.clone(),
            })
            .collect()
    };
    let script = inv.peers_dir.join(peer).join("query.sh");
    if !script.is_file() {
        return cells(Outcome::Skipped(format!(
            "harness {} not found",
            script.display()
        )));
    }
    let dir: PathBuf = inv.dir.join(peer);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return cells(Outcome::Failed(format!("{}: {e}", dir.display())));
    }
    let names: Vec<&str> = tasks.iter().map(|t| t.name).collect();
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg("--data")
        .arg(inv.data)
        .arg("--tasks")
        .arg(names.join(","))
        .arg("--secs")
        .arg(inv.plan.secs.to_string())
        .arg("--min-runs")
        .arg(inv.plan.min_runs.to_string())
        .arg("--dir")
        .arg(&dir);
    if !inv.install {
        cmd.env("DATALITH_PEER_NO_INSTALL", "1");
    }
    let log = inv.log_dir.join(format!("{peer}.log"));
    let out = match child::run(cmd, peer, &log, |_| progress()) {
        Ok(o) => o,
        Err(e) => return cells(Outcome::Failed(e.to_string())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(why) = out
        .results
        .iter()
        .find_map(|r| r.get("unavailable").and_then(|v| v.as_str()))
    {
        return cells(Outcome::Skipped(format!("runtime missing: {why}")));
    }
    let mut cells = Vec::new();
    for t in tasks {
        let r = out
            .results
            .iter()
            .find(|r| r.get("task").and_then(|v| v.as_str()) == Some(t.name));
        let outcome = match r {
            None if out.status.success() => {
                Outcome::Failed(format!("no RESULT line (log {})", log.display()))
            }
            None => Outcome::Failed(format!(
                "harness exited with {}; log {}: {}",
                out.status,
                log.display(),
                child::tail(&log, 3).replace('\n', " / ")
            )),
            Some(r) => parse(r),
        };
        cells.push(Cell {
            peer: peer.to_string(),
            task: t.name.to_string(),
            outcome,
        });
    }
    cells
}

/// One `RESULT` object as an outcome.
pub fn parse(r: &serde_json::Value) -> Outcome {
    if let Some(why) = r.get("skipped").and_then(|v| v.as_str()) {
        return Outcome::Skipped(why.to_string());
    }
    if let Some(e) = r.get("error").and_then(|v| v.as_str()) {
        return Outcome::Failed(e.to_string());
    }
    let median = r.get("median_ms").and_then(|v| v.as_f64());
    let runs = r.get("runs").and_then(|v| v.as_u64());
    let count = r.get("count").and_then(|v| v.as_u64());
    match (median, runs, count) {
        (Some(median_ms), Some(runs), Some(count)) => Outcome::Measured(Measured {
            median_ms,
            runs: runs as usize,
            count,
        }),
        _ => Outcome::Failed(format!("RESULT lacks median_ms, runs or count: {r}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_objects() {
        let cases = [
            (
                r#"{"task":"q1","median_ms":0.5,"runs":9,"count":3}"#,
                Outcome::Measured(Measured {
                    median_ms: 0.5,
                    runs: 9,
                    count: 3,
                }),
            ),
            (
                r#"{"task":"q1","skipped":"no init-db"}"#,
                Outcome::Skipped("no init-db".into()),
            ),
            (
                r#"{"task":"q1","error":"boom"}"#,
                Outcome::Failed("boom".into()),
            ),
        ];
        for (json, want) in cases {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(parse(&v), want, "{json}");
        }
        let v: serde_json::Value = serde_json::from_str(r#"{"task":"q1","runs":1}"#).unwrap();
        assert!(matches!(parse(&v), Outcome::Failed(_)));
    }
}
