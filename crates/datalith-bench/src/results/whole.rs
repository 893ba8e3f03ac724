//! Whether a published folder is whole: its files present, every peer of its workload present
//! and measured, every count check of its `summary.jsonl` passed.
//!
//! A cell a peer could not finish (a query stopped at its memory limit, a task over its cap)
//! is a result, reported in `RESULTS.md`; a peer missing altogether, a count that disagrees or
//! a count check not made is a hole, and `results --check` fails on it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::catalog::Published;
use crate::all::verdicts::read_jsonl;

/// How one workload's `summary.jsonl` names its peers and what they must be.
struct Shape {
    /// The field holding the peer's (or condition's, or store's) name.
    key: &'static str,
    /// Every peer a full run has.
    peers: &'static [&'static str],
    /// Whether the workload draws charts (H prints tables only).
    charts: bool,
}

/// The shape of workload `name` (`complex-sf1` is `complex`).
fn shape(name: &str) -> Option<Shape> {
    let (key, peers): (&str, &[&str]) = match name {
        "write-dl" => (
            "condition",
            &[
                "dl-sync",
                "dl-async",
                "sqlite-default",
                "sqlite-wal",
                "datalevin-default",
                "datalevin-async",
                "dl-init",
                "sqlite-init",
                "datalevin-init",
            ],
        ),
        "write-kv" => (
            "condition",
            &[
                "kv-sync-durable",
                "kv-async-durable",
                "sqlite-default",
                "sqlite-wal",
                "lmdb-raw-durable",
                "rocksdb",
                "datalevin-kv",
            ],
        ),
        "query" => (
            "peer",
            &[
                "datalith",
                "datalith-nosync",
                "sqlite",
                "sqlite-nosync",
                "datalevin",
                "datomic",
                "datascript",
            ],
        ),
        // Over the server: Datalevin's server (`datalevin-remote`) is prepared outside the
        // repository and runs only where `$DATALEVIN_SERVER_DIR` names it
        // (bench/peers/README.md, "Datalevin's server"), so a folder is whole without it;
        // its summary says it was skipped and why.
        "query-remote" => ("peer", &["datalith", "datalith-remote"]),
        "write-remote" => ("condition", &["dl-sync", "dl-remote", "datalevin-default"]),
        "blob" => ("store", &["datalith", "sqlite", "rocksdb"]),
        "history" => ("peer", &["datalith", "datomic"]),
        "search" => (
            "peer",
            &["datalith", "lucene", "tantivy", "sqlite-fts5", "datalevin"],
        ),
        n if n.starts_with("complex") => (
            "peer",
            &["datalith", "postgres", "sqlite", "datalevin", "duckdb"],
        ),
        _ => return None,
    };
    Some(Shape {
        key,
        peers,
        charts: name != "history",
    })
}

/// What a folder's workload holds beyond its figures.
#[derive(Debug, Default, PartialEq)]
pub struct Wholeness {
    /// Holes: the check fails on any.
    pub problems: Vec<String>,
    /// Cells that ran and did not finish, as the summary records them (reported, not holes).
    pub failures: Vec<String>,
}

/// Checks `p`.
pub fn check(p: &Published) -> Wholeness {
    let mut w = Wholeness::default();
    let dir = p.workload_dir();
    for file in ["summary.md", "summary.jsonl"] {
        if !dir.join(file).is_file() {
            w.problems.push(format!("{} is missing", file));
        }
    }
    // Runs made before `all` described the machine say what it was in their `RUN.md`.
    if !p.path.join("machine.json").is_file() && !p.path.join("RUN.md").is_file() {
        w.problems
            .push("neither machine.json nor RUN.md says what machine the run measured".into());
    }
    let svgs = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".svg"))
                .count()
        })
        .unwrap_or(0);
    let lines = read_jsonl(&dir.join("summary.jsonl"));
    let Some(shape) = shape(&p.run.workload) else {
        w.problems.push(format!(
            "unknown workload {} (no list of its peers)",
            p.run.workload
        ));
        return w;
    };
    if shape.charts && svgs == 0 {
        w.problems.push("no chart (.svg)".into());
    }
    if lines.is_empty() {
        w.problems.push("summary.jsonl holds no lines".into());
        return w;
    }
    for peer in shape.peers {
        let mine: Vec<&Value> = lines
            .iter()
            .filter(|v| name(v, shape.key) == *peer)
            .collect();
        if mine.is_empty() {
            w.problems.push(format!("{peer} is missing"));
        } else if !mine.iter().any(|v| measured(v)) {
            let why = mine.iter().find_map(|v| reason(v)).unwrap_or_default();
            w.problems.push(format!("{peer} measured nothing ({why})"));
        }
    }
    for v in &lines {
        if let Some(why) = failure(v) {
            w.failures
                .push(format!("{} {}: {}", name(v, shape.key), cell(v), why));
        }
    }
    w.problems.extend(count_problems(&p.run.workload, &lines));
    w
}

