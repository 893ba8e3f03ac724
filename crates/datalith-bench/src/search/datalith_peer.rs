//! Datalith's full-text index (`datalith::search`) on a KV environment: one named index with
//! the default analysis (`AnalyzerConfig::default()`: UAX #29 words, lower-cased, no stemming,
//! no stop words), one `SearchIndex::write` (one commit) per batch; durable
//! (`Durability::Durable`: the log's fsync at each commit) or not (`Durability::NoSync`).
//! Queries in Lucene's classic syntax (`Query::lucene`), top-k by `search`, full counts by
//! `count`; after indexing, `len` must be the corpus's size. Indexing ends with a compacted
//! copy of the environment (`Environment::copy_compacted`: the free pages that the batches'
//! copy-on-write left behind dropped, as a read-mostly index would be shipped; timed with
//! the indexing), which the queries then read; the index's size is the copy's.

use std::path::Path;

use datalith::kv::{Durability, EnvOptions, Environment};
use datalith::search::{AnalyzerConfig, DocChange, SearchIndex};

use super::corpus::Doc;
use super::engine::{InProcess, Searcher};
use super::queries::Query;
use crate::common::BenchError;

pub const LABEL: &str = "datalith";

/// Address space reserved at open: the whole index fits without a map growth.
const INITIAL_MAP_BYTES: usize = 4 << 30;

/// The directory of the compacted copy the queries read.
const COMPACTED: &str = "index";

/// The index's name in the environment.
const NAME: &str = "corpus";

pub struct Datalith;

/// The environment and its index.
struct Open {
    idx: SearchIndex,
    _env: Environment,
}

fn open(dir: &Path, durability: Durability) -> Result<Open, BenchError> {
    let mut opts = EnvOptions::with_durability(durability);
    opts.initial_map_bytes = INITIAL_MAP_BYTES;
    let env = Environment::open(dir, opts).map_err(BenchError::store(LABEL, "open"))?;
    let idx = env
        .search_index(NAME, AnalyzerConfig::default())
        .map_err(BenchError::store(LABEL, "search_index"))?;
    Ok(Open { idx, _env: env })
}

impl InProcess for Datalith {
    fn index(
        &self,
        dir: &Path,
        docs: &[Doc],
        batch: usize,
        durable: bool,
    ) -> Result<(), BenchError> {
        let build = dir.join("build");
        let o = open(
            &build,
            if durable {
                Durability::Durable
            } else {
                Durability::NoSync
            },
        )?;
        for chunk in docs.chunks(batch.max(1)) {
            let changes = chunk
                .iter()
                .map(|d| DocChange::Put {
                    id: d.id,
                    text: d.text.clone(),
                })
                .collect();
            o.idx
                .write(changes)
                .map_err(BenchError::store(LABEL, "write"))?;
        }
        let n = o.idx.len().map_err(BenchError::store(LABEL, "len"))?;
        if n != docs.len() as u64 {
            return Err(BenchError::Store {
                store: LABEL.into(),
                op: "len",
                message: format!("{n} documents indexed, want {}", docs.len()),
            });
        }
        o._env
            .copy_compacted(dir.join(COMPACTED))
            .map_err(BenchError::store(LABEL, "copy_compacted"))?;
        drop(o);
        std::fs::remove_dir_all(&build).map_err(BenchError::io(&build))?;
        Ok(())
    }

    fn open(&self, dir: &Path) -> Result<Box<dyn Searcher>, BenchError> {
        Ok(Box::new(open(&dir.join(COMPACTED), Durability::Durable)?))
    }
}

impl Searcher for Open {
    fn top(&self, q: &Query, k: usize) -> Result<Vec<u64>, BenchError> {
        let hits = self
            .idx
            .search(&q.lucene(), k)
            .map_err(BenchError::store(LABEL, "search"))?;
        Ok(hits.into_iter().map(|h| h.id).collect())
    }

    fn count(&self, q: &Query) -> Result<u64, BenchError> {
        self.idx
            .count(&q.lucene())
            .map_err(BenchError::store(LABEL, "count"))
    }
}
