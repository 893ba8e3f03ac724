//! Indexing: documents added to and removed from one index, gathered in memory for one
//! request, then staged as whole-block writes. Every read goes through the request's view,
//! which holds the earlier requests of its commit group, so requests of one group build on
//! each other; the request's own changes are kept here until `finish`, which writes each
//! touched block once however many of the request's documents touched it.

use std::collections::BTreeMap;
use std::ops::Bound;

use rustc_hash::FxHashMap as HashMap;

use super::analyze::Analyzer;
use super::block::{self, norm, Posting};
use super::error::SearchError;
use super::tables::{self, DocEntry, SearchTables, SpaceStats, TermStats};
use crate::kv::{Direction, Stage, View};
use crate::limits::SEARCH_BLOCK_DOCS;

/// One index's changes within one request.
pub struct SpaceWriter<'v> {
    view: View<'v>,
    t: &'v SearchTables,
    space: u32,
    name: String,
    stats: SpaceStats,
    /// Term -> id, for terms looked up or created in this request.
    term_ids: HashMap<String, u32>,
    /// Term id -> statistics as this request leaves them (`None`: not yet read).
    term_stats: HashMap<u32, TermStats>,
    /// Term id -> this request's changes of its postings, in the order made (the last one
    /// of a document counts); added positions live in `positions`.
    changes: HashMap<u32, Vec<Change>>,
    /// The positions of added postings, back to back.
    positions: Vec<u32>,
    /// Reused per document: `(term id, position)` pairs.
    scratch: Vec<(u32, u32)>,
    /// Reused: a lower-cased word.
    word: String,
    /// Documents written by this request (`None`: removed).
    docs: BTreeMap<u64, Option<DocEntry>>,
    /// Owners written by this request (`None`: removed).
    owners: BTreeMap<Vec<u8>, Option<u64>>,
    new_terms: Vec<(String, u32)>,
}

