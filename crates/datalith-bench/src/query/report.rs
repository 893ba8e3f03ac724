//! The end of a run: result counts checked equal across peers, `summary.md` (task x peer
//! median ms, counts, ratios to the best peer of the row), `summary.jsonl` (one object per
//! cell), and the verdicts BENCHMARKS.md and the issue ask for.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use super::peer::{Cell, Outcome};
use super::tasks::{Kind, Task};
use crate::common::loopback::Floor;
use crate::common::BenchError;

/// The whole table.
pub struct Table<'a> {
    /// People in the data file: a write task must leave 5 datoms of each (none after
    /// retract-5).
    pub people: u64,
    pub tasks: &'a [Task],
    pub peers: &'a [String],
    pub cells: &'a [Cell],
    /// With `--remote`: the loopback round trip of this run (the median pass's), the floor
    /// under what the server adds.
    pub loopback: Option<Floor>,
}

/// A task whose peers disagree on the result count.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub task: String,
    pub counts: Vec<(String, u64)>,
}

/// One pass/fail line.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub what: String,
    /// `None` when it could not be judged (a cell missing).
    pub pass: Option<bool>,
    pub detail: String,
}

/// Datalith's own conditions: never counted as the best *peer* of a row.
pub const DATALITH_VARIANTS: [&str; 4] = [
    "datalith",
    "datalith-nosync",
    "datalith-writemap-mapasync",
    "datalith-remote",
];

/// The most q1 from Python may take, as a multiple of the Rust API's q1 (`query --python`):
/// the cost of converting the query and its result.
pub const PY_Q1_MAX_RATIO: f64 = 1.25;

/// The most the server may add to q1's median (`query --remote`), in ms.
pub const Q1_OVERHEAD_MAX_MS: f64 = 0.050;

