//! The JVM peers through `bench/peers/run.sh PEER search DOCS.tsv QUERIES.tsv WORK_DIR
//! OUT.tsv BATCH ROUNDS WARM`: Lucene (`bench/peers/lucene/`) and Datalevin's search engine
//! (`bench/peers/datalevin/search.clj`). A harness first indexes the first WARM documents
//! into `WORK_DIR/warmup` (untimed, then deleted), then the documents twice, no-sync into
//! `WORK_DIR/nosync` then durable into `WORK_DIR/durable`, printing
//! `RESULT {"task":"index","mode":"durable","seconds":..,"docs":..}` for each; then queries
//! the durable index as [`super::measure`] does (a warm-up round, then ROUNDS timed rounds)
//! and writes a line per query to OUT.tsv:
//! `id TAB count TAB top ids TAB tie ids TAB top-10 ns TAB count ns` (lists comma-separated;
//! the ties only from Lucene). `RESULT {"task":"error","message":..}` reports a failure; exit
//! code 69 means the runtime is not installed. A full run first calls `install.sh PEER`.

use std::path::Path;
use std::process::Command;

use super::engine::{disk_bytes, largest_files, IndexRun, Mode, PeerPass, QueryRun};
use crate::common::{child, BenchError};

const NOT_INSTALLED: i32 = 69;

/// What a harness run needs.
pub struct Invocation<'a> {
    pub peers_dir: &'a Path,
    pub docs: &'a Path,
    pub queries: &'a Path,
    pub work: &'a Path,
    pub log_dir: &'a Path,
    pub batch: usize,
    pub rounds: usize,
    /// Documents of the untimed warm-up indexing.
    pub warm: usize,
    pub install: bool,
    pub heap: &'a str,
    pub pass: usize,
    /// Queries expected in OUT.tsv.
    pub n_queries: usize,
}

/// Runs `peer`'s harness for one pass.
pub fn run(peer: &str, inv: &Invocation<'_>) -> PeerPass {
    match run_inner(peer, inv) {
        Ok(p) => p,
        Err(e) => PeerPass::Failed(e.to_string()),
    }
}

fn run_inner(peer: &str, inv: &Invocation<'_>) -> Result<PeerPass, BenchError> {
    let script = inv.peers_dir.join("run.sh");
    if !script.is_file() {
        return Ok(PeerPass::Skipped(format!(
            "harness {} not found",
            script.display()
        )));
    }
    if inv.install {
        let log = inv.log_dir.join(format!("{peer}-install.log"));
        let mut cmd = Command::new("bash");
        cmd.arg(inv.peers_dir.join("install.sh")).arg(peer);
        let o = child::run(cmd, peer, &log, |_| {})?;
        if !o.status.success() {
            return Ok(PeerPass::Skipped(format!(
                "install.sh {peer} failed ({}): {}",
                o.status,
                child::tail(&log, 2).replace('\n', " / ")
            )));
        }
    }
    let _ = std::fs::remove_dir_all(inv.work);
    std::fs::create_dir_all(inv.work).map_err(BenchError::io(inv.work))?;
    let out_tsv = inv.work.join("out.tsv");
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(peer)
        .arg("search")
        .arg(inv.docs)
        .arg(inv.queries)
        .arg(inv.work)
        .arg(&out_tsv)
        .arg(inv.batch.to_string())
        .arg(inv.rounds.to_string())
        .arg(inv.warm.to_string());
    crate::common::jvm::set_heap(&mut cmd, inv.heap);
    let log = inv.log_dir.join(format!("{peer}-p{}.log", inv.pass + 1));
    let out = child::run(cmd, peer, &log, |_| {})?;
    if out.status.code() == Some(NOT_INSTALLED) {
        let why = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SKIP ").map(str::to_string))
            .unwrap_or_else(|| "runtime not installed".into());
        return Ok(PeerPass::Skipped(why));
    }
    let text = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(String::from);
    if let Some(e) = out
        .results
        .iter()
        .find(|r| text(r, "task").as_deref() == Some("error"))
    {
        return Ok(PeerPass::Failed(text(e, "message").unwrap_or_default()));
    }
    if !out.status.success() {
        return Ok(PeerPass::Failed(format!(
            "harness exited with {}: {}",
            out.status,
            child::tail(&log, 3).replace('\n', " / ")
        )));
    }
    let mut index = Vec::new();
    for mode in Mode::ALL {
        let r = out.results.iter().find(|r| {
            text(r, "task").as_deref() == Some("index")
                && text(r, "mode").as_deref() == Some(mode.name())
        });
        let Some(r) = r else {
            return Ok(PeerPass::Failed(format!(
                "no index result for {}",
                mode.name()
            )));
        };
        index.push(IndexRun {
            mode,
            seconds: r
                .get("seconds")
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::NAN),
            docs: r.get("docs").and_then(|v| v.as_u64()).unwrap_or(0),
            bytes: disk_bytes(&inv.work.join(mode.name())),
            files: largest_files(&inv.work.join(mode.name()), super::measure::FILES_SHOWN),
        });
    }
    let body = std::fs::read_to_string(&out_tsv).map_err(BenchError::io(&out_tsv))?;
    let queries = parse_out(&body, inv.n_queries).map_err(|message| BenchError::Child {
        what: peer.to_string(),
        message: format!("{}: {message}", out_tsv.display()),
    })?;
    Ok(PeerPass::Ran { index, queries })
}

/// Parses OUT.tsv into a run per query id `0..n`.
pub fn parse_out(body: &str, n: usize) -> Result<Vec<QueryRun>, String> {
    let mut runs: Vec<Option<QueryRun>> = vec![None; n];
    for (i, line) in body.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 6 {
            return Err(format!("line {}: {} fields, want 6", i + 1, f.len()));
        }
        let list = |s: &str| -> Result<Vec<u64>, String> {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(|x| {
                    x.parse()
                        .map_err(|_| format!("line {}: `{x}` is not a number", i + 1))
                })
                .collect()
        };
        let id: usize = f[0]
            .parse()
            .map_err(|_| format!("line {}: bad id", i + 1))?;
        let slot = runs
            .get_mut(id)
            .ok_or_else(|| format!("line {}: query {id} out of range", i + 1))?;
        *slot = Some(QueryRun {
            count: f[1]
                .parse()
                .map_err(|_| format!("line {}: bad count", i + 1))?,
            top: list(f[2])?,
            ties: list(f[3])?,
            top_ns: list(f[4])?,
            count_ns: list(f[5])?,
        });
    }
    runs.into_iter()
        .enumerate()
        .map(|(id, r)| r.ok_or_else(|| format!("no line for query {id}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_output_table() {
        let body = "1\t0\t\t\t5,6\t7,8\n0\t12\t3,1\t9\t100\t200\n";
        let runs = parse_out(body, 2).unwrap();
        assert_eq!(runs[0].count, 12);
        assert_eq!(
            (runs[0].top.clone(), runs[0].ties.clone()),
            (vec![3, 1], vec![9])
        );
        assert_eq!(
            (runs[1].top_ns.clone(), runs[1].count_ns.clone()),
            (vec![5, 6], vec![7, 8])
        );
        assert!(parse_out(body, 3).unwrap_err().contains("query 2"));
        assert!(parse_out("0\t1\n", 1).is_err());
    }
}
