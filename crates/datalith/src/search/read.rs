//! Reading one index: its statistics, terms, documents, and a cursor over a term's postings
//! that moves block by block, decoding a block only when a document in it is looked at.

use std::ops::Bound;

use super::block::{self, Decoded, Header};
use super::error::SearchError;
use super::tables::{self, DocEntry, SearchTables, SpaceStats, TermStats};
use crate::kv::{Direction, Entries, View};
use crate::limits::MAX_PREFIX_TERMS;

/// A document number past every real one: a cursor's document once it is exhausted.
pub const END: u64 = u64::MAX;

/// One index as a snapshot holds it.
#[derive(Clone, Copy)]
pub struct SpaceReader<'t> {
    /// The snapshot.
    pub view: View<'t>,
    /// The tables.
    pub t: &'t SearchTables,
    /// The index's space.
    pub space: u32,
    /// Its statistics.
    pub stats: SpaceStats,
}

impl<'t> SpaceReader<'t> {
    /// The reader of index `space`.
    pub fn new(view: View<'t>, t: &'t SearchTables, space: u32) -> Result<Self, SearchError> {
        let stats = match view.get(&t.meta, &tables::stats_key(space))? {
            None => SpaceStats::default(),
            Some(b) => SpaceStats::from_bytes(b).ok_or_else(|| corrupt(space, "statistics"))?,
        };
        Ok(SpaceReader {
            view,
            t,
            space,
            stats,
        })
    }

    /// The id of `term`, if the index has seen it.
    pub fn term_id(&self, term: &str) -> Result<Option<u32>, SearchError> {
        match self
            .view
            .get(&self.t.terms, &tables::key(self.space, term.as_bytes()))?
        {
            None => Ok(None),
            Some(b) => Ok(Some(u32::from_be_bytes(
                b.try_into().map_err(|_| corrupt(self.space, "a term id"))?,
            ))),
        }
    }

    /// A term's statistics.
    pub fn term_stats(&self, id: u32) -> Result<TermStats, SearchError> {
        match self
            .view
            .get(&self.t.term_stats, &tables::term_stats_key(self.space, id))?
        {
            None => Ok(TermStats::default()),
            Some(b) => {
                TermStats::from_bytes(b).ok_or_else(|| corrupt(self.space, "term statistics"))
            }
        }
    }

    /// The ids of every term starting with `prefix` that some document holds; refused past
    /// `MAX_PREFIX_TERMS`.
    pub fn prefix_terms(&self, prefix: &str) -> Result<Vec<u32>, SearchError> {
        self.scan_terms(
            prefix.as_bytes(),
            &format!("{prefix}*"),
            |t| t.starts_with(prefix),
            |_| true,
        )
    }

    /// The ids of the terms some document holds among the dictionary entries from `lo`
    /// (a key suffix) on, while `keep` says go on; `pick` chooses; refused past
    /// `MAX_PREFIX_TERMS` picks.
    fn scan_terms(
        &self,
        lo: &[u8],
        what: &str,
        mut keep: impl FnMut(&str) -> bool,
        mut pick: impl FnMut(&str) -> bool,
    ) -> Result<Vec<u32>, SearchError> {
        let start = tables::key(self.space, lo);
        let end = tables::key(self.space.wrapping_add(1), &[]);
        let upper = if self.space == u32::MAX {
            Bound::Unbounded
        } else {
            Bound::Excluded(&end[..])
        };
        let mut out = Vec::new();
        for e in self.view.range(
            &self.t.terms,
            Bound::Included(&start[..]),
            upper,
            Direction::Forward,
        )? {
            let (k, v) = e?;
            let term = std::str::from_utf8(&k[4..]).map_err(|_| corrupt(self.space, "a term"))?;
            if !keep(term) {
                break;
            }
            if !pick(term) {
                continue;
            }
            let id =
                u32::from_be_bytes(v.try_into().map_err(|_| corrupt(self.space, "a term id"))?);
            if self.term_stats(id)?.df == 0 {
                continue;
            }
            if out.len() == MAX_PREFIX_TERMS {
                return Err(SearchError::BadQuery {
                    query: what.to_string(),
                    reason: format!("it matches more than {MAX_PREFIX_TERMS} terms"),
                });
            }
            out.push(id);
        }
        Ok(out)
    }

