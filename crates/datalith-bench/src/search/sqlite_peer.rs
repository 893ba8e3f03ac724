//! SQLite FTS5 (rusqlite's bundled SQLite): a contentless FTS5 table (the index only, as the
//! other engines keep no text), tokenizer `unicode61 remove_diacritics 0` (lower-cases; letters
//! and digits; no stemming, no stop words; it has no UAX #29 tokenizer), ranked by FTS5's
//! built-in `bm25()` (`ORDER BY rank`). WAL journal; `synchronous=FULL` when durable, `OFF`
//! when not; one transaction per batch.

use std::path::Path;

use rusqlite::{params, Connection, OpenFlags};

use super::corpus::Doc;
use super::engine::{InProcess, Searcher};
use super::queries::Query;
use crate::common::BenchError;

pub const LABEL: &str = "sqlite-fts5";

const FILE: &str = "fts.db";

pub struct Sqlite;

fn err(op: &'static str) -> impl FnOnce(rusqlite::Error) -> BenchError {
    BenchError::store(LABEL, op)
}

impl InProcess for Sqlite {
    fn index(
        &self,
        dir: &Path,
        docs: &[Doc],
        batch: usize,
        durable: bool,
    ) -> Result<(), BenchError> {
        let mut conn = Connection::open(dir.join(FILE)).map_err(err("open"))?;
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={};
             CREATE VIRTUAL TABLE docs USING fts5(body, content='',
               tokenize='unicode61 remove_diacritics 0');",
            if durable { "FULL" } else { "OFF" }
        ))
        .map_err(err("create"))?;
        for chunk in docs.chunks(batch.max(1)) {
            let tx = conn.transaction().map_err(err("begin"))?;
            {
                let mut ins = tx
                    .prepare_cached("INSERT INTO docs(rowid, body) VALUES (?1, ?2)")
                    .map_err(err("prepare"))?;
                for d in chunk {
                    ins.execute(params![d.id as i64, d.text])
                        .map_err(err("insert"))?;
                }
            }
            tx.commit().map_err(err("commit"))?;
        }
        conn.close().map_err(|(_, e)| err("close")(e))
    }

    fn open(&self, dir: &Path) -> Result<Box<dyn Searcher>, BenchError> {
        let conn = Connection::open_with_flags(dir.join(FILE), OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(err("open"))?;
        Ok(Box::new(Open { conn }))
    }
}

struct Open {
    conn: Connection,
}

impl Searcher for Open {
    fn top(&self, q: &Query, k: usize) -> Result<Vec<u64>, BenchError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY rank LIMIT ?2")
            .map_err(err("prepare"))?;
        let rows = st
            .query_map(params![q.fts5(), k as i64], |r| r.get::<_, i64>(0))
            .map_err(err("search"))?;
        rows.map(|r| r.map(|id| id as u64).map_err(err("search")))
            .collect()
    }

    fn count(&self, q: &Query) -> Result<u64, BenchError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT count(*) FROM docs WHERE docs MATCH ?1")
            .map_err(err("prepare"))?;
        st.query_row(params![q.fts5()], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(err("count"))
    }
}
