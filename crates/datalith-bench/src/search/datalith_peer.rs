//! Datalith's full-text index (`datalith::search`) on a KV environment: one named index with
//! the default analyzer (UAX #29 words, lower-cased, no stemming, no stop words), one
//! `SearchIndex::write` (one commit) per batch; durable (`Durability::Durable`: the log's
//! fsync at each commit) or not (`Durability::NoSync`). Queries in Lucene's classic syntax
//! (`Query::lucene`), top-k by `search`, full counts by `count`. The calls are in [`api`], each
//! marked `// SEARCH-API:`.

use std::path::Path;

use super::corpus::Doc;
use super::engine::{InProcess, Searcher};
use crate::common::BenchError;

pub const LABEL: &str = "datalith";

pub struct Datalith;

/// Address space reserved at open: the whole index fits without a map growth.
const INITIAL_MAP_BYTES: usize = 4 << 30;

impl InProcess for Datalith {
    fn index(
        &self,
        dir: &Path,
        docs: &[Doc],
        batch: usize,
        durable: bool,
    ) -> Result<(), BenchError> {
        let idx = api::open(dir, durable, INITIAL_MAP_BYTES)?;
        for chunk in docs.chunks(batch.max(1)) {
            api::put(&idx, chunk)?;
        }
        Ok(())
    }

    fn open(&self, dir: &Path) -> Result<Box<dyn Searcher>, BenchError> {
        Ok(Box::new(api::open(dir, true, INITIAL_MAP_BYTES)?))
    }
}

/// Why the Datalith peer cannot run in this build, if it cannot.
pub fn unavailable() -> Option<String> {
    api::UNAVAILABLE.map(str::to_string)
}

#[cfg(feature = "datalith-search")]
mod api {
    use std::path::Path;

    use datalith::kv::{Durability, EnvOptions, Environment};
    use datalith::search::{Analyzer, DocChange, SearchIndex};

    use super::super::corpus::Doc;
    use super::super::engine::Searcher;
    use super::super::queries::Query;
    use super::LABEL;
    use crate::common::BenchError;

    pub const UNAVAILABLE: Option<&str> = None;

    /// The environment and its index (the environment outlives the index's use).
    pub struct Open {
        idx: SearchIndex,
        _env: Environment,
    }

    pub fn open(dir: &Path, durable: bool, map: usize) -> Result<Open, BenchError> {
        let mut opts = EnvOptions::with_durability(if durable {
            Durability::Durable
        } else {
            Durability::NoSync
        });
        opts.initial_map_bytes = map;
        let env = Environment::open(dir, opts).map_err(BenchError::store(LABEL, "open"))?;
        // SEARCH-API: Environment::search_index
        let idx = env
            .search_index("corpus", Analyzer::default())
            .map_err(BenchError::store(LABEL, "search_index"))?;
        Ok(Open { idx, _env: env })
    }

    pub fn put(o: &Open, docs: &[Doc]) -> Result<(), BenchError> {
        let changes = docs
            .iter()
            .map(|d| DocChange::Put {
                id: d.id,
                text: d.text.clone(),
            })
            .collect();
        // SEARCH-API: SearchIndex::write (one commit)
        o.idx
            .write(changes)
            .map(drop)
            .map_err(BenchError::store(LABEL, "write"))
    }

    impl Searcher for Open {
        fn top(&self, q: &Query, k: usize) -> Result<Vec<u64>, BenchError> {
            // SEARCH-API: SearchIndex::search
            let hits = self
                .idx
                .search(&q.lucene(), k)
                .map_err(BenchError::store(LABEL, "search"))?;
            Ok(hits.into_iter().map(|h| h.id).collect())
        }

        fn count(&self, q: &Query) -> Result<u64, BenchError> {
            // SEARCH-API: SearchIndex::count
            self.idx
                .count(&q.lucene())
                .map_err(BenchError::store(LABEL, "count"))
        }
    }
}

/// Until `datalith::search` is in the build: the same shape, every call failing.
#[cfg(not(feature = "datalith-search"))]
mod api {
    use std::path::Path;

    use super::super::corpus::Doc;
    use super::super::engine::Searcher;
    use super::super::queries::Query;
    use super::LABEL;
    use crate::common::BenchError;

    pub const UNAVAILABLE: Option<&str> =
        Some("datalith::search is not in this build (cargo feature datalith-search)");

    pub struct Open;

    fn no() -> BenchError {
        BenchError::Store {
            store: LABEL.into(),
            op: "search",
            message: UNAVAILABLE.unwrap_or_default().into(),
        }
    }

    pub fn open(_: &Path, _: bool, _: usize) -> Result<Open, BenchError> {
        Err(no())
    }

    pub fn put(_: &Open, _: &[Doc]) -> Result<(), BenchError> {
        Err(no())
    }

    impl Searcher for Open {
        fn top(&self, _: &Query, _: usize) -> Result<Vec<u64>, BenchError> {
            Err(no())
        }

        fn count(&self, _: &Query) -> Result<u64, BenchError> {
            Err(no())
        }
    }
}
