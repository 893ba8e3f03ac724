//! tantivy 0.25 (the Rust library), in process: one text field with frequencies and positions
//! through [`super::tantivy_words`] (Datalith's tokenization), not stored, and the document id
//! as a fast `u64` field. BM25 (tantivy's only scoring). One indexing thread (every engine
//! here writes from one thread; tantivy's merges still run in its own threads), a commit
//! every batch (tantivy's commit flushes its files: durable), merges waited for before the
//! index is closed; the not-durable run writes through [`super::tantivy_nosync`].
//! Queries are built as objects (tantivy's query parser has no single-term prefix): term,
//! boolean (must / should), phrase, and a prefix as the regular expression `pre.*` (a
//! constant-score automaton query, as Lucene's `PrefixQuery`).

use std::path::Path;

use tantivy::collector::{Count, TopDocs};
use tantivy::columnar::Column;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query as TQuery, RegexQuery, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{doc, Index, IndexReader, ReloadPolicy, Term};

use super::corpus::Doc;
use super::engine::{InProcess, Searcher};
use super::queries::{Kind, Query};
use super::tantivy_nosync::NoSyncDirectory;
use super::tantivy_words::{Words, NAME as WORDS};
use crate::common::BenchError;

pub const LABEL: &str = "tantivy";

/// The indexing thread's memory budget (tantivy's examples use 50 MB; more means fewer,
/// larger segments).
const WRITER_HEAP: usize = 200 << 20;

pub struct Tantivy;

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store(LABEL, op)
}

fn schema() -> (Schema, Field, Field) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let body = b.add_text_field("body", text);
    let id = b.add_u64_field("id", NumericOptions::default().set_fast());
    (b.build(), body, id)
}

fn with_words(index: Index) -> Index {
    index.tokenizers().register(WORDS, Words);
    index
}

impl InProcess for Tantivy {
    fn index(
        &self,
        dir: &Path,
        docs: &[Doc],
        batch: usize,
        durable: bool,
    ) -> Result<(), BenchError> {
        let (schema, body, id) = schema();
        let index = if durable {
            let d = MmapDirectory::open(dir).map_err(err("open"))?;
            Index::create(d, schema, Default::default())
        } else {
            let d = NoSyncDirectory::open(dir).map_err(err("open"))?;
            Index::create(d, schema, Default::default())
        }
        .map_err(err("create"))?;
        let index = with_words(index);
        let mut w = index
            .writer_with_num_threads::<tantivy::TantivyDocument>(1, WRITER_HEAP)
            .map_err(err("writer"))?;
        for chunk in docs.chunks(batch.max(1)) {
            for d in chunk {
                w.add_document(doc!(body => d.text.as_str(), id => d.id))
                    .map_err(err("add"))?;
            }
            w.commit().map_err(err("commit"))?;
        }
        w.wait_merging_threads().map_err(err("merge"))
    }

    fn open(&self, dir: &Path) -> Result<Box<dyn Searcher>, BenchError> {
        let (_, body, _) = schema();
        let index = with_words(Index::open_in_dir(dir).map_err(err("open"))?);
        let reader: IndexReader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(err("reader"))?;
        let searcher = reader.searcher();
        let ids = searcher
            .segment_readers()
            .iter()
            .map(|s| s.fast_fields().u64("id"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err("fast field"))?;
        Ok(Box::new(Open {
            _reader: reader,
            searcher,
            body,
            ids,
        }))
    }
}

struct Open {
    _reader: IndexReader,
    searcher: tantivy::Searcher,
    body: Field,
    /// Each segment's `id` column.
    ids: Vec<Column<u64>>,
}

impl Open {
    fn query(&self, q: &Query) -> Result<Box<dyn TQuery>, BenchError> {
        let term = |t: &str| Term::from_field_text(self.body, t);
        let term_q = |t: &str| -> Box<dyn TQuery> {
            Box::new(TermQuery::new(term(t), IndexRecordOption::WithFreqs))
        };
        Ok(match q.kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => term_q(&q.terms[0]),
            Kind::And | Kind::Or => {
                let occur = if q.kind == Kind::And {
                    Occur::Must
                } else {
                    Occur::Should
                };
                Box::new(BooleanQuery::new(
                    q.terms.iter().map(|t| (occur, term_q(t))).collect(),
                ))
            }
            Kind::Phrase => Box::new(PhraseQuery::new(q.terms.iter().map(|t| term(t)).collect())),
            Kind::Prefix => Box::new(
                RegexQuery::from_pattern(&format!("{}.*", q.terms[0]), self.body)
                    .map_err(err("regex"))?,
            ),
        })
    }
}

impl Searcher for Open {
    fn top(&self, q: &Query, k: usize) -> Result<Vec<u64>, BenchError> {
        let hits = self
            .searcher
            .search(&*self.query(q)?, &TopDocs::with_limit(k))
            .map_err(err("search"))?;
        hits.into_iter()
            .map(|(_, a)| {
                self.ids[a.segment_ord as usize]
                    .first(a.doc_id)
                    .ok_or_else(|| err("id")(format!("no id for {a:?}")))
            })
            .collect()
    }

    fn count(&self, q: &Query) -> Result<u64, BenchError> {
        self.searcher
            .search(&*self.query(q)?, &Count)
            .map(|n| n as u64)
            .map_err(err("count"))
    }
}
