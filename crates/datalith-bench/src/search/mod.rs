//! Workload S (search): full-text search over a real English corpus (GCIDE), Datalith's
//! `datalith::search` against Lucene (BM25, the anchor), tantivy, SQLite FTS5 and Datalevin's
//! search engine, in the same run: indexing throughput durable and not, index size, top-10 and
//! full-count latency per query kind, top-10 agreement with Lucene, every count checked.
//!
//! - [`args`]: flags and the sizes they resolve to.
//! - [`corpus`]: GCIDE from Debian's `dict-gcide`, one document per definition block.
//! - [`analyze`]: the two tokenizations of the engines, as the bench's reference.
//! - [`reference`]: the bench's own index, the answer to every query.
//! - [`queries`]: the query kinds, their seeded generation, each engine's syntax.
//! - [`engine`]: what an in-process peer does, and what any peer's pass gives back.
//! - [`measure`]: timing an in-process peer (indexing; warm-up, then timed rounds).
//! - [`datalith_peer`], [`tantivy_peer`] (cargo feature `search-peers`; with
//!   [`tantivy_words`] and [`tantivy_nosync`]), [`sqlite_peer`]: the in-process peers.
//! - [`external`]: the JVM peers through `bench/peers/run.sh` (Lucene, Datalevin).
//! - [`merge`]: passes merged, counts and top-10 lists checked, agreement with Lucene.
//! - [`goals`]: issue 52's goals as verdicts.
//! - [`report`], [`plot`]: `summary.md`, `summary.jsonl`, `search.csv`, the charts.
//! - [`orchestrate`]: the run itself.

mod analyze;
mod args;
mod corpus;
mod datalith_peer;
mod engine;
mod external;
mod goals;
mod measure;
mod merge;
mod orchestrate;
mod plot;
mod queries;
mod reference;
mod report;
mod sqlite_peer;
#[cfg(feature = "search-peers")]
mod tantivy_nosync;
#[cfg(feature = "search-peers")]
mod tantivy_peer;
#[cfg(feature = "search-peers")]
mod tantivy_words;

pub use args::SearchArgs;
pub use orchestrate::run;
