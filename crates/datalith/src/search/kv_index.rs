//! Search indexes for key-value users: a named index over documents the caller numbers,
//! written in the KV engine's commits (durable as the environment is, one commit per
//! `write`, sharing group commits with concurrent writers) and read from its snapshots.
//! The index keeps terms and postings, not the texts: the caller keeps its documents where
//! it likes (often a KV table under the same ids).

use std::sync::Arc;

use super::analyze::{Analyzer, AnalyzerConfig};
use super::error::SearchError;
use super::exec::{self, Hit};
use super::query;
use super::read::SpaceReader;
use super::tables::{self, SearchTables, CATALOG, KV_SPACE_BASE};
use super::write::SpaceWriter;
use crate::kv::handle::{CommitHandle, Completion};
use crate::kv::{BatchState, Environment, KvError, Outcome, Rejected, Stage, View, WriteRequest};

/// The longest index name (bytes).
const MAX_NAME_BYTES: usize = 200;

/// One change to an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocChange {
    /// Index `text` as document `id`, replacing what `id` held.
    Put {
        /// The caller's document id.
        id: u64,
        /// Its text.
        text: String,
    },
    /// Remove document `id` (nothing if absent).
    Remove {
        /// The caller's document id.
        id: u64,
    },
}

/// A named full-text index in a KV environment.
#[derive(Clone)]
pub struct SearchIndex {
    env: Environment,
    core: Arc<Core>,
}

/// What a write request needs of its index (never the environment: a request dropped on the
/// committer's thread must not hold the last handle, whose drop joins that thread).
struct Core {
    t: SearchTables,
    space: u32,
    name: String,
    analyzer: Analyzer,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("name", &self.core.name)
            .field("space", &self.core.space)
            .finish()
    }
}

fn catalog_key(name: &str) -> Vec<u8> {
    let mut k = tables::key(CATALOG, b"N");
    k.extend_from_slice(name.as_bytes());
    k
}

impl Environment {
    /// Opens the search index `name`, creating it with `config` if it does not exist (an
    /// existing index keeps the analysis it was made with).
    pub fn search_index(
        &self,
        name: &str,
        config: AnalyzerConfig,
    ) -> Result<SearchIndex, SearchError> {
        if name.is_empty() || name.len() > MAX_NAME_BYTES {
            return Err(SearchError::BadName {
                name: name.to_string(),
                reason: format!("a name is 1 to {MAX_NAME_BYTES} bytes"),
            });
        }
        let t = SearchTables::open(self)?.ok_or_else(|| {
            SearchError::Kv(KvError::NoSuchTable {
                name: "search_terms".into(),
            })
        })?;
        let found = {
            let read = self.read()?;
            let view = read.view();
            view.get(&t.meta, &catalog_key(name))?
                .map(|b| parse_catalog(name, b))
                .transpose()?
        };
        let (space, config) = match found {
            Some(x) => x,
            None => {
                let (completion, handle) = CommitHandle::pair();
                self.submit_blocking(Box::new(CreateIndex {
                    t: t.clone(),
                    name: name.to_string(),
                    config,
                    result: None,
                    completion: Some(completion),
                }));
                handle.wait()?
            }
        };
        Ok(SearchIndex {
            env: self.clone(),
            core: Arc::new(Core {
                t,
                space,
                name: name.to_string(),
                analyzer: Analyzer::new(config),
            }),
        })
    }
}

fn parse_catalog(name: &str, b: &[u8]) -> Result<(u32, AnalyzerConfig), SearchError> {
    let bad = || SearchError::Corrupt {
        index: name.to_string(),
        detail: "its catalog entry does not decode".into(),
    };
    let b: &[u8; 6] = b.try_into().map_err(|_| bad())?;
    let space = u32::from_be_bytes(b[..4].try_into().map_err(|_| bad())?);
    let config = AnalyzerConfig::from_bytes([b[4], b[5]]).ok_or_else(bad)?;
    Ok((space, config))
}

impl SearchIndex {
    /// The index's name.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// The analysis its documents and queries go through.
    pub fn analyzer(&self) -> &Analyzer {
        &self.core.analyzer
    }

    /// Applies `changes` in one commit, returning once it is as durable as the environment
    /// promises.
    pub fn write(&self, changes: Vec<DocChange>) -> Result<(), SearchError> {
        self.write_async(changes).wait()
    }

    /// Queues `changes` as one commit; the handle completes once they are durable.
    /// Concurrent writes share group commits.
    pub fn write_async(&self, changes: Vec<DocChange>) -> CommitHandle<(), SearchError> {
        let (completion, handle) = CommitHandle::pair();
        let bytes = changes
            .iter()
            .map(|c| match c {
                DocChange::Put { text, .. } => 4 * text.len() + 64,
                DocChange::Remove { .. } => 256,
            })
            .sum();
        self.env.submit(Box::new(WriteDocs {
            index: self.core.clone(),
            changes,
            bytes,
            result: None,
            completion: Some(completion),
        }));
        handle
    }

    fn reader<'t>(&'t self, view: View<'t>) -> Result<SpaceReader<'t>, SearchError> {
        SpaceReader::new(view, &self.core.t, self.core.space)
    }

