//! The seam for the peers that run in their own process (Datalevin, DuckDB), through
//! `bench/peers/run.sh` as every workload's external peers (`bench/peers/README.md`):
//!
//! ```text
//! run.sh PEER complex DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR
//! ```
//!
//! - `DATA_DIR`: the `.tbl` files (dbgen's format: `|`-separated, a trailing `|`);
//! - `WORK_DIR`: the peer's own folder beside the data, to keep its loaded database in and
//!   reuse (its own marker: the data folder's `MARKER` says the generator and SF);
//! - `QUERIES_DIR`: the query files with the run's parameters put in (`qNN.sql` as
//!   PostgreSQL runs it, `qNN.sqlite.sql`, `qNN.edn` the Datalog port: a query or steps, see
//!   `src/complex/steps.rs`);
//! - `SECS`, `TIMEOUT_SECS`: the plan of `timing.rs`: per query one warm-up run (its answer
//!   written out), timed runs for SECS (at least one), the median; a run past TIMEOUT_SECS
//!   is stopped and reported;
//! - `QUERIES`: `q1,q2,...`; `OUT_DIR`: where the answers go, `OUT_DIR/q1.tsv`: one row a
//!   line, cells separated by tabs, `\N` for NULL, dates `YYYY-MM-DD`, numbers as printed.
//!
//! It prints one line per query:
//! `RESULT {"peer":"duckdb","workload":"complex","query":"q1","median_ms":1.5,"runs":7}`
//! (`"timeout":true`, `"error":"..."` or `"skipped":"..."` instead of the figures), and may
//! print `RESULT {"query":"load","seconds":12.5}`. It exits 69 when the peer's runtime is
//! not installed and 64 when it has no `complex` harness: the peer is then reported skipped.

use std::path::Path;
use std::process::Command;

use super::answer::{Answer, Cell};
use super::cell::PassOutcome;
use super::queries::{stem, Query};
use crate::common::child;

/// The external peers, in column order.
pub const PEERS: [&str; 2] = ["datalevin", "duckdb"];

const NOT_INSTALLED: i32 = 69;
const NO_HARNESS: i32 = 64;

/// What one harness run needs.
pub struct Invocation<'a> {
    pub peers_dir: &'a Path,
    pub data: &'a Path,
    pub out: &'a Path,
    pub log_dir: &'a Path,
    pub secs: f64,
    pub timeout_secs: f64,
    pub pass: usize,
}

/// Writes the query texts (parameters in) where the harnesses read them.
pub fn write_queries(dir: &Path, queries: &[Query]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for q in queries {
        let s = stem(q.name);
        std::fs::write(dir.join(format!("{s}.sql")), &q.sql)?;
        std::fs::write(dir.join(format!("{s}.sqlite.sql")), &q.sqlite)?;
        std::fs::write(dir.join(format!("{s}.edn")), &q.datalog)?;
    }
    Ok(())
}

