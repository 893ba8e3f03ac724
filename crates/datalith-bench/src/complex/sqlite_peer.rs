//! SQLite as a peer (rusqlite's bundled SQLite, in process): the tables in one database
//! file beside the data (WAL; loaded once, reused while its marker matches), the spec's keys
//! and an index on each foreign key, `ANALYZE`d; `case_sensitive_like` on, as SQL's `LIKE`
//! is case-sensitive in the spec (and in PostgreSQL). A query runs on one prepared
//! statement stepped to its last row; a progress handler stops it at the time limit.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::answer::{Answer, Cell};
use super::generate::{read_rows, tbl_path, GENERATOR};
use super::peer::{Peer, RunError};
use super::queries::Query;
use super::sql_schema::{create_indexes, create_tables, Dialect};
use super::tables::{Kind, TABLES};
use crate::common::BenchError;

/// SQLite's page cache (1 GiB; its default, 2 MB, would make it read the OS page cache for
/// every page, where Datalith and PostgreSQL keep theirs).
const CACHE_KIB: i64 = 1 << 20;

/// SQLite loaded with the tables of one scale factor.
pub struct SqlitePeer {
    conn: Connection,
}

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store("sqlite", op)
}

impl SqlitePeer {
    /// Opens `dir/tpch.db` if a complete load is there, else loads it from `data`; the
    /// load's seconds when it loaded.
    pub fn open_or_load(
        dir: &Path,
        data: &Path,
        sf: f64,
        log: impl Fn(&str),
    ) -> Result<(SqlitePeer, Option<f64>), BenchError> {
        let marker = dir.join("LOADED");
        let want = format!("{GENERATOR} sf {sf} sqlite 1\n");
        let path = dir.join("tpch.db");
        let reuse = std::fs::read_to_string(&marker).ok().as_deref() == Some(want.as_str());
        if !reuse {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
        }
        let conn = Connection::open(&path).map_err(err("open"))?;
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA cache_size = -{CACHE_KIB}; \
             PRAGMA case_sensitive_like = ON;"
        ))
        .map_err(err("pragma"))?;
        if reuse {
            return Ok((SqlitePeer { conn }, None));
        }
        let start = Instant::now();
        conn.execute_batch("PRAGMA synchronous = OFF;")
            .map_err(err("pragma"))?;
        for ddl in create_tables(Dialect::Sqlite) {
            conn.execute(&ddl, []).map_err(err("create table"))?;
        }
        for t in &TABLES {
            let t0 = Instant::now();
            let tx = conn.unchecked_transaction().map_err(err("begin"))?;
            let marks: Vec<String> = (1..=t.columns.len()).map(|i| format!("?{i}")).collect();
            let n = {
                let mut st = tx
                    .prepare(&format!(
                        "INSERT INTO {} VALUES ({})",
                        t.sql,
                        marks.join(", ")
                    ))
                    .map_err(err("prepare"))?;
                read_rows(&tbl_path(data, t.sql), |fields| {
                    let values: Vec<rusqlite::types::Value> = t
                        .columns
                        .iter()
                        .zip(fields)
                        .map(|(c, f)| sql_value(c.kind, f))
                        .collect();
                    st.execute(rusqlite::params_from_iter(values))
                        .map_err(err("insert"))?;
                    Ok(())
                })?
            };
            tx.commit().map_err(err("commit"))?;
            log(&format!(
                "sqlite: loaded {} ({n} rows) in {:.1} s",
                t.sql,
                t0.elapsed().as_secs_f64()
            ));
        }
        for ddl in create_indexes() {
            conn.execute(&ddl, []).map_err(err("create index"))?;
        }
        conn.execute_batch("ANALYZE; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA synchronous = FULL;")
            .map_err(err("analyze"))?;
        let secs = start.elapsed().as_secs_f64();
        log(&format!("sqlite: loaded and indexed in {secs:.1} s"));
        std::fs::write(&marker, want).map_err(BenchError::io(&marker))?;
        Ok((SqlitePeer { conn }, Some(secs)))
    }
}

/// One `.tbl` field as SQLite stores it.
fn sql_value(kind: Kind, f: &str) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match kind {
        Kind::Key | Kind::Ref(_) | Kind::Int => f.parse().map_or(V::Text(f.into()), V::Integer),
        Kind::Decimal => f.parse().map_or(V::Text(f.into()), V::Real),
        Kind::Date | Kind::Text => V::Text(f.into()),
    }
}

/// One SQLite value as a cell.
pub fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Num(i as f64),
        ValueRef::Real(x) => Cell::Num(x),
        ValueRef::Text(t) => Cell::from_text(&String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => Cell::Text(format!("{b:02x?}")),
    }
}

impl Peer for SqlitePeer {
    fn run(&mut self, query: &Query, limit: Duration) -> Result<Answer, RunError> {
        let deadline = Instant::now() + limit;
        self.conn
            .progress_handler(10_000, Some(move || Instant::now() > deadline))
            .map_err(|e| RunError::Failed(e.to_string()))?;
        let result = (|| {
            let mut st = self.conn.prepare(&query.sqlite)?;
            let n = st.column_count();
            let mut rows = st.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let mut row = Vec::with_capacity(n);
                for i in 0..n {
                    row.push(cell(r.get_ref(i)?));
                }
                out.push(row);
            }
            Ok::<_, rusqlite::Error>(out)
        })();
        let _ = self.conn.progress_handler(0, None::<fn() -> bool>);
        match result {
            Ok(rows) => Ok(Answer { rows }),
            Err(_) if Instant::now() > deadline => Err(RunError::Timeout),
            Err(e) => Err(RunError::Failed(e.to_string())),
        }
    }
}
