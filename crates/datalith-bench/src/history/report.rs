//! The end of a run: passes merged into one cell per (peer, row), every answer checked against
//! the generator's, `summary.md` (median and min ms per row and peer, the ratio to Datalith,
//! the verdicts), `summary.jsonl` and `history.csv` (one line per cell).
//!
//! Invariant: a merged cell is `Measured` only when every pass measured it with the same
//! answer; a failure in any pass fails the cell; a skip in any pass skips it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use super::data::Answer;
use super::rows::{self, Basis, Kind, Query, Row};
use super::timing::Measured;
use crate::common::passes::Spread;
use crate::common::BenchError;

/// What one (peer, row) cell holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Measured(Measured),
    /// Not run, and why.
    Skipped(String),
    /// Run and failed.
    Failed(String),
}

/// One cell of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub peer: String,
    pub row: String,
    pub outcome: Outcome,
}

/// The most an as-of query may take, as a multiple of the same query on the current db.
pub const AS_OF_MAX_RATIO: f64 = 2.0;
/// The most one entity's whole history may take (median), in ms.
pub const ENTITY_HISTORY_MAX_MS: f64 = 1.0;

/// One cell per (peer, row) present in any pass, in table order.
pub fn merge_passes(peers: &[String], rows: &[Row], by_pass: &[Vec<Cell>]) -> Vec<Cell> {
    let mut out = Vec::new();
    for p in peers {
        for r in rows {
            let got: Vec<&Outcome> = by_pass
                .iter()
                .filter_map(|cells| cells.iter().find(|c| &c.peer == p && c.row == r.name))
                .map(|c| &c.outcome)
                .collect();
            if !got.is_empty() {
                out.push(Cell {
                    peer: p.clone(),
                    row: r.name.to_string(),
                    outcome: merge(&got),
                });
            }
        }
    }
    out
}

fn merge(got: &[&Outcome]) -> Outcome {
    let mut measured = Vec::new();
    for (i, o) in got.iter().enumerate() {
        match o {
            Outcome::Failed(why) => return Outcome::Failed(format!("pass {}: {why}", i + 1)),
            Outcome::Skipped(why) => return Outcome::Skipped(why.clone()),
            Outcome::Measured(m) => measured.push(m),
        }
    }
    let answer = measured[0].answer;
    if let Some(other) = measured.iter().find(|m| m.answer != answer) {
        return Outcome::Failed(format!(
            "the answer changed between passes: {answer:?} then {:?}",
            other.answer
        ));
    }
    let medians: Vec<f64> = measured.iter().map(|m| m.median_ms).collect();
    match Spread::of(&medians) {
        Some(s) => Outcome::Measured(Measured {
            median_ms: s.median,
            min_ms: measured
                .iter()
                .map(|m| m.min_ms)
                .fold(f64::INFINITY, f64::min),
            pass_lo_ms: s.min,
            pass_hi_ms: s.max,
            passes: measured.len(),
            runs: measured.iter().map(|m| m.runs).sum(),
            answer,
        }),
        None => Outcome::Failed("no finite median in any pass".into()),
    }
}

/// A cell whose answer is not the generator's.
#[derive(Debug, Clone, PartialEq)]
pub struct Wrong {
    pub peer: String,
    pub row: String,
    pub got: Answer,
    pub want: Answer,
}

/// One pass/fail line.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub what: String,
    /// `None` when it could not be judged (a cell missing).
    pub pass: Option<bool>,
    pub detail: String,
}

/// The whole table.
pub struct Table<'a> {
    pub rows: &'a [Row],
    pub peers: &'a [String],
    pub cells: &'a [Cell],
    /// The generator's answer of each row.
    pub expected: &'a [(String, Answer)],
}