    /// The terms matching a wildcard pattern (`*`, `?`).
    pub fn wildcard_terms(&self, pattern: &str) -> Result<Vec<u32>, SearchError> {
        let literal: String = pattern
            .chars()
            .take_while(|c| *c != '*' && *c != '?')
            .collect();
        self.scan_terms(
            literal.as_bytes(),
            pattern,
            |t| t.starts_with(literal.as_str()),
            |t| super::query::wildcard_matches(pattern, t),
        )
    }

    /// The terms whose similarity to `term` is above `min` (a walk of the dictionary).
    pub fn fuzzy_terms(&self, term: &str, min: f32) -> Result<Vec<u32>, SearchError> {
        self.scan_terms(
            &[],
            &format!("{term}~"),
            |_| true,
            |t| super::query::similarity(term, t) > min,
        )
    }

    /// The terms between `lo` and `hi`.
    pub fn range_terms(
        &self,
        lo: &str,
        hi: &str,
        lo_included: bool,
        hi_included: bool,
    ) -> Result<Vec<u32>, SearchError> {
        self.scan_terms(
            lo.as_bytes(),
            &format!("[{lo} TO {hi}]"),
            |t| if hi_included { t <= hi } else { t < hi },
            |t| lo_included || t != lo,
        )
    }

    /// Every document, ascending.
    pub fn all_docs(&self) -> Result<Vec<u64>, SearchError> {
        let mut out = Vec::new();
        for e in self
            .view
            .prefix(&self.t.docs, &self.space.to_be_bytes(), Direction::Forward)?
        {
            let (k, _) = e?;
            let d = k
                .get(4..12)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| corrupt(self.space, "a document key"))?;
            out.push(d);
        }
        Ok(out)
    }

    /// A stored document.
    pub fn doc(&self, doc: u64) -> Result<Option<DocEntry>, SearchError> {
        match self
            .view
            .get(&self.t.docs, &tables::doc_key(self.space, doc))?
        {
            None => Ok(None),
            Some(b) => DocEntry::from_bytes(b)
                .map(Some)
                .ok_or_else(|| corrupt(self.space, "a document")),
        }
    }

    /// What the index holds and the bytes of its entries (keys and values as stored; LMDB's
    /// page overhead comes on top), by a walk of its keys in every table.
    pub fn sizes(&self) -> Result<SpaceSizes, SearchError> {
        let prefix = self.space.to_be_bytes();
        let walk = |t: &crate::kv::Table| -> Result<(u64, u64), SearchError> {
            let (mut n, mut bytes) = (0u64, 0u64);
            for e in self.view.prefix(t, &prefix, Direction::Forward)? {
                let (k, v) = e?;
                n += 1;
                bytes += (k.len() + v.len()) as u64;
            }
            Ok((n, bytes))
        };
        let (terms, terms_bytes) = walk(&self.t.terms)?;
        let (_, stats_bytes) = walk(&self.t.term_stats)?;
        let (blocks, postings_bytes) = walk(&self.t.postings)?;
        let (_, docs_bytes) = walk(&self.t.docs)?;
        let (_, owners_bytes) = walk(&self.t.owners)?;
        Ok(SpaceSizes {
            docs: self.stats.docs,
            terms,
            blocks,
            postings_bytes,
            bytes: terms_bytes + stats_bytes + postings_bytes + docs_bytes + owners_bytes,
        })
    }

    /// A cursor over term `id`'s postings, at its first document.
    pub fn cursor(&self, id: u32) -> Result<TermCursor<'t>, SearchError> {
        let lo = tables::term_stats_key(self.space, id);
        let hi = tables::term_stats_key(self.space, id.wrapping_add(1));
        let upper = if id == u32::MAX {
            tables::key(self.space.wrapping_add(1), &[])
        } else {
            hi.to_vec()
        };
        // The range borrows its bounds only while it is made.
        let entries = self.view.range(
            &self.t.postings,
            Bound::Included(&lo[..]),
            Bound::Excluded(&upper[..]),
            Direction::Forward,
        )?;
        let mut c = TermCursor {
            space: self.space,
            entries,
            h: Header {
                n: 0,
                first: END,
                last: END,
                max_tf: 0,
                min_norm: 0,
            },
            body: &[],
            decoded: false,
            d: Decoded::default(),
            positions: &[],
            i: 0,
            doc: END,
        };
        c.next_block()?;
        Ok(c)
    }
}

