//! What the bench asks of a peer that runs in this process (Datalith, tantivy, SQLite FTS5),
//! and what any peer's pass gives back (the JVM peers' too, read from their output).

use std::path::Path;

use super::corpus::Doc;
use super::queries::Query;
use crate::common::BenchError;

/// A search engine the bench links.
pub trait InProcess {
    /// Indexes `docs` into the empty directory `dir` in this engine's way of writing, one
    /// commit every `batch` documents, each durable (flushed to the disk before it returns) or
    /// not; closes the index before returning.
    fn index(
        &self,
        dir: &Path,
        docs: &[Doc],
        batch: usize,
        durable: bool,
    ) -> Result<(), BenchError>;
    /// Opens the index in `dir` for queries.
    fn open(&self, dir: &Path) -> Result<Box<dyn Searcher>, BenchError>;
}

/// An open index.
pub trait Searcher {
    /// The ids of the best `k` documents (by the engine's own ranking), best first.
    fn top(&self, q: &Query, k: usize) -> Result<Vec<u64>, BenchError>;
    /// How many documents match.
    fn count(&self, q: &Query) -> Result<u64, BenchError>;
}

/// How an index was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every commit durable.
    Durable,
    /// The engine's way of skipping the flush.
    NoSync,
}

impl Mode {
    /// No-sync first: the durable index is the one queried afterwards.
    pub const ALL: [Mode; 2] = [Mode::NoSync, Mode::Durable];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Durable => "durable",
            Mode::NoSync => "nosync",
        }
    }
}

/// One indexing run.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRun {
    pub mode: Mode,
    pub seconds: f64,
    pub docs: u64,
    /// Bytes on disk (allocated blocks) of the closed index.
    pub bytes: u64,
    /// Its largest files (path under the index directory, allocated bytes), largest first.
    pub files: Vec<(String, u64)>,
}

/// One query's answers and timings in one pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryRun {
    pub count: u64,
    pub top: Vec<u64>,
    /// Lucene only: the documents past the 10th whose score equals the 10th's (ties).
    pub ties: Vec<u64>,
    /// Nanoseconds of each timed top-10 call (one per round).
    pub top_ns: Vec<u64>,
    /// Nanoseconds of each timed count call (one per round).
    pub count_ns: Vec<u64>,
}

/// What one peer did in one pass.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerPass {
    Ran {
        index: Vec<IndexRun>,
        /// By query id.
        queries: Vec<QueryRun>,
    },
    Skipped(String),
    Failed(String),
}

/// The `n` largest files under `dir` by allocated bytes, largest first.
pub fn largest_files(dir: &Path, n: usize) -> Vec<(String, u64)> {
    use std::os::unix::fs::MetadataExt;
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, u64)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                walk(base, &e.path(), out);
            } else {
                let name = e
                    .path()
                    .strip_prefix(base)
                    .map_or_else(|_| e.path(), Path::to_path_buf);
                out.push((name.display().to_string(), m.blocks() * 512));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.truncate(n);
    out
}

/// Bytes on disk under `dir` (allocated blocks, as `du`: a sparse LMDB map counts what it
/// holds, not its reserved size).
pub fn disk_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                total += disk_bytes(&e.path());
            } else {
                total += m.blocks() * 512;
            }
        }
    }
    total
}
