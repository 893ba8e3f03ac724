//! The JVM and Node peers (Datalevin, Datomic, Datascript), each run by its harness in
//! `bench/peers/` in its own process, under the protocol of `bench/peers/README.md`:
//! `run.sh PEER query DATA.jsonl WORK_DIR SECONDS TASKS` prints one
//! `RESULT {"peer":..,"workload":"Q","task":"q1","median_ms":0.61,"runs":123,"count":2500}` per
//! task (`"skipped":"why"` for a task the peer does not have), and exits 69 when the peer's
//! runtime is not installed. A full run first calls `install.sh PEER` (idempotent, registry
//! packages only); a quick run does not. `datalevin-remote` is Datalevin's harness with a
//! running server's URI as a last argument, SERVER (`query.clj`): the harness of the runtime
//! `datalevin`, and its install.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::peer::{Cell, Outcome};
use super::tasks::Task;
use super::timing::{Measured, Plan};
use crate::common::child;

/// The external peers, in run order.
pub const PEERS: [&str; 3] = ["datalevin", "datomic", "datascript"];

/// `run.sh`'s exit code for a peer whose runtime is not installed.
const NOT_INSTALLED: i32 = 69;
/// `run.sh`'s exit code for a usage error, such as a harness that does not exist (yet).
const NO_HARNESS: i32 = 64;

/// What a harness run needs.
pub struct Invocation<'a> {
    pub peers_dir: &'a Path,
    pub data: &'a Path,
    pub dir: &'a Path,
    pub log_dir: &'a Path,
    pub plan: Plan,
    /// Run `install.sh PEER` first (full runs).
    pub install: bool,
    /// The heap of every JVM and Node peer (`--heap`).
    pub heap: &'a str,
    /// The pass (0-based): log files are per pass.
    pub pass: usize,
    /// The spec file of the Python harness (`python.rs`), passed as its last argument.
    pub spec: Option<&'a Path>,
    /// `dtlv://USER:PASSWORD@HOST:PORT` of the running Datalevin server (`datalevin-remote`),
    /// passed as the last argument.
    pub server: Option<&'a str>,
}

/// The `run.sh` peer (runtime and harness) of a peer label.
pub fn runtime(peer: &str) -> &str {
    match peer {
        "datalevin-remote" => "datalevin",
        other => other,
    }
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
    let script = inv.peers_dir.join("run.sh");
    if !script.is_file() {
        return cells(Outcome::Skipped(format!(
            "harness {} not found",
            script.display()
        )));
    }
    let target = match super::python::is_python(peer) {
        true => super::python::install_target(peer),
        false => Some(runtime(peer)),
    };
    if let (true, Some(target)) = (inv.install, target) {
        let log = inv.log_dir.join(format!("{peer}-install.log"));
        let mut cmd = Command::new("bash");
        cmd.arg(inv.peers_dir.join("install.sh")).arg(target);
        match child::run(cmd, peer, &log, |_| {}) {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                return cells(Outcome::Skipped(format!(
                    "install.sh {peer} failed ({}): {}",
                    o.status,
                    child::tail(&log, 2).replace('\n', " / ")
                )))
            }
            Err(e) => return cells(Outcome::Skipped(format!("install.sh {peer}: {e}"))),
        }
    }
    let dir: PathBuf = inv.dir.join(peer);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return cells(Outcome::Failed(format!("{}: {e}", dir.display())));
    }
    let names: Vec<&str> = tasks.iter().map(|t| t.name).collect();
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(runtime(peer))
        .arg("query")
        .arg(inv.data)
        .arg(&dir)
        .arg(inv.plan.secs.to_string())
        .arg(names.join(","));
    if let Some(spec) = inv.spec {
        cmd.arg(spec);
    }
    if let Some(server) = inv.server {
        cmd.arg(server);
    }
    crate::common::jvm::set_heap(&mut cmd, inv.heap);
    let log = inv.log_dir.join(format!("{peer}-p{}.log", inv.pass + 1));
    let out = match child::run(cmd, peer, &log, |_| {}) {
        Ok(o) => o,
        Err(e) => return cells(Outcome::Failed(e.to_string())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    if out.status.code() == Some(NOT_INSTALLED) {
        let why = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SKIP ").map(str::to_string))
            .unwrap_or_else(|| "runtime not installed".into());
        return cells(Outcome::Skipped(why));
    }
    if out.status.code() == Some(NO_HARNESS) && out.results.is_empty() {
        return cells(Outcome::Skipped(format!(
            "no query harness: {}",
            child::tail(&log, 1)
        )));
    }
    let mut cells = Vec::new();
    for t in tasks {
        progress();
        let r = out
            .results
            .iter()
            .rev()
            .find(|r| r.get("task").and_then(|v| v.as_str()) == Some(t.name));
        let outcome = match r {
            None => Outcome::Failed(format!(
                "no RESULT line; harness exited with {}; log {}: {}",
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
    if let (Some(c), Some(e)) = (
        r.get("count").and_then(|v| v.as_u64()),
        r.get("expected_count").and_then(|v| v.as_u64()),
    ) {
        if c != e {
            return Outcome::Failed(format!("count {c}, expected {e}"));
        }
    }
    let median = r.get("median_ms").and_then(|v| v.as_f64());
    let runs = r.get("runs").and_then(|v| v.as_u64());
    let count = r.get("count").and_then(|v| v.as_u64());
    match (median, runs, count) {
        (Some(median_ms), Some(runs), Some(count)) => Outcome::Measured(Measured {
            median_ms,
            min_ms: median_ms,
            max_ms: median_ms,
            passes: 1,
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
                    min_ms: 0.5,
                    max_ms: 0.5,
                    passes: 1,
                    runs: 9,
                    count: 3,
                }),
            ),
            (
                r#"{"task":"init","count":null,"median_ms":null,"skipped":"no init in Datomic"}"#,
                Outcome::Skipped("no init in Datomic".into()),
            ),
            (
                r#"{"task":"add-1","median_ms":9.0,"runs":1,"count":4,"expected_count":5}"#,
                Outcome::Failed("count 4, expected 5".into()),
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