fn name<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .filter(|x| !x.is_null())
        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
}

/// The row a line is about (task, query, batch or rate).
fn cell(v: &Value) -> String {
    for k in ["task", "query", "phase"] {
        if let Some(t) = text(v, k) {
            return t;
        }
    }
    if let Some(b) = text(v, "batch") {
        return format!("batch {b}");
    }
    text(v, "target_rate").map_or_else(String::new, |r| format!("{r}/s"))
}

/// Whether a line is a measurement (not skipped, not failed).
fn measured(v: &Value) -> bool {
    reason(v).is_none() && failure(v).is_none()
}

/// Why a line was skipped, if it was.
fn reason(v: &Value) -> Option<String> {
    said_because(v, "skipped").or_else(|| text(v, "skipped"))
}

/// The reason (or note) of a line whose `status` is `status`.
fn said_because(v: &Value, status: &str) -> Option<String> {
    (v.get("status").and_then(Value::as_str) == Some(status)).then(|| {
        text(v, "reason")
            .or_else(|| text(v, "note"))
            .unwrap_or_default()
    })
}

/// Why a line's cell did not finish, if it did not.
fn failure(v: &Value) -> Option<String> {
    if let Some(why) = said_because(v, "failed") {
        return Some(why);
    }
    if v.get("timeout").and_then(Value::as_bool) == Some(true) {
        return Some("timed out".into());
    }
    text(v, "error")
}

