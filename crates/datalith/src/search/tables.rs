//! The search engine's tables and the layout of their keys and values. Every key starts with
//! the *space*, a big-endian u32 naming one index: a full-text attribute's id, or a KV search
//! index's number (`KV_SPACE_BASE` and up). One set of tables serves every index, so an index
//! costs no LMDB table of its own.
//!
//! ```text
//! search_terms       space ++ term (UTF-8)          -> term id (u32)
//! search_term_stats  space ++ term id               -> df u32 ++ max tf u32 ++ min norm u8
//! search_postings    space ++ term id ++ first doc  -> a block of postings (`block`)
//! search_docs        space ++ doc (u64)             -> varint length ++ varint n ++ n term-id
//!                                                      deltas (varints, ascending) ++ owner
//! search_owners      space ++ owner                 -> doc (u64)   (Datalog: e ++ value hash)
//! search_meta        space ++ b'S'                  -> docs u64 ++ total length u64 ++
//!                                                      next term id u32 ++ next doc u64
//! search_meta        CATALOG ++ b'N' ++ name        -> space u32 ++ analyzer (2 bytes)
//! search_meta        CATALOG ++ b'C'                -> next KV space u32
//! ```
//!
//! A term keeps its id once given (the dictionary never shrinks; a term no document holds
//! has df 0), so a document's stored term ids stay valid and removing it needs no string.

use crate::kv::{Environment, KvError, Table, TableKind};

/// The first space of KV search indexes (attribute ids stay far below it).
pub const KV_SPACE_BASE: u32 = 0x8000_0000;
/// The space of the KV indexes' catalog.
pub const CATALOG: u32 = u32::MAX;

/// Handles to the search engine's tables.
#[derive(Debug, Clone)]
pub struct SearchTables {
    /// Term -> id.
    pub terms: Table,
    /// Term id -> its statistics.
    pub term_stats: Table,
    /// Postings blocks.
    pub postings: Table,
    /// Document -> its length, term ids and owner.
    pub docs: Table,
    /// Owner -> document.
    pub owners: Table,
    /// Per-index statistics and the KV catalog.
    pub meta: Table,
}

impl SearchTables {
    /// The tables' names, in the order `open` opens them.
    pub(crate) const NAMES: [&'static str; 6] = [
        "search_terms",
        "search_term_stats",
        "search_postings",
        "search_docs",
        "search_owners",
        "search_meta",
    ];

    /// Opens (creating, when writable) the tables; `None` in a read-only environment made
    /// before they existed.
    pub fn open(env: &Environment) -> Result<Option<SearchTables>, KvError> {
        let open = |name| env.table(name, TableKind::Plain);
        let [terms, term_stats, postings, docs, owners, meta] = Self::NAMES;
        let terms = match open(terms) {
            Ok(t) => t,
            Err(KvError::NoSuchTable { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(SearchTables {
            terms,
            term_stats: open(term_stats)?,
            postings: open(postings)?,
            docs: open(docs)?,
            owners: open(owners)?,
            meta: open(meta)?,
        }))
    }
}

/// `space ++ bytes`.
pub fn key(space: u32, bytes: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + bytes.len());
    k.extend_from_slice(&space.to_be_bytes());
    k.extend_from_slice(bytes);
    k
}

/// The `search_term_stats` key of a term id.
pub fn term_stats_key(space: u32, term: u32) -> [u8; 8] {
    let mut k = [0u8; 8];
    k[..4].copy_from_slice(&space.to_be_bytes());
    k[4..].copy_from_slice(&term.to_be_bytes());
    k
}

/// The `search_postings` key of a term's block starting at `first`.
pub fn block_key(space: u32, term: u32, first: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&term_stats_key(space, term));
    k[8..].copy_from_slice(&first.to_be_bytes());
    k
}

/// The `search_docs` key of a document.
pub fn doc_key(space: u32, doc: u64) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&space.to_be_bytes());
    k[4..].copy_from_slice(&doc.to_be_bytes());
    k
}

/// The `search_meta` key of an index's statistics.
pub fn stats_key(space: u32) -> [u8; 5] {
    let mut k = [0u8; 5];
    k[..4].copy_from_slice(&space.to_be_bytes());
    k[4] = b'S';
    k
}