impl Table<'_> {
    fn cell(&self, peer: &str, row: &str) -> Option<&Outcome> {
        self.cells
            .iter()
            .find(|c| c.peer == peer && c.row == row)
            .map(|c| &c.outcome)
    }

    /// The median ms of a measured cell.
    pub fn ms(&self, peer: &str, row: &str) -> Option<f64> {
        match self.cell(peer, row) {
            Some(Outcome::Measured(m)) => Some(m.median_ms),
            _ => None,
        }
    }

    fn expected(&self, row: &str) -> Option<Answer> {
        self.expected
            .iter()
            .find(|(r, _)| r == row)
            .map(|(_, a)| *a)
    }

    /// Measured cells whose answer differs from the generator's.
    pub fn wrong_answers(&self) -> Vec<Wrong> {
        self.cells
            .iter()
            .filter_map(|c| match (&c.outcome, self.expected(&c.row)) {
                (Outcome::Measured(m), Some(want)) if m.answer != want => Some(Wrong {
                    peer: c.peer.clone(),
                    row: c.row.clone(),
                    got: m.answer,
                    want,
                }),
                _ => None,
            })
            .collect()
    }

    /// Why a cell has no figure, for a verdict's detail.
    fn status(&self, peer: &str, row: &str) -> String {
        match self.cell(peer, row) {
            Some(Outcome::Measured(m)) => format!("{:.3} ms", m.median_ms),
            Some(Outcome::Skipped(_)) => "skipped".into(),
            Some(Outcome::Failed(_)) => "failed".into(),
            None => "not run".into(),
        }
    }

    /// Datalith faster than Datomic on every row; as-of within 2x of the current db; one
    /// entity's history under 1 ms.
    pub fn verdicts(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        let (ours, peer) = ("datalith", "datomic");
        for r in self.rows {
            let what = format!("{}: {ours} faster than {peer}", r.name);
            out.push(match (self.ms(ours, r.name), self.ms(peer, r.name)) {
                (Some(a), Some(b)) if a > 0.0 => Verdict {
                    what,
                    pass: Some(a < b),
                    detail: format!("{a:.3} ms vs {b:.3} ms: {:.2}x", b / a),
                },
                _ => Verdict {
                    what,
                    pass: None,
                    detail: format!(
                        "not measured: {ours} {}, {peer} {}",
                        self.status(ours, r.name),
                        self.status(peer, r.name)
                    ),
                },
            });
        }
        for r in self.rows {
            let Kind::Query(Basis::AsOf(p), q) = r.kind else {
                continue;
            };
            let current = match q {
                Query::Agg => "current-agg",
                Query::Lookup => "current-lookup",
            };
            let what = format!(
                "{}: within {AS_OF_MAX_RATIO}x of {current} ({ours})",
                r.name
            );
            let theirs = match (self.ms(peer, r.name), self.ms(peer, current)) {
                (Some(a), Some(c)) if c > 0.0 => format!("; {peer}'s own ratio {:.2}", a / c),
                _ => String::new(),
            };
            out.push(match (self.ms(ours, r.name), self.ms(ours, current)) {
                (Some(a), Some(c)) if c > 0.0 => Verdict {
                    what,
                    pass: Some(a / c <= AS_OF_MAX_RATIO),
                    detail: format!(
                        "as of {p}% {a:.3} ms / current {c:.3} ms = {:.2}{theirs}",
                        a / c
                    ),
                },
                _ => Verdict {
                    what,
                    pass: None,
                    detail: format!(
                        "not measured: {} {}, {current} {}",
                        r.name,
                        self.status(ours, r.name),
                        self.status(ours, current)
                    ),
                },
            });
        }
        if self.rows.iter().any(|r| r.kind == Kind::EntityHistory) {
            let what =
                format!("entity-history: one entity's versions under {ENTITY_HISTORY_MAX_MS} ms ({ours}, median)");
            out.push(match self.ms(ours, "entity-history") {
                Some(ms) => Verdict {
                    what,
                    pass: Some(ms < ENTITY_HISTORY_MAX_MS),
                    detail: format!("{ms:.3} ms"),
                },
                None => Verdict {
                    what,
                    pass: None,
                    detail: format!("not measured: {}", self.status(ours, "entity-history")),
                },
            });
        }
        out
    }

    /// `summary.md`.
    pub fn markdown(&self, header: &str, verdicts: &[Verdict], wrong: &[Wrong]) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Workload H: history (as-of, history, log)\n\n{header}\n"
        );
        let _ = writeln!(
            s,
            "Median ms per row over the passes (the median of the pass medians; lower is \
             better), the fastest single call in brackets; the last column is each peer's \
             median over Datalith's (above 1: Datalith faster). Every answer (a count and a \
             sum of values) is checked against the one computed from the generator.\n"
        );
        let _ = write!(s, "| row | count | sum |");
        for p in self.peers {
            let _ = write!(s, " {p} ms (min) |");
        }
        let others: Vec<&String> = self.peers.iter().filter(|p| *p != "datalith").collect();
        for p in &others {
            let _ = write!(s, " {p} / datalith |");
        }
        let _ = writeln!(s);
        let _ = write!(s, "|---|---:|---:|");
        for _ in self.peers.iter().chain(others.iter().copied()) {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
        for r in self.rows {
            let (count, sum) = match self.expected(r.name) {
                Some(a) => (a.count.to_string(), a.checksum.to_string()),
                None => ("-".into(), "-".into()),
            };
            let _ = write!(s, "| {} | {count} | {sum} |", r.name);
            for p in self.peers {
                let text = match self.cell(p, r.name) {
                    Some(Outcome::Measured(m)) => {
                        let bad = if self.expected(r.name).is_some_and(|w| w != m.answer) {
                            " **WRONG ANSWER**"
                        } else {
                            ""
                        };
                        format!("{} ({}){bad}", fmt_ms(m.median_ms), fmt_ms(m.min_ms))
                    }
                    Some(Outcome::Skipped(_)) => "skipped".into(),
                    Some(Outcome::Failed(_)) => "**FAILED**".into(),
                    None => "-".into(),
                };
                let _ = write!(s, " {text} |");
            }
            for p in &others {
                let text = match (self.ms(p, r.name), self.ms("datalith", r.name)) {
                    (Some(x), Some(d)) if d > 0.0 => format!("{:.2}", x / d),
                    _ => "-".into(),
                };
                let _ = write!(s, " {text} |");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(
            s,
            "\n## Spread over passes (min-max of the pass medians, ms)\n"
        );
        crate::common::markdown::peer_table_header(&mut s, "row", self.peers);
        for r in self.rows {
            let _ = write!(s, "| {} |", r.name);
            for p in self.peers {
                let text = match self.cell(p, r.name) {
                    Some(Outcome::Measured(m)) => format!(
                        "{}-{} ({} passes, {} calls)",
                        fmt_ms(m.pass_lo_ms),
                        fmt_ms(m.pass_hi_ms),
                        m.passes,
                        m.runs
                    ),
                    _ => "-".into(),
                };
                let _ = write!(s, " {text} |");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "\n## Verdicts\n");
        for v in verdicts {
            let mark = match v.pass {
                Some(true) => "PASS",
                Some(false) => "FAIL",
                None => "n/a",
            };
            let _ = writeln!(s, "- **{mark}** {}: {}", v.what, v.detail);
        }
        if !wrong.is_empty() {
            let _ = writeln!(s, "\n## Wrong answers (the run failed)\n");
            for w in wrong {
                let _ = writeln!(
                    s,
                    "- {} {}: count {} sum {}, expected count {} sum {}",
                    w.peer, w.row, w.got.count, w.got.checksum, w.want.count, w.want.checksum
                );
            }
        }
        let mut notes: Vec<String> = Vec::new();
        for c in self.cells {
            let line = match &c.outcome {
                Outcome::Skipped(why) => format!("{} {} skipped: {why}", c.peer, c.row),
                Outcome::Failed(why) => format!("{} {} FAILED: {why}", c.peer, c.row),
                Outcome::Measured(_) => continue,
            };
            notes.push(line);
        }
        if !notes.is_empty() {
            let _ = writeln!(s, "\n## Not measured\n");
            for n in notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        let _ = writeln!(s, "\n## Rows\n");
        for r in self.rows {
            let _ = writeln!(s, "- {}: {}", r.name, r.about);
        }
        let _ = writeln!(
            s,
            "\nQueries, exact text (each peer its own entity ids as inputs):\n\n\
             - AGG `{}`: count = `(count ?e)`, sum = `(sum ?v)`\n\
             - LOOKUP `{}` with the ids of the data file's spec: count = rows, sum = the \
             values\n\
             - ENTITY_HISTORY `{}` on the history db: count = rows (assertions and \
             retractions), sum = the values\n\
             - TX_DATA_Q `{}`: count and sum of every `:item/value` datom of the data \
             transactions; `tx-range` reads the same datoms through the API",
            rows::AGG,
            rows::LOOKUP,
            rows::ENTITY_HISTORY,
            rows::TX_DATA_Q
        );
        s
    }

    /// `summary.jsonl`: one object per cell.
    pub fn write_jsonl(&self, path: &Path) -> Result<(), BenchError> {
        let mut f = std::fs::File::create(path).map_err(BenchError::io(path))?;
        for c in self.cells {
            let want = self.expected(&c.row);
            let mut v = serde_json::json!({
                "workload": "history", "peer": c.peer, "task": c.row,
                "expected_count": want.map(|a| a.count),
                "expected_checksum": want.map(|a| a.checksum),
            });
            let extra = match &c.outcome {
                Outcome::Measured(m) => serde_json::json!({
                    "status": "ok", "median_ms": m.median_ms, "min_ms": m.min_ms,
                    "pass_min_ms": m.pass_lo_ms, "pass_max_ms": m.pass_hi_ms,
                    "passes": m.passes, "runs": m.runs,
                    "count": m.answer.count, "checksum": m.answer.checksum,
                }),
                Outcome::Skipped(why) => serde_json::json!({"status": "skipped", "reason": why}),
                Outcome::Failed(why) => serde_json::json!({"status": "failed", "reason": why}),
            };
            if let (Some(o), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
                o.extend(e);
            }
            writeln!(f, "{v}").map_err(BenchError::io(path))?;
        }
        Ok(())
    }

    /// `history.csv`: one line per cell.
    pub fn write_csv(&self, path: &Path) -> Result<(), BenchError> {
        let mut s = String::from(
            "row,peer,status,median_ms,min_ms,pass_min_ms,pass_max_ms,passes,runs,count,\
             checksum,expected_count,expected_checksum\n",
        );
        for c in self.cells {
            let want = self.expected(&c.row);
            let (we, wc) = match want {
                Some(a) => (a.count.to_string(), a.checksum.to_string()),
                None => (String::new(), String::new()),
            };
            let _ = match &c.outcome {
                Outcome::Measured(m) => writeln!(
                    s,
                    "{},{},ok,{:.6},{:.6},{:.6},{:.6},{},{},{},{},{we},{wc}",
                    c.row,
                    c.peer,
                    m.median_ms,
                    m.min_ms,
                    m.pass_lo_ms,
                    m.pass_hi_ms,
                    m.passes,
                    m.runs,
                    m.answer.count,
                    m.answer.checksum
                ),
                Outcome::Skipped(_) => {
                    writeln!(s, "{},{},skipped,,,,,,,,,{we},{wc}", c.row, c.peer)
                }
                Outcome::Failed(_) => writeln!(s, "{},{},failed,,,,,,,,,{we},{wc}", c.row, c.peer),
            };
        }
        std::fs::write(path, s).map_err(BenchError::io(path))
    }
}

/// Milliseconds with about three significant digits.
pub fn fmt_ms(ms: f64) -> String {
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
    use super::*;

    fn m(ms: f64, count: u64) -> Outcome {
        Outcome::Measured(Measured {
            median_ms: ms,
            min_ms: ms / 2.0,
            pass_lo_ms: ms,
            pass_hi_ms: ms,
            passes: 1,
            runs: 2,
            answer: Answer {
                count,
                checksum: 10,
            },
        })
    }

    fn cell(peer: &str, row: &str, o: Outcome) -> Cell {
        Cell {
            peer: peer.into(),
            row: row.into(),
            outcome: o,
        }
    }

    #[test]
    fn passes_merge() {
        let peers = vec!["datalith".to_string()];
        let rs = [rows::by_name("current-agg").unwrap()];
        let merged = merge_passes(
            &peers,
            &rs,
            &[
                vec![cell("datalith", "current-agg", m(3.0, 5))],
                vec![cell("datalith", "current-agg", m(1.0, 5))],
                vec![cell("datalith", "current-agg", m(2.0, 5))],
            ],
        );
        let Outcome::Measured(x) = &merged[0].outcome else {
            panic!("{merged:?}")
        };
        assert_eq!(
            (
                x.median_ms,
                x.min_ms,
                x.pass_lo_ms,
                x.pass_hi_ms,
                x.passes,
                x.runs
            ),
            (2.0, 0.5, 1.0, 3.0, 3, 6)
        );
        let cases = [
            (m(1.0, 5), Outcome::Failed("boom".into()), "pass 2: boom"),
            (m(1.0, 5), m(1.0, 6), "changed between passes"),
        ];
        for (a, b, want) in cases {
            let got = merge(&[&a, &b]);
            assert!(
                matches!(&got, Outcome::Failed(w) if w.contains(want)),
                "{got:?}"
            );
        }
        let skipped = Outcome::Skipped("no".into());
        assert_eq!(merge(&[&m(1.0, 5), &skipped]), skipped);
    }

    #[test]
    fn answers_ratios_and_verdicts() {
        let rs: Vec<Row> = ["current-agg", "asof25-agg", "entity-history"]
            .iter()
            .filter_map(|n| rows::by_name(n))
            .collect();
        let peers = vec!["datalith".to_string(), "datomic".to_string()];
        let cells = vec![
            cell("datalith", "current-agg", m(1.0, 5)),
            cell("datomic", "current-agg", m(4.0, 5)),
            cell("datalith", "asof25-agg", m(2.5, 5)),
            cell("datomic", "asof25-agg", m(2.0, 4)),
            cell("datalith", "entity-history", m(0.5, 7)),
            cell("datomic", "entity-history", Outcome::Skipped("no".into())),
        ];
        let a = |count| Answer {
            count,
            checksum: 10,
        };
        let expected = vec![
            ("current-agg".to_string(), a(5)),
            ("asof25-agg".to_string(), a(5)),
            ("entity-history".to_string(), a(7)),
        ];
        let t = Table {
            rows: &rs,
            peers: &peers,
            cells: &cells,
            expected: &expected,
        };
        let wrong = t.wrong_answers();
        assert_eq!(wrong.len(), 1);
        assert_eq!(
            (wrong[0].peer.as_str(), wrong[0].row.as_str()),
            ("datomic", "asof25-agg")
        );
        let v = t.verdicts();
        let get = |w: &str| v.iter().find(|x| x.what == w).unwrap();
        assert_eq!(
            get("current-agg: datalith faster than datomic").pass,
            Some(true)
        );
        assert_eq!(
            get("asof25-agg: datalith faster than datomic").pass,
            Some(false)
        );
        assert_eq!(
            get("entity-history: datalith faster than datomic").pass,
            None
        );
        let asof = get("asof25-agg: within 2x of current-agg (datalith)");
        assert_eq!(asof.pass, Some(false), "{asof:?}");
        assert!(asof.detail.contains("datomic's own ratio 0.50"), "{asof:?}");
        assert_eq!(
            get("entity-history: one entity's versions under 1 ms (datalith, median)").pass,
            Some(true)
        );
        let md = t.markdown("h", &v, &wrong);
        assert!(
            md.contains("| current-agg | 5 | 10 | 1.00 (0.500) | 4.00 (2.00) | 4.00 |"),
            "{md}"
        );
        assert!(md.contains("**WRONG ANSWER**"), "{md}");
        let dir = tempfile::tempdir().unwrap();
        t.write_csv(&dir.path().join("h.csv")).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("h.csv")).unwrap();
        assert_eq!(csv.lines().count(), 7);
        assert!(
            csv.contains("entity-history,datomic,skipped,,,,,,,,,7,10"),
            "{csv}"
        );
        t.write_jsonl(&dir.path().join("h.jsonl")).unwrap();
        let first = std::fs::read_to_string(dir.path().join("h.jsonl")).unwrap();
        let v: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(v["status"], "ok");
        assert_eq!(v["expected_count"], 5);
    }
}