impl<'v> SpaceWriter<'v> {
    /// A writer of index `space` (named `name` in errors) on the state `view` reads.
    pub fn new(
        view: View<'v>,
        t: &'v SearchTables,
        space: u32,
        name: String,
    ) -> Result<SpaceWriter<'v>, SearchError> {
        let stats = match view.get(&t.meta, &tables::stats_key(space))? {
            None => SpaceStats::default(),
            Some(b) => SpaceStats::from_bytes(b).ok_or_else(|| SearchError::Corrupt {
                index: name.clone(),
                detail: "its statistics are not 28 bytes".into(),
            })?,
        };
        Ok(SpaceWriter {
            view,
            t,
            space,
            name,
            stats,
            term_ids: HashMap::default(),
            term_stats: HashMap::default(),
            changes: HashMap::default(),
            positions: Vec::new(),
            scratch: Vec::new(),
            word: String::new(),
            docs: BTreeMap::new(),
            owners: BTreeMap::new(),
            new_terms: Vec::new(),
        })
    }

    fn corrupt(&self, detail: impl Into<String>) -> SearchError {
        SearchError::Corrupt {
            index: self.name.clone(),
            detail: detail.into(),
        }
    }

    /// A fresh document number (Datalog indexes number their own documents).
    pub fn next_doc(&mut self) -> u64 {
        let d = self.stats.next_doc;
        self.stats.next_doc += 1;
        d
    }

    /// The document `owner` names, if any.
    pub fn doc_of_owner(&self, owner: &[u8]) -> Result<Option<u64>, SearchError> {
        if let Some(d) = self.owners.get(owner) {
            return Ok(*d);
        }
        match self
            .view
            .get(&self.t.owners, &tables::key(self.space, owner))?
        {
            None => Ok(None),
            Some(b) => {
                Ok(Some(u64::from_be_bytes(b.try_into().map_err(|_| {
                    self.corrupt("an owner's document is not 8 bytes")
                })?)))
            }
        }
    }

    fn doc_entry(&self, doc: u64) -> Result<Option<DocEntry>, SearchError> {
        if let Some(d) = self.docs.get(&doc) {
            return Ok(d.clone());
        }
        match self
            .view
            .get(&self.t.docs, &tables::doc_key(self.space, doc))?
        {
            None => Ok(None),
            Some(b) => DocEntry::from_bytes(b)
                .map(Some)
                .ok_or_else(|| self.corrupt(format!("document {doc} does not decode"))),
        }
    }

    fn stats_of(&mut self, id: u32) -> Result<TermStats, SearchError> {
        if let Some(s) = self.term_stats.get(&id) {
            return Ok(*s);
        }
        let s = match self
            .view
            .get(&self.t.term_stats, &tables::term_stats_key(self.space, id))?
        {
            None => TermStats::default(),
            Some(b) => TermStats::from_bytes(b)
                .ok_or_else(|| self.corrupt(format!("term {id}'s statistics do not decode")))?,
        };
        self.term_stats.insert(id, s);
        Ok(s)
    }

    fn term_id(&mut self, term: &str) -> Result<u32, SearchError> {
        if let Some(id) = self.term_ids.get(term) {
            return Ok(*id);
        }
        let id = match self
            .view
            .get(&self.t.terms, &tables::key(self.space, term.as_bytes()))?
        {
            Some(b) => u32::from_be_bytes(
                b.try_into()
                    .map_err(|_| self.corrupt("a term id is not 4 bytes"))?,
            ),
            None => {
                let id = self.stats.next_term;
                self.stats.next_term = id
                    .checked_add(1)
                    .ok_or_else(|| self.corrupt("the term ids ran out"))?;
                self.new_terms.push((term.to_string(), id));
                self.term_stats.insert(id, TermStats::default());
                id
            }
        };
        self.term_ids.insert(term.to_string(), id);
        Ok(id)
    }

    /// Indexes `text` as document `doc` (replacing what `doc` held), owned by `owner`.
    pub fn add(
        &mut self,
        doc: u64,
        text: &str,
        owner: &[u8],
        analyzer: &Analyzer,
    ) -> Result<(), SearchError> {
        // A document past every one the index has numbered is new: no lookup to replace it.
        if doc < self.stats.next_doc || doc == u64::MAX || self.docs.contains_key(&doc) {
            self.remove(doc)?;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut word = std::mem::take(&mut self.word);
        scratch.clear();
        let mut len = 0u32;
        let mut failed = None;
        analyzer.each_term(text, &mut word, |term, position| {
            len += 1;
            match self.term_id(term) {
                Ok(id) => scratch.push((id, position)),
                Err(e) => failed = Some(e),
            }
        });
        self.word = word;
        if let Some(e) = failed {
            return Err(e);
        }
        scratch.sort_unstable();
        let code = norm::encode(len);
        let mut ids = Vec::new();
        for run in scratch.chunk_by(|a, b| a.0 == b.0) {
            let id = run[0].0;
            let tf = run.len() as u32;
            let mut s = self.stats_of(id)?;
            s.df += 1;
            s.max_tf = s.max_tf.max(tf);
            // 0 is no norm yet: a document holding a term has at least one word.
            s.min_norm = if s.min_norm == 0 {
                code
            } else {
                s.min_norm.min(code)
            };
            self.term_stats.insert(id, s);
            let start = self.positions.len() as u32;
            self.positions.extend(run.iter().map(|x| x.1));
            self.changes.entry(id).or_default().push(Change {
                doc,
                norm: code,
                start,
                tf,
            });
            ids.push(id);
        }
        self.scratch = scratch;
        self.stats.docs += 1;
        self.stats.total_len += u64::from(len);
        self.stats.next_doc = self.stats.next_doc.max(doc.saturating_add(1));
        self.docs.insert(
            doc,
            Some(DocEntry {
                len,
                terms: ids,
                owner: owner.to_vec(),
            }),
        );
        if !owner.is_empty() {
            self.owners.insert(owner.to_vec(), Some(doc));
        }
        Ok(())
    }

    /// Removes document `doc`; whether it was there.
    pub fn remove(&mut self, doc: u64) -> Result<bool, SearchError> {
        let Some(entry) = self.doc_entry(doc)? else {
            return Ok(false);
        };
        for &id in &entry.terms {
            let mut s = self.stats_of(id)?;
            s.df = s.df.checked_sub(1).ok_or_else(|| {
                self.corrupt(format!(
                    "term {id} holds fewer documents than say they hold it"
                ))
            })?;
            self.term_stats.insert(id, s);
            self.changes
                .entry(id)
                .or_default()
                .push(Change::removal(doc));
        }
        self.stats.docs = self.stats.docs.saturating_sub(1);
        self.stats.total_len = self.stats.total_len.saturating_sub(u64::from(entry.len));
        self.docs.insert(doc, None);
        if !entry.owner.is_empty() {
            self.owners.insert(entry.owner, None);
        }
        Ok(true)
    }

    /// Stages every change: blocks, term statistics, documents, owners, the index's
    /// statistics.
    pub fn finish(mut self, stage: &mut Stage) -> Result<(), SearchError> {
        let mut buf = Vec::new();
        let mut changes: Vec<(u32, Vec<Change>)> =
            std::mem::take(&mut self.changes).into_iter().collect();
        changes.sort_unstable_by_key(|(id, _)| *id);
        for (id, mut docs) in changes {
            // By document, the last change of each kept.
            docs.sort_by_key(|c| c.doc);
            let mut last: Vec<Change> = Vec::with_capacity(docs.len());
            for c in docs {
                match last.last_mut() {
                    Some(l) if l.doc == c.doc => *l = c,
                    _ => last.push(c),
                }
            }
            self.write_term(id, &last, stage, &mut buf)?;
        }
        for (term, id) in std::mem::take(&mut self.new_terms) {
            stage.put(
                &self.t.terms,
                &tables::key(self.space, term.as_bytes()),
                &id.to_be_bytes(),
            );
        }
        for (id, s) in &self.term_stats {
            stage.put(
                &self.t.term_stats,
                &tables::term_stats_key(self.space, *id),
                &s.to_bytes(),
            );
        }
        for (doc, entry) in &self.docs {
            let k = tables::doc_key(self.space, *doc);
            match entry {
                Some(e) => stage.put(&self.t.docs, &k, &e.to_bytes()),
                None => stage.delete(&self.t.docs, &k),
            }
        }
        for (owner, doc) in &self.owners {
            let k = tables::key(self.space, owner);
            match doc {
                Some(d) => stage.put(&self.t.owners, &k, &d.to_be_bytes()),
                None => stage.delete(&self.t.owners, &k),
            }
        }
        stage.put(
            &self.t.meta,
            &tables::stats_key(self.space),
            &self.stats.to_bytes(),
        );
        Ok(())
    }

    /// Rewrites the blocks of term `id` that `docs` (ascending, one change a document)
    /// falls in.
    fn write_term(
        &self,
        id: u32,
        docs: &[Change],
        stage: &mut Stage,
        buf: &mut Vec<u8>,
    ) -> Result<(), SearchError> {
        let (Some(lo), Some(hi)) = (docs.first().map(|c| c.doc), docs.last().map(|c| c.doc)) else {
            return Ok(());
        };
        let prefix = tables::term_stats_key(self.space, id);
        let lo_key = tables::block_key(self.space, id, lo);
        let hi_key = tables::block_key(self.space, id, hi);
        // The blocks to rewrite: the one that may hold `lo` (starting at or before it, unless
        // it is full and ends before `lo`: then new documents start a block of their own),
        // and every block starting in `(lo, hi]`.
        let mut old: Vec<Posting> = Vec::new();
        let mut stale: Vec<u64> = Vec::new();
        if let Some(e) = self
            .view
            .range(
                &self.t.postings,
                Bound::Included(&prefix[..]),
                Bound::Included(&lo_key[..]),
                Direction::Backward,
            )?
            .next()
        {
            let (k, v) = e?;
            let first =
                block_first(k).ok_or_else(|| self.corrupt("a postings key is not 16 bytes"))?;
            let (h, _) = block::header(first, v).ok_or_else(|| {
                self.corrupt(format!("term {id}'s block at {first} does not decode"))
            })?;
            if !(h.n >= SEARCH_BLOCK_DOCS && h.last < lo) {
                old.extend(self.decode_block(id, first, v)?);
                stale.push(first);
            }
        }
        for e in self.view.range(
            &self.t.postings,
            Bound::Excluded(&lo_key[..]),
            Bound::Included(&hi_key[..]),
            Direction::Forward,
        )? {
            let (k, v) = e?;
            let first =
                block_first(k).ok_or_else(|| self.corrupt("a postings key is not 16 bytes"))?;
            old.extend(self.decode_block(id, first, v)?);
            stale.push(first);
        }
        // Merge the old postings with the changes, both ascending; a change replaces.
        let mut merged: Vec<Item<'_>> = Vec::with_capacity(old.len() + docs.len());
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < docs.len() {
            let take_new = match (old.get(i), docs.get(j)) {
                (Some(o), Some(c)) => {
                    if o.doc == c.doc {
                        i += 1;
                    }
                    c.doc <= o.doc
                }
                (None, Some(_)) => true,
                _ => false,
            };
            if take_new {
                let c = &docs[j];
                j += 1;
                if c.tf > 0 {
                    let p = &self.positions[c.start as usize..(c.start + c.tf) as usize];
                    merged.push((c.doc, c.norm, p));
                }
            } else {
                let o = &old[i];
                i += 1;
                merged.push((o.doc, o.norm, &o.positions));
            }
        }
        let chunks: Vec<&[Item<'_>]> = merged.chunks(SEARCH_BLOCK_DOCS).collect();
        // A block key written anew is not also deleted: one op a key.
        for first in stale {
            if !chunks.iter().any(|c| c[0].0 == first) {
                stage.delete(&self.t.postings, &tables::block_key(self.space, id, first));
            }
        }
        for chunk in chunks {
            block::encode_items(chunk, buf);
            stage.put(
                &self.t.postings,
                &tables::block_key(self.space, id, chunk[0].0),
                buf,
            );
        }
        Ok(())
    }

    fn decode_block(&self, id: u32, first: u64, v: &[u8]) -> Result<Vec<Posting>, SearchError> {
        block::postings(first, v)
            .ok_or_else(|| self.corrupt(format!("term {id}'s block at {first} does not decode")))
    }
}

/// One change of a term's postings: document `doc` gets `tf` positions from `start` of the
/// writer's arena, or (`tf == 0`) loses the term.
#[derive(Debug, Clone, Copy)]
struct Change {
    doc: u64,
    norm: u8,
    start: u32,
    tf: u32,
}

impl Change {
    fn removal(doc: u64) -> Change {
        Change {
            doc,
            norm: 0,
            start: 0,
            tf: 0,
        }
    }
}

/// A posting to encode: document, norm, positions.
type Item<'a> = (u64, u8, &'a [u32]);

/// The first document of a postings key.
pub fn block_first(k: &[u8]) -> Option<u64> {
    let b: &[u8; 16] = k.try_into().ok()?;
    Some(u64::from_be_bytes(b[8..].try_into().ok()?))
}
