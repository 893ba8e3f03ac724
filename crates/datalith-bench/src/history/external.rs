//! The Datomic peer of workload H through `bench/peers/run.sh datomic history DATA.jsonl
//! WORK_DIR SECONDS ROWS MIN_RUNS` (`bench/peers/datomic/history.clj`, `datomic:mem://`): it
//! loads the data file, prints one `RESULT {"task":"load",...}` line, then one line per row,
//! `{"peer":"datomic","workload":"H","task":"asof25-agg","median_ms":..,"min_ms":..,
//! "runs":..,"count":..,"checksum":..}` (`"error"` for a row that failed), and exits 69 when
//! the peer's runtime is not installed. A full run first calls `install.sh datomic`.

use std::path::Path;
use std::process::Command;

use super::data::Answer;
use super::report::{Cell, Outcome};
use super::rows::Row;
use super::timing::{Measured, Plan};
use crate::common::child;

/// The external peers.
pub const PEERS: [&str; 1] = ["datomic"];

/// `run.sh`'s exit code for a peer whose runtime is not installed.
const NOT_INSTALLED: i32 = 69;
/// `run.sh`'s exit code for a usage error, such as a harness that does not exist.
const USAGE: i32 = 64;

/// What a harness run needs.
pub struct Invocation<'a> {
    pub peers_dir: &'a Path,
    pub data: &'a Path,
    pub work: &'a Path,
    pub log_dir: &'a Path,
    pub plan: Plan,
    /// Run `install.sh PEER` first.
    pub install: bool,
    pub heap: &'a str,
    pub pass: usize,
}

/// What one harness run gave: a cell per row, and its load time.
pub struct Ran {
    pub cells: Vec<Cell>,
    pub load_secs: Option<f64>,
}

/// Runs `peer`'s harness over `rows`.
pub fn run(peer: &str, rows: &[Row], inv: &Invocation<'_>) -> Ran {
    let all = |outcome: Outcome| Ran {
        cells: rows
            .iter()
            .map(|r| Cell {
                peer: peer.to_string(),
                row: r.name.to_string(),
                outcome: outcome.clone(),
            })
            .collect(),
        load_secs: None,
    };
    let script = inv.peers_dir.join("run.sh");
    if !script.is_file() {
        return all(Outcome::Skipped(format!(
            "harness {} not found",
            script.display()
        )));
    }
    if inv.install {
        let log = inv.log_dir.join(format!("{peer}-install.log"));
        let mut cmd = Command::new("bash");
        cmd.arg(inv.peers_dir.join("install.sh")).arg(peer);
        match child::run(cmd, peer, &log, |_| {}) {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                return all(Outcome::Skipped(format!(
                    "install.sh {peer} failed ({}): {}",
                    o.status,
                    child::tail(&log, 2).replace('\n', " / ")
                )))
            }
            Err(e) => return all(Outcome::Skipped(format!("install.sh {peer}: {e}"))),
        }
    }
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(peer)
        .arg("history")
        .arg(inv.data)
        .arg(inv.work)
        .arg(inv.plan.secs.to_string())
        .arg(names.join(","))
        .arg(inv.plan.min_runs.to_string());
    crate::common::jvm::set_heap(&mut cmd, inv.heap);
    let log = inv.log_dir.join(format!("{peer}-p{}.log", inv.pass + 1));
    let out = match child::run(cmd, peer, &log, |_| {}) {
        Ok(o) => o,
        Err(e) => return all(Outcome::Failed(e.to_string())),
    };
    if out.status.code() == Some(NOT_INSTALLED) {
        let why = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SKIP ").map(str::to_string))
            .unwrap_or_else(|| "runtime not installed".into());
        return all(Outcome::Skipped(why));
    }
    if out.status.code() == Some(USAGE) && out.results.is_empty() {
        return all(Outcome::Failed(format!(
            "harness usage error: {}",
            child::tail(&log, 1)
        )));
    }
    let task = |r: &serde_json::Value| r.get("task").and_then(|v| v.as_str()).map(String::from);
    let load_secs = out
        .results
        .iter()
        .find(|r| task(r).as_deref() == Some("load"))
        .and_then(|r| r.get("seconds").and_then(|v| v.as_f64()));
    let cells = rows
        .iter()
        .map(|row| {
            let r = out
                .results
                .iter()
                .rev()
                .find(|r| task(r).as_deref() == Some(row.name));
            Cell {
                peer: peer.to_string(),
                row: row.name.to_string(),
                outcome: match r {
                    None => Outcome::Failed(format!(
                        "no RESULT line; harness exited with {}; log {}: {}",
                        out.status,
                        log.display(),
                        child::tail(&log, 3).replace('\n', " / ")
                    )),
                    Some(r) => parse(r),
                },
            }
        })
        .collect();
    Ran { cells, load_secs }
}

/// One `RESULT` object as an outcome.
pub fn parse(r: &serde_json::Value) -> Outcome {
    if let Some(why) = r.get("skipped").and_then(|v| v.as_str()) {
        return Outcome::Skipped(why.to_string());
    }
    if let Some(e) = r.get("error").and_then(|v| v.as_str()) {
        return Outcome::Failed(e.to_string());
    }
    let f = |k: &str| r.get(k).and_then(|v| v.as_f64());
    let u = |k: &str| r.get(k).and_then(|v| v.as_u64());
    match (
        f("median_ms"),
        f("min_ms"),
        u("runs"),
        u("count"),
        r.get("checksum").and_then(|v| v.as_i64()),
    ) {
        (Some(median_ms), Some(min_ms), Some(runs), Some(count), Some(checksum)) => {
            Outcome::Measured(Measured {
                median_ms,
                min_ms,
                pass_lo_ms: median_ms,
                pass_hi_ms: median_ms,
                passes: 1,
                runs: runs as usize,
                answer: Answer { count, checksum },
            })
        }
        _ => Outcome::Failed(format!(
            "RESULT lacks median_ms, min_ms, runs, count or checksum: {r}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_objects() {
        let v = |s: &str| -> serde_json::Value { serde_json::from_str(s).unwrap() };
        let got = parse(&v(
            r#"{"task":"asof25-agg","median_ms":2.5,"min_ms":2.0,"runs":9,"count":3,"checksum":-4}"#,
        ));
        assert_eq!(
            got,
            Outcome::Measured(Measured {
                median_ms: 2.5,
                min_ms: 2.0,
                pass_lo_ms: 2.5,
                pass_hi_ms: 2.5,
                passes: 1,
                runs: 9,
                answer: Answer {
                    count: 3,
                    checksum: -4
                },
            })
        );
        assert_eq!(
            parse(&v(r#"{"task":"tx-range","error":"no log"}"#)),
            Outcome::Failed("no log".into())
        );
        assert_eq!(
            parse(&v(r#"{"task":"x","skipped":"why"}"#)),
            Outcome::Skipped("why".into())
        );
        assert!(matches!(
            parse(&v(r#"{"task":"x","median_ms":1.0}"#)),
            Outcome::Failed(_)
        ));
    }
}