fn corrupt(space: u32, what: &str) -> SearchError {
    SearchError::Corrupt {
        index: format!("space {space}"),
        detail: format!("{what} does not decode"),
    }
}

/// An index's contents and bytes (`SpaceReader::sizes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpaceSizes {
    /// Documents.
    pub docs: u64,
    /// Terms in the dictionary (ever seen).
    pub terms: u64,
    /// Postings blocks.
    pub blocks: u64,
    /// Bytes of postings blocks (keys and values).
    pub postings_bytes: u64,
    /// Bytes of every entry of the index.
    pub bytes: u64,
}

/// A cursor over one term's postings.
pub struct TermCursor<'t> {
    space: u32,
    entries: Entries<'t>,
    /// The current block's header.
    pub h: Header,
    body: &'t [u8],
    decoded: bool,
    d: Decoded,
    positions: &'t [u8],
    i: usize,
    doc: u64,
}

impl<'t> TermCursor<'t> {
    /// The current document (`END` when exhausted).
    #[inline]
    pub fn doc(&self) -> u64 {
        self.doc
    }

    fn next_block(&mut self) -> Result<(), SearchError> {
        match self.entries.next() {
            None => {
                self.doc = END;
                self.h.last = END;
                Ok(())
            }
            Some(e) => {
                let (k, v) = e?;
                let first = super::write::block_first(k)
                    .ok_or_else(|| corrupt(self.space, "a postings key"))?;
                let (h, at) = block::header(first, v)
                    .ok_or_else(|| corrupt(self.space, "a postings block"))?;
                self.h = h;
                self.body = &v[at..];
                self.decoded = false;
                self.i = 0;
                self.doc = first;
                Ok(())
            }
        }
    }

    fn decode(&mut self) -> Result<(), SearchError> {
        if !self.decoded {
            self.positions = block::decode(&self.h, self.body, &mut self.d)
                .ok_or_else(|| corrupt(self.space, "a postings block"))?;
            self.decoded = true;
        }
        Ok(())
    }

    /// Moves to the next document.
    pub fn step(&mut self) -> Result<(), SearchError> {
        if self.doc == END {
            return Ok(());
        }
        if self.i + 1 < self.h.n {
            self.decode()?;
            self.i += 1;
            self.doc = self.d.docs[self.i];
            Ok(())
        } else {
            self.next_block()
        }
    }

    /// Moves to the first document at or after `target`, skipping whole blocks by their
    /// headers.
    pub fn advance(&mut self, target: u64) -> Result<(), SearchError> {
        if self.doc >= target {
            return Ok(());
        }
        while self.h.last < target {
            self.next_block()?;
            if self.doc >= target {
                return Ok(());
            }
        }
        self.decode()?;
        let docs = &self.d.docs[self.i..self.h.n];
        let at = docs.partition_point(|&d| d < target);
        self.i += at;
        self.doc = self.d.docs[self.i];
        Ok(())
    }

    /// Moves past the current block (the next document is in a later one).
    pub fn skip_block(&mut self) -> Result<(), SearchError> {
        if self.doc != END {
            self.next_block()?;
        }
        Ok(())
    }

    /// The current document's frequency and norm.
    pub fn tf_norm(&mut self) -> Result<(u32, u8), SearchError> {
        self.decode()?;
        Ok((self.d.tfs[self.i], self.d.norms[self.i]))
    }

    /// The current document's positions.
    pub fn positions(&mut self, out: &mut Vec<u32>) -> Result<(), SearchError> {
        self.decode()?;
        block::positions_of(&self.d, self.positions, self.i, out)
            .ok_or_else(|| corrupt(self.space, "a postings block's positions"))
    }
}
