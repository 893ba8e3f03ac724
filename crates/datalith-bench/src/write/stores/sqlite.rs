//! SQLite peer: `synchronous=FULL`, rollback journal (`DELETE`) or `WAL`; table
//! `(k INTEGER PRIMARY KEY, v TEXT)`; `INSERT OR REPLACE`; one transaction per call.

use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "sqlite";
const UPSERT: &str = "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)";

pub struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    pub fn open(dir: &Path, wal: bool) -> Result<Self, BenchError> {
        let conn =
            Connection::open(dir.join("bench.sqlite")).map_err(BenchError::store(STORE, "open"))?;
        let wanted = if wal { "wal" } else { "delete" };
        let mode: String = conn
            .query_row(&format!("PRAGMA journal_mode={wanted}"), [], |r| r.get(0))
            .map_err(BenchError::store(STORE, "journal_mode"))?;
        if !mode.eq_ignore_ascii_case(wanted) {
            return Err(BenchError::Store {
                store: STORE.into(),
                op: "journal_mode",
                message: format!("asked for {wanted}, got {mode}"),
            });
        }
        conn.execute_batch(
            "PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v TEXT);",
        )
        .map_err(BenchError::store(STORE, "setup"))?;
        Ok(Sqlite { conn })
    }

    fn write(&mut self, records: &[Record]) -> rusqlite::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(UPSERT)?;
            for r in records {
                st.execute(params![r.key as i64, r.value])?;
            }
        }
        tx.commit()
    }
}

impl Condition for Sqlite {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let result = self.write(&records);
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "insert"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        self.conn
            .prepare_cached("SELECT v FROM kv WHERE k = ?1")
            .and_then(|mut st| st.query_row([key as i64], |r| r.get(0)).optional())
            .map_err(BenchError::store(STORE, "select"))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM kv", [], |r| r.get(0))
            .map_err(BenchError::store(STORE, "count"))?;
        Ok(n as u64)
    }
}
