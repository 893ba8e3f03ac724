//! The result table: cells per (query, peer), the geometric means, the verdicts,
//! `summary.md` and `summary.jsonl`.

use std::fmt::Write as _;
use std::path::Path;

use super::cell::{Cell, Check, Outcome};
use crate::common::BenchError;

/// Datalith against the best of these (those in the run), per query and in geometric mean.
pub const RIVALS: [&str; 3] = ["postgres", "sqlite", "datalevin"];

/// The goal per query: Datalith at most this many times the best rival's time.
pub const GOAL_RATIO: f64 = 2.0;

/// Every cell of a run.
pub struct Table<'a> {
    pub queries: &'a [&'static str],
    pub peers: &'a [String],
    pub cells: &'a [Cell],
}

/// What a verdict says.
pub struct Verdict {
    pub text: String,
    pub met: Option<bool>,
}

impl Table<'_> {
    pub fn cell(&self, peer: &str, query: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.peer == peer && c.query == query)
    }

    /// The median ms of (peer, query) when measured with an agreeing answer.
    pub fn good_ms(&self, peer: &str, query: &str) -> Option<f64> {
        self.cell(peer, query).and_then(Cell::good_ms)
    }

    /// Peers with at least one good cell.
    fn measured_peers(&self) -> Vec<&String> {
        self.peers
            .iter()
            .filter(|p| self.queries.iter().any(|q| self.good_ms(p, q).is_some()))
            .collect()
    }

    /// The queries every measured peer answered correctly: the geometric means' set, so that
    /// they compare the same queries.
    pub fn common_queries(&self) -> Vec<&'static str> {
        let peers = self.measured_peers();
        self.queries
            .iter()
            .copied()
            .filter(|q| peers.iter().all(|p| self.good_ms(p, q).is_some()))
            .collect()
    }

    /// The geometric mean of `peer`'s medians over [`Table::common_queries`].
    pub fn geomean(&self, peer: &str) -> Option<f64> {
        let qs = self.common_queries();
        let logs: Vec<f64> = qs
            .iter()
            .filter_map(|q| self.good_ms(peer, q))
            .map(f64::ln)
            .collect();
        (!logs.is_empty() && logs.len() == qs.len())
            .then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    }

    /// The fastest rival's good median of `query`, and who.
    fn best_rival(&self, query: &str) -> Option<(&'static str, f64)> {
        RIVALS
            .iter()
            .filter(|r| self.peers.iter().any(|p| p == *r))
            .filter_map(|r| self.good_ms(r, query).map(|ms| (*r, ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The verdicts: Datalith's geometric mean against each rival's, then each query
    /// against the best rival (the goal: none more than [`GOAL_RATIO`] times slower).
    pub fn verdicts(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        let n = self.common_queries().len();
        let dl = self.geomean("datalith");
        for r in RIVALS {
            if !self.peers.iter().any(|p| p == r) {
                continue;
            }
            out.push(match (dl, self.geomean(r)) {
                (Some(d), Some(o)) => Verdict {
                    text: format!(
                        "datalith's geometric mean faster than {r}'s ({n} queries): \
                         {d:.2} ms against {o:.2} ms ({:.2}x)",
                        d / o
                    ),
                    met: Some(d < o),
                },
                _ => Verdict {
                    text: format!("datalith's geometric mean against {r}'s: not measured"),
                    met: None,
                },
            });
        }
        let mut over: Vec<String> = Vec::new();
        let mut missing: Vec<&str> = Vec::new();
        for q in self.queries {
            match (self.good_ms("datalith", q), self.best_rival(q)) {
                (Some(d), Some((who, b))) if d > GOAL_RATIO * b => {
                    over.push(format!("{q} {:.1}x {who}", d / b))
                }
                (Some(_), Some(_)) => {}
                _ => missing.push(q),
            }
        }
        out.push(Verdict {
            text: format!(
                "no query more than {GOAL_RATIO}x slower than the best of {}: {}{}",
                RIVALS.join(", "),
                if over.is_empty() {
                    "none is".to_string()
                } else {
                    format!("over: {}", over.join(", "))
                },
                if missing.is_empty() {
                    String::new()
                } else {
                    format!(" (not compared: {})", missing.join(", "))
                }
            ),
            // Nothing compared (Datalith or every rival left out of the run): no verdict.
            met: (missing.len() < self.queries.len())
                .then_some(over.is_empty() && missing.is_empty()),
        });
        out
    }

    fn cell_text(&self, peer: &str, query: &str) -> String {
        match self.cell(peer, query).map(|c| &c.outcome) {
            None => "-".into(),
            Some(Outcome::Measured { spread, check, .. }) => {
                let mark = match check {
                    Check::Agrees | Check::Reference => "",
                    Check::Differs(_) => " **WRONG**",
                    Check::NoReference => " (unchecked)",
                };
                format!(
                    "{} ({}){mark}",
                    ms_text(spread.median),
                    spread.range_text(ms_text)
                )
            }
            Some(Outcome::TimedOut) => "**timeout**".into(),
            Some(Outcome::Failed(_)) => "**failed**".into(),
            Some(Outcome::Skipped(_)) => "skipped".into(),
        }
    }

    /// `summary.md`.
    pub fn markdown(&self, header: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Workload complex: TPC-H in Datalog\n\n{header}\n");
        let _ = writeln!(
            s,
            "Median ms over the passes (min-max of the pass medians). **WRONG**: the answer \
             differs from the reference's (see below); a wrong cell counts in no mean or \
             verdict.\n"
        );
        let _ = writeln!(
            s,
            "| query | {} | datalith / best of {} |",
            self.peers.join(" | "),
            RIVALS.join(", ")
        );
        let _ = writeln!(s, "|---|{}---|", "---|".repeat(self.peers.len()));
        for q in self.queries {
            let cells: Vec<String> = self.peers.iter().map(|p| self.cell_text(p, q)).collect();
            let ratio = match (self.good_ms("datalith", q), self.best_rival(q)) {
                (Some(d), Some((who, b))) => format!("{:.2}x ({who})", d / b),
                _ => "-".into(),
            };
            let _ = writeln!(s, "| {q} | {} | {ratio} |", cells.join(" | "));
        }
        let gm: Vec<String> = self
            .peers
            .iter()
            .map(|p| self.geomean(p).map_or("-".into(), ms_text))
            .collect();
        let _ = writeln!(
            s,
            "| **geometric mean** ({} queries every measured peer answered right) | {} | |",
            self.common_queries().len(),
            gm.join(" | ")
        );
        let _ = writeln!(s, "\n## Verdicts\n");
        for v in self.verdicts() {
            let mark = match v.met {
                Some(true) => "MET",
                Some(false) => "NOT MET",
                None => "n/a",
            };
            let _ = writeln!(s, "- {mark}: {}", v.text);
        }
        let mut notes: Vec<String> = Vec::new();
        for p in self.peers {
            let mine: Vec<&Cell> = self.cells.iter().filter(|c| &c.peer == p).collect();
            // A peer skipped whole is one line, not one per query.
            if let Some(Outcome::Skipped(why)) = mine.first().map(|c| &c.outcome) {
                if mine
                    .iter()
                    .all(|c| matches!(&c.outcome, Outcome::Skipped(w) if w == why))
                {
                    notes.push(format!("- {p}: skipped: {why}"));
                    continue;
                }
            }
            for c in mine {
                let why = match &c.outcome {
                    Outcome::Measured {
                        check: Check::Differs(d),
                        ..
                    } => format!("answer differs: {d}"),
                    Outcome::Failed(m) => format!("failed: {m}"),
                    Outcome::Skipped(m) => format!("skipped: {m}"),
                    Outcome::TimedOut => "stopped at the time limit".into(),
                    _ => continue,
                };
                notes.push(format!("- {} {}: {why}", c.peer, c.query));
            }
        }
        if !notes.is_empty() {
            let _ = writeln!(s, "\n## Cells not measured or not right\n");
            for n in notes {
                let _ = writeln!(s, "{n}");
            }
        }
        s
    }

    /// `summary.jsonl`: one object per cell.
    pub fn write_jsonl(&self, path: &Path) -> Result<(), BenchError> {
        let mut s = String::new();
        for c in self.cells {
            let v = match &c.outcome {
                Outcome::Measured {
                    spread,
                    runs,
                    rows,
                    check,
                } => serde_json::json!({
                    "workload": "complex", "peer": c.peer, "query": c.query,
                    "median_ms": spread.median, "min_ms": spread.min, "max_ms": spread.max,
                    "pass_ms": spread.passes, "runs": runs, "rows": rows,
                    "answer": match check {
                        Check::Agrees => "agrees".to_string(),
                        Check::Reference => "reference".to_string(),
                        Check::NoReference => "unchecked".to_string(),
                        Check::Differs(d) => format!("differs: {d}"),
                    },
                }),
                Outcome::TimedOut => serde_json::json!({
                    "workload": "complex", "peer": c.peer, "query": c.query, "timeout": true}),
                Outcome::Failed(m) => serde_json::json!({
                    "workload": "complex", "peer": c.peer, "query": c.query, "error": m}),
                Outcome::Skipped(m) => serde_json::json!({
                    "workload": "complex", "peer": c.peer, "query": c.query, "skipped": m}),
            };
            let _ = writeln!(s, "{v}");
        }
        std::fs::write(path, s).map_err(BenchError::io(path))
    }
}

/// Milliseconds with three significant digits or so.
pub fn ms_text(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::passes::Spread;

    fn measured(peer: &str, query: &str, ms: f64, check: Check) -> Cell {
        Cell {
            peer: peer.into(),
            query: query.into(),
            outcome: Outcome::Measured {
                spread: Spread::of(&[ms]).unwrap(),
                runs: 1,
                rows: 1,
                check,
            },
        }
    }

    #[test]
    fn geomeans_and_verdicts() {
        let peers: Vec<String> = vec!["postgres".into(), "datalith".into(), "sqlite".into()];
        let cells = vec![
            measured("postgres", "q1", 10.0, Check::Reference),
            measured("datalith", "q1", 5.0, Check::Agrees),
            measured("sqlite", "q1", 20.0, Check::Agrees),
            measured("postgres", "q2", 10.0, Check::Reference),
            measured("datalith", "q2", 80.0, Check::Agrees),
            measured("sqlite", "q2", 40.0, Check::Agrees),
            measured("postgres", "q3", 1.0, Check::Reference),
            measured("datalith", "q3", 1.0, Check::Differs("x".into())),
            measured("sqlite", "q3", 1.0, Check::Agrees),
        ];
        let t = Table {
            queries: &["q1", "q2", "q3"],
            peers: &peers,
            cells: &cells,
        };
        assert_eq!(t.common_queries(), ["q1", "q2"]);
        assert!((t.geomean("datalith").unwrap() - 20.0).abs() < 1e-9);
        assert!((t.geomean("postgres").unwrap() - 10.0).abs() < 1e-9);
        let v = t.verdicts();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].met, Some(false));
        assert_eq!(v[1].met, Some(true));
        assert_eq!(v[2].met, Some(false));
        assert!(v[2].text.contains("q2 8.0x postgres"), "{}", v[2].text);
        assert!(v[2].text.contains("not compared: q3"), "{}", v[2].text);
        let md = t.markdown("h");
        assert!(md.contains("**WRONG**"));
    }
}
