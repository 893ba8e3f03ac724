//! The full-text search engine, inside the store's files and commits: an inverted index per
//! full-text attribute (`:db/fulltext`) and per KV search index, written in the same commit
//! as what it indexes.
//!
//! The pipeline, one file a stage:
//! - `analyze`: text to terms (word segmentation, case folding, optional stop words and
//!   stemming);
//! - `query`: the query language to clauses (terms, phrases, +required, -excluded, prefix*);
//! - `tables`, `block`, `varint`: the stored layout (dictionary, postings blocks with
//!   positions and block-max headers, documents, statistics);
//! - `write`: documents added and removed, staged as whole-block writes;
//! - `read`, `score`, `exec`: cursors over postings, BM25, top-k with block-max MaxScore,
//!   counts and full matches;
//! - `snippet`: where a query matches in a text (for highlighting);
//! - `naive`: a query over texts in memory, no index (values in time; the tests' model);
//! - `check`: the index against itself;
//! - `kv_index`: the KV face ([`SearchIndex`]).
//!
//! The Datalog store uses the same pieces for `:db/fulltext` attributes (`tx::write`,
//! `query`'s `fulltext`).

pub mod analyze;
pub mod block;
pub mod check;
pub mod error;
pub mod exec;
pub mod kv_index;
pub mod naive;
pub mod query;
pub mod read;
pub mod score;
pub mod snippet;
pub mod tables;
pub mod varint;
pub mod write;

pub use analyze::{Analyzer, AnalyzerConfig, Language, StopWords, Token};
pub use error::SearchError;
pub use exec::Hit;
pub use kv_index::{DocChange, SearchIndex};
pub use query::{parse as parse_query, SearchQuery};
pub use tables::SearchTables;