impl Table<'_> {
    fn cell(&self, peer: &str, task: &str) -> Option<&Outcome> {
        self.cells
            .iter()
            .find(|c| c.peer == peer && c.task == task)
            .map(|c| &c.outcome)
    }

    /// The median ms of a measured cell.
    pub fn ms(&self, peer: &str, task: &str) -> Option<f64> {
        match self.cell(peer, task) {
            Some(Outcome::Measured(m)) => Some(m.median_ms),
            _ => None,
        }
    }

    /// Tasks whose measured counts differ between peers, or (write tasks) from the datoms the
    /// task must leave.
    pub fn mismatches(&self) -> Vec<Mismatch> {
        let mut out = Vec::new();
        for t in self.tasks {
            let counts: Vec<(String, u64)> = self
                .peers
                .iter()
                .filter_map(|p| match self.cell(p, t.name) {
                    Some(Outcome::Measured(m)) => Some((p.clone(), m.count)),
                    _ => None,
                })
                .collect();
            let expected = match (t.kind, t.name) {
                (Kind::Write, "retract-5") => Some(0),
                (Kind::Write, _) => Some(5 * self.people),
                (Kind::Read, _) => None,
            };
            let wrong = expected.is_some_and(|e| counts.iter().any(|(_, c)| *c != e));
            if wrong || counts.windows(2).any(|w| w[0].1 != w[1].1) {
                out.push(Mismatch {
                    task: t.name.to_string(),
                    counts,
                });
            }
        }
        out
    }

    /// The fastest measured peer of a row, and its ms.
    fn best(&self, task: &str, except: &[&str]) -> Option<(String, f64)> {
        self.peers
            .iter()
            .filter(|p| !except.contains(&p.as_str()))
            .filter_map(|p| self.ms(p, task).map(|ms| (p.clone(), ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The verdicts: Datalith fastest per row, and the ratios the issue names.
    pub fn verdicts(&self, plans_equal: Option<bool>) -> Vec<Verdict> {
        if self.peers.iter().any(|p| super::python::is_python(p)) {
            return self.python_verdicts();
        }
        let mut out = Vec::new();
        for t in self.tasks {
            // Reads: the durable store. Writes: the seed's condition (no fsync at commit, as
            // Datalevin's `:nosync`), durable beside. No Datalith variant is a "peer".
            let ours = match t.kind {
                Kind::Read => "datalith",
                Kind::Write => "datalith-nosync",
            };
            let others_except = DATALITH_VARIANTS.to_vec();
            let mine = self.ms(ours, t.name);
            let best = self.best(t.name, &others_except);
            let (pass, detail) = match (mine, &best) {
                (Some(m), Some((p, b))) => (
                    Some(m < *b),
                    format!("{ours} {m:.3} ms vs best peer {p} {b:.3} ms: {:.2}x", b / m),
                ),
                (Some(m), None) => (None, format!("{ours} {m:.3} ms; no peer measured")),
                _ => (None, format!("{ours} not measured")),
            };
            out.push(Verdict {
                what: format!("{}: {ours} fastest of all peers", t.name),
                pass,
                detail,
            });
            if t.kind == Kind::Write {
                if let (Some(d), Some((p, b))) = (self.ms("datalith", t.name), &best) {
                    out.push(Verdict {
                        what: format!("{}: datalith (durable) vs best peer", t.name),
                        pass: None,
                        detail: format!("{d:.3} ms vs {p} {b:.3} ms: {:.2}x", b / d),
                    });
                }
            }
        }
        let ratio = |what: &str, a: &str, b: &str, max: f64| {
            let (x, y) = (self.ms("datalith", a), self.ms("datalith", b));
            match (x, y) {
                (Some(x), Some(y)) if y > 0.0 => Verdict {
                    what: what.to_string(),
                    pass: Some(x / y <= max),
                    detail: format!("{a} {x:.3} ms / {b} {y:.3} ms = {:.2}", x / y),
                },
                _ => Verdict {
                    what: what.to_string(),
                    pass: None,
                    detail: format!("{a} or {b} not measured"),
                },
            }
        };
        out.push(ratio("q2-switch within 10% of q2", "q2-switch", "q2", 1.10));
        if let Some(eq) = plans_equal {
            out.push(Verdict {
                what: "q2 and q2-switch run the same plan (explain)".into(),
                pass: Some(eq),
                detail: if eq {
                    "identical steps".into()
                } else {
                    "steps differ: see explain.md".into()
                },
            });
        }
        out.push(ratio(
            "qpred2 within 10% of qpred1",
            "qpred2",
            "qpred1",
            1.10,
        ));
        out.push(match self.ms("datalith", "q5") {
            Some(ms) => Verdict {
                what: "q5 under 10 ms".into(),
                pass: Some(ms < 10.0),
                detail: format!("{ms:.3} ms"),
            },
            None => Verdict {
                what: "q5 under 10 ms".into(),
                pass: None,
                detail: "q5 not measured".into(),
            },
        });
        out.push(ratio(
            "lookup-q within 2x of lookup-raw",
            "lookup-q",
            "lookup-raw",
            2.0,
        ));
        out.push(
            match (
                self.ms("datalith", "lookup-raw"),
                self.ms("datomic", "lookup-q"),
            ) {
                (Some(raw), Some(dq)) => Verdict {
                    what: "lookup-raw at least 20x faster than Datomic's Datalog lookup".into(),
                    pass: Some(dq / raw >= 20.0),
                    detail: format!(
                        "datomic lookup-q {dq:.3} ms / datalith lookup-raw {raw:.3} ms = {:.1}x",
                        dq / raw
                    ),
                },
                _ => Verdict {
                    what: "lookup-raw at least 20x faster than Datomic's Datalog lookup".into(),
                    pass: None,
                    detail: "datomic lookup-q or datalith lookup-raw not measured".into(),
                },
            },
        );
        if self.peers.iter().any(|p| p == "datalith-remote") {
            out.extend(self.remote_verdicts());
        }
        out
    }

    /// `--python`: the wheel against the other Python libraries on every row (reads durable,
    /// writes without fsync as in the Rust table, durable beside), and q1's conversion cost.
    fn python_verdicts(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        let ours_all = ["datalith", "datalith-py", "datalith-py-nosync"];
        for t in self.tasks {
            let ours = match t.kind {
                Kind::Read => "datalith-py",
                Kind::Write => "datalith-py-nosync",
            };
            let best = self.best(t.name, &ours_all);
            let (pass, detail) = match (self.ms(ours, t.name), &best) {
                (Some(m), Some((p, b))) => (
                    Some(m < *b),
                    format!(
                        "{ours} {m:.3} ms vs best Python peer {p} {b:.3} ms: {:.2}x",
                        b / m
                    ),
                ),
                (Some(m), None) => (None, format!("{ours} {m:.3} ms; no Python peer measured")),
                (None, _) => (None, format!("{ours} {}", self.status(None, ours, t.name))),
            };
            out.push(Verdict {
                what: format!("{}: {ours} faster than every Python peer", t.name),
                pass,
                detail,
            });
            if t.kind == Kind::Write {
                if let (Some(d), Some(s)) = (
                    self.ms("datalith-py", t.name),
                    self.ms("sqlite3-py", t.name),
                ) {
                    out.push(Verdict {
                        what: format!("{}: datalith-py (durable) vs sqlite3-py (durable)", t.name),
                        pass: None,
                        detail: format!("{d:.3} ms vs {s:.3} ms: {:.2}x", s / d),
                    });
                }
            }
        }
        let what = format!("q1 from Python at most {PY_Q1_MAX_RATIO}x the Rust API's q1");
        out.push(
            match (self.ms("datalith-py", "q1"), self.ms("datalith", "q1")) {
                (Some(py), Some(rs)) if rs > 0.0 => Verdict {
                    what,
                    pass: Some(py / rs <= PY_Q1_MAX_RATIO),
                    detail: format!(
                        "datalith-py {py:.4} ms / datalith {rs:.4} ms = {:.2}x",
                        py / rs
                    ),
                },
                _ => Verdict {
                    what,
                    pass: None,
                    detail: "datalith-py or datalith q1 not measured".into(),
                },
            },
        );
        out
    }

    /// `--remote`: what the server adds to q1, and each row against Datalevin's server.
    fn remote_verdicts(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        let what = format!(
            "q1: the server adds at most {:.0} us to the embedded call (p50)",
            Q1_OVERHEAD_MAX_MS * 1e3
        );
        out.push(
            match (self.ms("datalith-remote", "q1"), self.ms("datalith", "q1")) {
                (Some(r), Some(e)) => Verdict {
                    what,
                    pass: Some(r - e <= Q1_OVERHEAD_MAX_MS),
                    detail: format!(
                        "datalith-remote {r:.4} ms - datalith {e:.4} ms = {:.1} us{}",
                        (r - e) * 1e3,
                        self.loopback.map_or(String::new(), |f| format!(
                            " (a bare TCP round trip over loopback here: {:.1} us p50)",
                            f.p50_us
                        ))
                    ),
                },
                _ => Verdict {
                    what,
                    pass: None,
                    detail: "datalith-remote or datalith q1 not measured".into(),
                },
            },
        );
        if !self.peers.iter().any(|p| p == "datalevin-remote") {
            return out;
        }
        for t in self.tasks {
            let what = format!("{}: datalith-remote faster than datalevin-remote", t.name);
            let (ours, theirs) = (
                self.ms("datalith-remote", t.name),
                self.ms("datalevin-remote", t.name),
            );
            out.push(match (ours, theirs) {
                (Some(a), Some(b)) => Verdict {
                    what,
                    pass: Some(a < b),
                    detail: format!("{a:.3} ms vs {b:.3} ms: {:.2}x", b / a),
                },
                _ => Verdict {
                    what,
                    pass: None,
                    detail: format!(
                        "not measured: datalith-remote {}, datalevin-remote {}",
                        self.status(ours, "datalith-remote", t.name),
                        self.status(theirs, "datalevin-remote", t.name)
                    ),
                },
            });
        }
        out
    }

    /// A cell's median, or why it has none.
    fn status(&self, ms: Option<f64>, peer: &str, task: &str) -> String {
        match (ms, self.cell(peer, task)) {
            (Some(ms), _) => format!("{ms:.3} ms"),
            (None, Some(Outcome::Skipped(_))) => "skipped".into(),
            (None, Some(Outcome::Failed(_))) => "failed".into(),
            _ => "not run".into(),
        }
    }

    /// `summary.md`.
    pub fn markdown(&self, header: &str, verdicts: &[Verdict], mismatches: &[Mismatch]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Workload Q: queries and transactions\n\n{header}\n");
        let _ = writeln!(
            s,
            "Median ms per task over the passes (the median of each pass's median; lower is \
             better); in brackets the ratio to the fastest peer of the row (1.00 = fastest). \
             Reads run on the durable stores only. The spread table below gives each cell's \
             min-max over the passes.\n"
        );
        let _ = write!(s, "| task | count |");
        for p in self.peers {
            let _ = write!(s, " {p} |");
        }
        let _ = writeln!(s, " fastest |");
        let _ = write!(s, "|---|---:|");
        for _ in self.peers {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s, "---|");
        for t in self.tasks {
            let counts: Vec<u64> = self
                .peers
                .iter()
                .filter_map(|p| match self.cell(p, t.name) {
                    Some(Outcome::Measured(m)) => Some(m.count),
                    _ => None,
                })
                .collect();
            let count = match counts.first() {
                None => "-".to_string(),
                Some(c) if counts.iter().all(|x| x == c) => c.to_string(),
                Some(_) => "**MISMATCH**".to_string(),
            };
            let best = self.best(t.name, &[]);
            let _ = write!(s, "| {} | {count} |", t.name);
            for p in self.peers {
                let text = match self.cell(p, t.name) {
                    Some(Outcome::Measured(m)) => match &best {
                        Some((_, b)) if *b > 0.0 => {
                            format!("{} ({:.2})", fmt_ms(m.median_ms), m.median_ms / b)
                        }
                        _ => fmt_ms(m.median_ms),
                    },
                    Some(Outcome::Skipped(_)) => "skipped".to_string(),
                    Some(Outcome::Failed(_)) => "**FAILED**".to_string(),
                    None => "-".to_string(),
                };
                let _ = write!(s, " {text} |");
            }
            let _ = writeln!(
                s,
                " {} |",
                best.map(|(p, _)| p).unwrap_or_else(|| "-".into())
            );
        }
        self.spread_markdown(&mut s);
        let _ = writeln!(s, "\n## Verdicts\n");
        for v in verdicts {
            let mark = match v.pass {
                Some(true) => "PASS",
                Some(false) => "FAIL",
                None => "n/a",
            };
            let _ = writeln!(s, "- **{mark}** {}: {}", v.what, v.detail);
        }
        if !mismatches.is_empty() {
            let _ = writeln!(s, "\n## Result counts differ (the run failed)\n");
            for m in mismatches {
                let _ = writeln!(s, "- {}: {:?}", m.task, m.counts);
            }
        }
        let notes: BTreeMap<String, Vec<String>> =
            self.cells.iter().fold(BTreeMap::new(), |mut acc, c| {
                match &c.outcome {
                    Outcome::Skipped(why) => acc
                        .entry(format!("{} skipped: {why}", c.peer))
                        .or_default()
                        .push(c.task.clone()),
                    Outcome::Failed(why) => acc
                        .entry(format!("{} FAILED: {why}", c.peer))
                        .or_default()
                        .push(c.task.clone()),
                    Outcome::Measured(_) => {}
                }
                acc
            });
        if !notes.is_empty() {
            let _ = writeln!(s, "\n## Not measured\n");
            for (why, tasks) in notes {
                let _ = writeln!(s, "- {why} ({})", tasks.join(", "));
            }
        }
        let _ = writeln!(s, "\n## Tasks\n");
        for t in self.tasks {
            let text = t.query.map(|q| format!(": `{q}`")).unwrap_or_default();
            let input = t
                .input
                .map(|i| format!(" with input `{i}`"))
                .unwrap_or_default();
            let _ = writeln!(s, "- {} ({}){text}{input}", t.name, t.about);
        }
        s
    }

    /// The min-max of every measured cell over the passes, and the passes it merged.
    fn spread_markdown(&self, s: &mut String) {
        let _ = writeln!(s, "\n## Spread over passes (min-max ms, passes)\n");
        crate::common::markdown::peer_table_header(s, "task", self.peers);
        for t in self.tasks {
            let _ = write!(s, "| {} |", t.name);
            for p in self.peers {
                let text = match self.cell(p, t.name) {
                    Some(Outcome::Measured(m)) => {
                        format!("{}-{} ({})", fmt_ms(m.min_ms), fmt_ms(m.max_ms), m.passes)
                    }
                    _ => "-".to_string(),
                };
                let _ = write!(s, " {text} |");
            }
            let _ = writeln!(s);
        }
    }

    /// `summary.jsonl`: one object per cell.
    pub fn write_jsonl(&self, path: &Path) -> Result<(), BenchError> {
        let mut f = std::fs::File::create(path).map_err(BenchError::io(path))?;
        for c in self.cells {
            let v = match &c.outcome {
                Outcome::Measured(m) => serde_json::json!({
                    "workload": "query", "peer": c.peer, "task": c.task, "status": "ok",
                    "median_ms": m.median_ms, "min_ms": m.min_ms, "max_ms": m.max_ms,
                    "passes": m.passes, "runs": m.runs, "count": m.count,
                }),
                Outcome::Skipped(why) => serde_json::json!({
                    "workload": "query", "peer": c.peer, "task": c.task, "status": "skipped",
                    "reason": why,
                }),
                Outcome::Failed(why) => serde_json::json!({
                    "workload": "query", "peer": c.peer, "task": c.task, "status": "failed",
                    "reason": why,
                }),
            };
            writeln!(f, "{v}").map_err(BenchError::io(path))?;
        }
        Ok(())
    }
}

/// Milliseconds with about three significant digits.
fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::tasks;
    use super::super::timing::Measured;
    use super::*;

    fn cell(peer: &str, task: &str, ms: f64, count: u64) -> Cell {
        Cell {
            peer: peer.into(),
            task: task.into(),
            outcome: Outcome::Measured(Measured {
                median_ms: ms,
                min_ms: ms,
                max_ms: ms,
                passes: 1,
                runs: 3,
                count,
            }),
        }
    }

    #[test]
    fn counts_ratios_and_verdicts() {
        let ts: Vec<Task> = ["q2", "q2-switch", "add-1"]
            .iter()
            .filter_map(|n| tasks::by_name(n))
            .collect();
        let peers: Vec<String> = ["datalith", "datalith-nosync", "sqlite"]
            .map(String::from)
            .to_vec();
        let cells = vec![
            cell("datalith", "q2", 1.0, 10),
            cell("sqlite", "q2", 2.0, 10),
            cell("datalith", "q2-switch", 1.05, 10),
            cell("sqlite", "q2-switch", 0.5, 11),
            cell("datalith", "add-1", 90.0, 5),
            cell("datalith-nosync", "add-1", 30.0, 5),
            cell("sqlite", "add-1", 60.0, 5),
        ];
        let t = Table {
            people: 1,
            tasks: &ts,
            peers: &peers,
            cells: &cells,
            loopback: None,
        };
        let mm = t.mismatches();
        assert_eq!(mm.len(), 1);
        assert_eq!(mm[0].task, "q2-switch");
        let v = t.verdicts(Some(true));
        let get = |what: &str| v.iter().find(|x| x.what == what).unwrap().pass;
        assert_eq!(get("q2: datalith fastest of all peers"), Some(true));
        assert_eq!(get("q2-switch: datalith fastest of all peers"), Some(false));
        assert_eq!(
            get("add-1: datalith-nosync fastest of all peers"),
            Some(true)
        );
        assert_eq!(get("q2-switch within 10% of q2"), Some(true));
        assert_eq!(get("q5 under 10 ms"), None);
        let md = t.markdown("h", &v, &mm);
        assert!(
            md.contains("| q2 | 10 | 1.00 (1.00) | - | 2.00 (2.00) | datalith |"),
            "{md}"
        );
        assert!(md.contains("**MISMATCH**"));
    }

    #[test]
    fn remote_verdicts_judge_the_q1_overhead_and_each_row_against_datalevins_server() {
        let ts: Vec<Task> = ["q1", "q2"]
            .iter()
            .filter_map(|n| tasks::by_name(n))
            .collect();
        let peers: Vec<String> = ["datalith", "datalith-remote", "datalevin-remote"]
            .map(String::from)
            .to_vec();
        let mut cells = vec![
            cell("datalith", "q1", 0.010, 5),
            cell("datalith-remote", "q1", 0.055, 5),
            cell("datalevin-remote", "q1", 0.5, 5),
            cell("datalith", "q2", 0.02, 5),
            cell("datalith-remote", "q2", 0.3, 5),
        ];
        cells.push(Cell {
            peer: "datalevin-remote".into(),
            task: "q2".into(),
            outcome: Outcome::Skipped("no server".into()),
        });
        let t = Table {
            people: 1,
            tasks: &ts,
            peers: &peers,
            cells: &cells,
            loopback: None,
        };
        let v = t.verdicts(None);
        let get = |what: &str| v.iter().find(|x| x.what == what).unwrap();
        let q1 = get("q1: the server adds at most 50 us to the embedded call (p50)");
        assert_eq!(q1.pass, Some(true), "{q1:?}");
        assert!(q1.detail.contains("45.0 us"), "{q1:?}");
        assert_eq!(
            get("q1: datalith-remote faster than datalevin-remote").pass,
            Some(true)
        );
        let q2 = get("q2: datalith-remote faster than datalevin-remote");
        assert_eq!(q2.pass, None);
        assert!(q2.detail.contains("datalevin-remote skipped"), "{q2:?}");
        // datalith-remote is Datalith, never the best peer of a row.
        assert_eq!(get("q1: datalith fastest of all peers").pass, Some(true));
    }

    #[test]
    fn write_counts_must_be_the_datoms_left() {
        let ts: Vec<Task> = ["add-all", "retract-5"]
            .iter()
            .filter_map(|n| tasks::by_name(n))
            .collect();
        let peers: Vec<String> = ["datalith", "sqlite"].map(String::from).to_vec();
        let cells = vec![
            cell("datalith", "add-all", 1.0, 10),
            cell("sqlite", "add-all", 1.0, 10),
            cell("datalith", "retract-5", 1.0, 3),
            cell("sqlite", "retract-5", 1.0, 3),
        ];
        let t = Table {
            people: 2,
            tasks: &ts,
            peers: &peers,
            cells: &cells,
            loopback: None,
        };
        let mm: Vec<String> = t.mismatches().into_iter().map(|m| m.task).collect();
        assert_eq!(mm, ["retract-5"], "agreeing peers, yet 3 datoms left");
    }
}