    /// The best `k` documents for `query`, best first.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>, SearchError> {
        let q = query::parse(query, &self.core.analyzer)?;
        let read = self.env.read()?;
        let r = self.reader(read.view())?;
        exec::top_k(&r, &q, k)
    }

    /// How many documents match `query`.
    pub fn count(&self, query: &str) -> Result<u64, SearchError> {
        let q = query::parse(query, &self.core.analyzer)?;
        let read = self.env.read()?;
        let r = self.reader(read.view())?;
        exec::count(&r, &q)
    }

    /// Documents indexed.
    pub fn len(&self) -> Result<u64, SearchError> {
        let read = self.env.read()?;
        Ok(self.reader(read.view())?.stats.docs)
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> Result<bool, SearchError> {
        Ok(self.len()? == 0)
    }

    /// The byte ranges of `text` that `query`'s terms match (for highlighting a hit whose
    /// text the caller kept).
    pub fn match_offsets(
        &self,
        query: &str,
        text: &str,
    ) -> Result<Vec<(usize, usize)>, SearchError> {
        let q = query::parse(query, &self.core.analyzer)?;
        Ok(super::snippet::match_offsets(&q, &self.core.analyzer, text))
    }

    /// Checks the index's internal agreement (`search::check`).
    pub fn check(&self) -> Result<super::check::Report, SearchError> {
        let read = self.env.read()?;
        super::check::check_space(&self.reader(read.view())?, &self.core.name)
    }
}

/// The request that creates an index's catalog entry.
struct CreateIndex {
    t: SearchTables,
    name: String,
    config: AnalyzerConfig,
    result: Option<Result<(u32, AnalyzerConfig), SearchError>>,
    completion: Option<Completion<(u32, AnalyzerConfig), SearchError>>,
}

impl CreateIndex {
    fn run(&self, view: View<'_>, stage: &mut Stage) -> Result<(u32, AnalyzerConfig), SearchError> {
        let key = catalog_key(&self.name);
        if let Some(b) = view.get(&self.t.meta, &key)? {
            return parse_catalog(&self.name, b);
        }
        let counter = tables::key(CATALOG, b"C");
        let n = match view.get(&self.t.meta, &counter)? {
            None => 0,
            Some(b) => u32::from_be_bytes(b.try_into().map_err(|_| SearchError::Corrupt {
                index: self.name.clone(),
                detail: "the index counter is not 4 bytes".into(),
            })?),
        };
        let space = KV_SPACE_BASE
            .checked_add(n)
            .filter(|s| *s < CATALOG)
            .ok_or_else(|| SearchError::BadName {
                name: self.name.clone(),
                reason: "no more search indexes can be made".into(),
            })?;
        stage.put(&self.t.meta, &counter, &(n + 1).to_be_bytes());
        let mut v = space.to_be_bytes().to_vec();
        v.extend_from_slice(&self.config.to_bytes());
        stage.put(&self.t.meta, &key, &v);
        Ok((space, self.config))
    }
}

impl WriteRequest for CreateIndex {
    fn size_hint(&self) -> usize {
        256
    }

    fn prepare(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        _: &mut BatchState,
    ) -> Result<(), Rejected> {
        let r = self.run(view, stage);
        let failed = r.is_err();
        self.result = Some(r);
        if failed {
            Err(Rejected)
        } else {
            Ok(())
        }
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) {
        let r = finish_result(self.result.take(), outcome);
        if let Some(c) = self.completion.take() {
            c.complete(r);
        }
    }
}

fn finish_result<T>(
    result: Option<Result<T, SearchError>>,
    outcome: Outcome,
) -> Result<T, SearchError> {
    match (outcome, result) {
        (Outcome::Committed, Some(r)) => r,
        (Outcome::Rejected, Some(Err(e))) => Err(e),
        (Outcome::Failed(e), _) => Err(SearchError::Kv(e)),
        _ => Err(SearchError::Kv(KvError::CommitFailed {
            cause: "a search write finished without a result".into(),
        })),
    }
}

/// The request that applies one `write`.
struct WriteDocs {
    index: Arc<Core>,
    changes: Vec<DocChange>,
    bytes: usize,
    result: Option<Result<(), SearchError>>,
    completion: Option<Completion<(), SearchError>>,
}

impl WriteDocs {
    fn run(&self, view: View<'_>, stage: &mut Stage) -> Result<(), SearchError> {
        let ix = &self.index;
        let mut w = SpaceWriter::new(view, &ix.t, ix.space, ix.name.clone())?;
        for c in &self.changes {
            match c {
                DocChange::Put { id, text } => w.add(*id, text, &[], &ix.analyzer)?,
                DocChange::Remove { id } => {
                    w.remove(*id)?;
                }
            }
        }
        w.finish(stage)
    }
}

impl WriteRequest for WriteDocs {
    fn size_hint(&self) -> usize {
        self.bytes
    }

    fn prepare(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        _: &mut BatchState,
    ) -> Result<(), Rejected> {
        let r = self.run(view, stage);
        let failed = r.is_err();
        self.result = Some(r);
        if failed {
            Err(Rejected)
        } else {
            Ok(())
        }
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) {
        let r = finish_result(self.result.take(), outcome);
        if let Some(c) = self.completion.take() {
            c.complete(r);
        }
    }
}
