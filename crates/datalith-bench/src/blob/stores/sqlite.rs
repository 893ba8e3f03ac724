//! SQLite as the seed ran it: WAL, `synchronous=FULL`, `(k INTEGER PRIMARY KEY, v BLOB)`,
//! `INSERT OR REPLACE`, one transaction per 500 ms window (its commit fsyncs the WAL).
//! Everything else (page size, cache size, auto-checkpoint every 1000 pages) is SQLite's
//! default, as in the seed.

use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

use super::{fingerprint, SyncEngine};
use crate::common::BenchError;

const NAME: &str = "sqlite";
const INSERT: &str = "INSERT OR REPLACE INTO blobs (k, v) VALUES (?1, ?2)";

/// One SQLite database file, a transaction open between flushes (a [`super::Synchronous`]
/// store: its counts and flush latencies are kept there).
pub struct Sqlite {
    conn: Connection,
    in_txn: bool,
}

impl Sqlite {
    /// Creates `dir/blobs.sqlite`.
    pub fn open(dir: &Path) -> Result<Sqlite, BenchError> {
        let conn =
            Connection::open(dir.join("blobs.sqlite")).map_err(BenchError::store(NAME, "open"))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(BenchError::store(NAME, "journal_mode=WAL"))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(BenchError::store(NAME, "synchronous=FULL"))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS blobs (k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
        )
        .map_err(BenchError::store(NAME, "create table"))?;
        Ok(Sqlite {
            conn,
            in_txn: false,
        })
    }
}

impl SyncEngine for Sqlite {
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError> {
        if !self.in_txn {
            self.conn
                .execute_batch("BEGIN")
                .map_err(BenchError::store(NAME, "begin"))?;
            self.in_txn = true;
        }
        self.conn
            .prepare_cached(INSERT)
            .and_then(|mut st| st.execute(params![key, blob]))
            .map_err(BenchError::store(NAME, "insert"))?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BenchError> {
        if !self.in_txn {
            return Ok(());
        }
        self.conn
            .execute_batch("COMMIT")
            .map_err(BenchError::store(NAME, "commit"))?;
        self.in_txn = false;
        Ok(())
    }

    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError> {
        self.conn
            .query_row("SELECT v FROM blobs WHERE k = ?1", params![key], |row| {
                let v: Vec<u8> = row.get(0)?;
                Ok((v.len(), fingerprint(&v)))
            })
            .optional()
            .map_err(BenchError::store(NAME, "select"))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        self.conn
            .query_row("SELECT count(*) FROM blobs", [], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(BenchError::store(NAME, "count"))
    }
}