/// The count checks each workload's lines carry, made again here.
fn count_problems(workload: &str, lines: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    match workload {
        "write-dl" | "write-kv" => {
            for v in lines.iter().filter(|v| measured(v)) {
                let c = format!("{} {}", name(v, "condition"), cell(v));
                if v.get("count_ok").and_then(Value::as_bool) != Some(true) {
                    out.push(format!("{c}: count check not passed"));
                }
                if let Some(m) = v.get("mixed").filter(|m| !m.is_null()) {
                    if m.get("count_ok").and_then(Value::as_bool) != Some(true) {
                        out.push(format!("{c}: mixed-phase count check not passed"));
                    }
                }
            }
        }
        "query" | "history" => {
            // Every peer's answer to a row must agree (query's write tasks also have their
            // expected count checked by the run itself, which then fails).
            let mut by_row: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
            for v in lines.iter().filter(|v| measured(v)) {
                let answer = format!(
                    "{}{}",
                    text(v, "count").unwrap_or_default(),
                    text(v, "sum").map_or_else(String::new, |s| format!(" sum {s}"))
                );
                by_row
                    .entry(cell(v))
                    .or_default()
                    .push((name(v, "peer").to_string(), answer));
            }
            for (row, answers) in by_row {
                if answers.iter().any(|(_, a)| a.is_empty()) {
                    out.push(format!("{row}: a peer's line has no count"));
                } else if answers.windows(2).any(|w| w[0].1 != w[1].1) {
                    let list: Vec<String> =
                        answers.iter().map(|(p, a)| format!("{p} {a}")).collect();
                    out.push(format!("{row}: counts differ: {}", list.join(", ")));
                }
            }
        }
        "blob" => {
            for v in lines.iter().filter(|v| measured(v)) {
                let n = |k: &str| v.get(k).and_then(Value::as_u64);
                // The run reads every written key back and fails on a wrong one; a measured
                // line without that count was not verified.
                if n("durable").is_none_or(|d| d > 0 && n("verified_keys").unwrap_or(0) == 0) {
                    out.push(format!(
                        "{} {}: durable blobs not verified",
                        name(v, "store"),
                        cell(v)
                    ));
                }
            }
        }
        w if w.starts_with("complex") => {
            for v in lines.iter().filter(|v| measured(v)) {
                let a = text(v, "answer").unwrap_or_default();
                if a != "agrees" && a != "reference" {
                    out.push(format!(
                        "{} {}: answer {}",
                        name(v, "peer"),
                        cell(v),
                        if a.is_empty() { "not checked" } else { &a }
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn count_checks_per_workload() {
        let cases: Vec<(&str, Vec<Value>, Vec<&str>)> = vec![
            (
                "query",
                vec![
                    json!({"peer":"datalith","task":"q1","status":"ok","count":144}),
                    json!({"peer":"sqlite","task":"q1","status":"ok","count":144}),
                    json!({"peer":"datalith","task":"q2","status":"ok","count":1}),
                    json!({"peer":"sqlite","task":"q2","status":"ok","count":2}),
                    json!({"peer":"datomic","task":"q2","status":"skipped","reason":"cap"}),
                ],
                vec!["q2: counts differ: datalith 1, sqlite 2"],
            ),
            (
                "write-kv",
                vec![
                    json!({"condition":"rocksdb","batch":1,"count_ok":true,"mixed":{"count_ok":false}}),
                    json!({"condition":"sqlite-wal","batch":10,"count_ok":false}),
                    json!({"condition":"datalevin-kv","batch":1,"skipped":"not installed"}),
                ],
                vec![
                    "rocksdb batch 1: mixed-phase count check not passed",
                    "sqlite-wal batch 10: count check not passed",
                ],
            ),
            (
                "complex-sf1",
                vec![
                    json!({"peer":"postgres","query":"q1","answer":"reference"}),
                    json!({"peer":"datalith","query":"q1","error":"memory limit"}),
                    json!({"peer":"sqlite","query":"q1","answer":"differs: row 2"}),
                    json!({"peer":"duckdb","query":"q1","answer":"unchecked"}),
                ],
                vec![
                    "sqlite q1: answer differs: row 2",
                    "duckdb q1: answer unchecked",
                ],
            ),
            (
                "blob",
                vec![
                    json!({"store":"datalith","target_rate":10.0,"status":"ok","durable":10,"verified_keys":10}),
                    json!({"store":"sqlite","target_rate":10.0,"status":"ok","durable":10,"verified_keys":0}),
                ],
                vec!["sqlite 10.0/s: durable blobs not verified"],
            ),
        ];
        for (workload, lines, want) in cases {
            assert_eq!(count_problems(workload, &lines), want, "{workload}");
        }
    }

    #[test]
    fn a_failed_cell_is_a_result_and_a_missing_peer_a_hole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("2026-12-02-complex");
        std::fs::create_dir(&p).unwrap();
        for f in ["summary.md", "machine.json", "c.svg"] {
            std::fs::write(p.join(f), "x").unwrap();
        }
        let lines = [
            json!({"peer":"postgres","query":"q1","answer":"reference"}),
            json!({"peer":"datalith","query":"q1","error":"memory limit"}),
            json!({"peer":"datalith","query":"q2","answer":"agrees"}),
            json!({"peer":"sqlite","query":"q1","answer":"agrees"}),
            json!({"peer":"duckdb","query":"q1","answer":"agrees"}),
        ];
        let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(p.join("summary.jsonl"), text).unwrap();
        let published = Published {
            folder: "2026-12-02-complex".into(),
            path: p.clone(),
            record: super::super::record::RunRecord {
                commit: "abc".into(),
                date: "2026-12-02 00:00:00".into(),
                runs: vec![],
            },
            run: super::super::record::WorkloadRun {
                workload: "complex-sf1".into(),
                dir: ".".into(),
                command: "c".into(),
                wall_s: 1.0,
                exit: Some(0),
            },
        };
        let w = check(&published);
        assert_eq!(w.problems, vec!["datalevin is missing".to_string()]);
        assert_eq!(w.failures, vec!["datalith q1: memory limit".to_string()]);
    }
}