/// An index's statistics (for BM25 and for numbering).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpaceStats {
    /// Documents indexed.
    pub docs: u64,
    /// Their lengths (indexed words) added up.
    pub total_len: u64,
    /// The id the next new term gets.
    pub next_term: u32,
    /// The next document number (Datalog indexes number their documents).
    pub next_doc: u64,
}

impl SpaceStats {
    /// 28 bytes, big-endian.
    pub fn to_bytes(self) -> [u8; 28] {
        let mut b = [0u8; 28];
        b[..8].copy_from_slice(&self.docs.to_be_bytes());
        b[8..16].copy_from_slice(&self.total_len.to_be_bytes());
        b[16..20].copy_from_slice(&self.next_term.to_be_bytes());
        b[20..].copy_from_slice(&self.next_doc.to_be_bytes());
        b
    }

    /// Parses `to_bytes`'s output; `None` for other bytes.
    pub fn from_bytes(b: &[u8]) -> Option<SpaceStats> {
        let b: &[u8; 28] = b.try_into().ok()?;
        Some(SpaceStats {
            docs: u64::from_be_bytes(b[..8].try_into().ok()?),
            total_len: u64::from_be_bytes(b[8..16].try_into().ok()?),
            next_term: u32::from_be_bytes(b[16..20].try_into().ok()?),
            next_doc: u64::from_be_bytes(b[20..].try_into().ok()?),
        })
    }
}

/// One term's statistics: documents holding it, and bounds for its best score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TermStats {
    /// Documents holding the term.
    pub df: u32,
    /// The largest frequency it has had in a document (an upper bound: removals leave it).
    pub max_tf: u32,
    /// The smallest norm of a document it has been in (also an upper bound on the score).
    pub min_norm: u8,
}

impl TermStats {
    /// 9 bytes.
    pub fn to_bytes(self) -> [u8; 9] {
        let mut b = [0u8; 9];
        b[..4].copy_from_slice(&self.df.to_be_bytes());
        b[4..8].copy_from_slice(&self.max_tf.to_be_bytes());
        b[8] = self.min_norm;
        b
    }

    /// Parses `to_bytes`'s output.
    pub fn from_bytes(b: &[u8]) -> Option<TermStats> {
        let b: &[u8; 9] = b.try_into().ok()?;
        Some(TermStats {
            df: u32::from_be_bytes(b[..4].try_into().ok()?),
            max_tf: u32::from_be_bytes(b[4..8].try_into().ok()?),
            min_norm: b[8],
        })
    }
}

/// A stored document: its length, its distinct terms and its owner's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocEntry {
    /// Indexed words.
    pub len: u32,
    /// Distinct term ids, ascending.
    pub terms: Vec<u32>,
    /// The owner (Datalog: entity ++ value hash; empty for KV documents).
    pub owner: Vec<u8>,
}

impl DocEntry {
    /// Its stored bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 + 2 * self.terms.len() + self.owner.len());
        super::varint::put(&mut b, u64::from(self.len));
        super::varint::put(&mut b, self.terms.len() as u64);
        let mut prev = 0u32;
        for &t in &self.terms {
            super::varint::put(&mut b, u64::from(t - prev));
            prev = t;
        }
        b.extend_from_slice(&self.owner);
        b
    }

    /// Parses stored bytes; `None` when they do not decode.
    pub fn from_bytes(b: &[u8]) -> Option<DocEntry> {
        let mut r = super::varint::Reader::new(b);
        let len = u32::try_from(r.varint()?).ok()?;
        let n = r.varint()? as usize;
        if n > b.len() {
            return None;
        }
        let mut terms = Vec::with_capacity(n);
        let mut prev = 0u64;
        for i in 0..n {
            let d = r.varint()?;
            if i > 0 && d == 0 {
                return None;
            }
            prev = prev.checked_add(d)?;
            terms.push(u32::try_from(prev).ok()?);
        }
        Some(DocEntry {
            len,
            terms,
            owner: r.rest().to_vec(),
        })
    }
}
