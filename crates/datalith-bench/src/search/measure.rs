//! Timing an in-process peer: indexing (wall clock from the empty directory to the closed
//! index), then the queries: one untimed round over every query (warm-up: caches, page cache,
//! branch predictors; the JVM harnesses do the same for their JIT), then `rounds` timed rounds,
//! each query's top-10 call and count call timed apart. Every round must give the same
//! answers as the first.

use std::path::Path;
use std::time::Instant;

use super::corpus::Doc;
use super::engine::{disk_bytes, largest_files, InProcess, IndexRun, Mode, QueryRun, Searcher};
use super::queries::Query;
use crate::common::BenchError;

/// Documents of the untimed warm-up indexing every peer makes first (all of a smaller corpus).
pub const WARM_DOCS: usize = 10_000;

/// Files of an index listed in the summary.
pub const FILES_SHOWN: usize = 4;

/// Hits per top-k call.
pub const TOP_K: usize = 10;

/// Indexes `docs` into `dir` (emptied first) in `mode` and times it.
pub fn index(
    peer: &dyn InProcess,
    dir: &Path,
    docs: &[Doc],
    batch: usize,
    mode: Mode,
) -> Result<IndexRun, BenchError> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
    let t = Instant::now();
    peer.index(dir, docs, batch, mode == Mode::Durable)?;
    let seconds = t.elapsed().as_secs_f64();
    Ok(IndexRun {
        mode,
        seconds,
        docs: docs.len() as u64,
        bytes: disk_bytes(dir),
        files: largest_files(dir, FILES_SHOWN),
    })
}

/// Runs every query: a warm-up round, then `rounds` timed ones.
pub fn queries(
    label: &str,
    s: &dyn Searcher,
    queries: &[Query],
    rounds: usize,
) -> Result<Vec<QueryRun>, BenchError> {
    let mut runs: Vec<QueryRun> = Vec::with_capacity(queries.len());
    for q in queries {
        runs.push(QueryRun {
            count: s.count(q)?,
            top: s.top(q, TOP_K)?,
            ..QueryRun::default()
        });
    }
    for _ in 0..rounds.max(1) {
        for (q, run) in queries.iter().zip(runs.iter_mut()) {
            let t = Instant::now();
            let top = s.top(q, TOP_K)?;
            run.top_ns.push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            let count = s.count(q)?;
            run.count_ns.push(t.elapsed().as_nanos() as u64);
            if top != run.top || count != run.count {
                return Err(BenchError::Store {
                    store: label.to_string(),
                    op: "repeat a query",
                    message: format!(
                        "query {} `{}` answered {} / {:?} then {} / {:?}",
                        q.id,
                        q.lucene(),
                        run.count,
                        run.top,
                        count,
                        top
                    ),
                });
            }
        }
    }
    Ok(runs)
}