/// Runs `peer`'s harness over `queries` for one pass: an outcome per query, in order, and
/// the load's seconds if it reported one.
pub fn run(peer: &str, queries: &[Query], inv: &Invocation<'_>) -> (Vec<PassOutcome>, Option<f64>) {
    let all = |o: PassOutcome| (queries.iter().map(|_| o.clone()).collect(), None);
    let script = inv.peers_dir.join("run.sh");
    if !script.is_file() {
        return all(PassOutcome::Skipped(format!(
            "{} not found",
            script.display()
        )));
    }
    let work = inv.data.join(peer);
    let answers = inv.out.join(format!("answers-{peer}-p{}", inv.pass + 1));
    for d in [&work, &answers] {
        if let Err(e) = std::fs::create_dir_all(d) {
            return all(PassOutcome::Failed(format!("{}: {e}", d.display())));
        }
    }
    let names: Vec<&str> = queries.iter().map(|q| q.name).collect();
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(peer)
        .arg("complex")
        .arg(inv.data)
        .arg(&work)
        .arg(inv.out.join("queries"))
        .arg(inv.secs.to_string())
        .arg(inv.timeout_secs.to_string())
        .arg(names.join(","))
        .arg(&answers);
    let log = inv.log_dir.join(format!("{peer}-p{}.log", inv.pass + 1));
    let out = match child::run(cmd, peer, &log, |_| {}) {
        Ok(o) => o,
        Err(e) => return all(PassOutcome::Failed(e.to_string())),
    };
    let code = out.status.code();
    if out.results.is_empty() && (code == Some(NOT_INSTALLED) || code == Some(NO_HARNESS)) {
        return all(PassOutcome::Skipped(format!(
            "{}: {}",
            if code == Some(NOT_INSTALLED) {
                "not installed"
            } else {
                "no complex harness yet"
            },
            child::tail(&log, 1)
        )));
    }
    let load = out
        .results
        .iter()
        .find(|r| r.get("query").and_then(|v| v.as_str()) == Some("load"))
        .and_then(|r| r.get("seconds").and_then(|v| v.as_f64()));
    let outcomes = queries
        .iter()
        .map(|q| {
            let r = out
                .results
                .iter()
                .rev()
                .find(|r| r.get("query").and_then(|v| v.as_str()) == Some(q.name));
            match r {
                None => PassOutcome::Failed(format!(
                    "no RESULT line; harness exited with {}; log {}",
                    out.status,
                    log.display()
                )),
                Some(r) => parse(r, &answers.join(format!("{}.tsv", q.name))),
            }
        })
        .collect();
    (outcomes, load)
}

/// One `RESULT` object, its answer read from `tsv`.
pub fn parse(r: &serde_json::Value, tsv: &Path) -> PassOutcome {
    if let Some(why) = r.get("skipped").and_then(|v| v.as_str()) {
        return PassOutcome::Skipped(why.to_string());
    }
    if r.get("timeout").and_then(|v| v.as_bool()) == Some(true) {
        return PassOutcome::TimedOut;
    }
    if let Some(e) = r.get("error").and_then(|v| v.as_str()) {
        return PassOutcome::Failed(e.to_string());
    }
    let (Some(ms), Some(runs)) = (
        r.get("median_ms").and_then(|v| v.as_f64()),
        r.get("runs").and_then(|v| v.as_u64()),
    ) else {
        return PassOutcome::Failed(format!("RESULT lacks median_ms or runs: {r}"));
    };
    match std::fs::read_to_string(tsv) {
        Ok(text) => PassOutcome::Ran {
            ms,
            runs: runs as usize,
            answer: read_tsv(&text),
        },
        Err(e) => PassOutcome::Failed(format!("answer {}: {e}", tsv.display())),
    }
}

/// An answer file's rows.
pub fn read_tsv(text: &str) -> Answer {
    Answer {
        rows: text
            .lines()
            .map(|l| {
                l.split('\t')
                    .map(|c| match c {
                        "\\N" => Cell::Null,
                        c => Cell::from_text(c),
                    })
                    .collect()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_answers() {
        let a = read_tsv("A\t1.5\t1995-03-15\nB\t\\N\tx\n");
        assert_eq!(a.rows.len(), 2);
        assert_eq!(a.rows[1][1], Cell::Null);
        assert_eq!(a.rows[0][1], Cell::Num(1.5));
        let none = Path::new("/nonexistent/q1.tsv");
        let cases = [
            (r#"{"query":"q1","timeout":true}"#, "TimedOut"),
            (r#"{"query":"q1","error":"boom"}"#, "Failed"),
            (r#"{"query":"q1","skipped":"no"}"#, "Skipped"),
            (r#"{"query":"q1","runs":3}"#, "Failed"),
            (r#"{"query":"q1","median_ms":1.0,"runs":3}"#, "Failed"),
        ];
        for (json, want) in cases {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            let got = format!("{:?}", parse(&v, none));
            assert!(got.starts_with(want), "{json}: {got}");
        }
    }
}
