//! Raw LMDB through heed, no group commit: one write transaction (one commit, one fsync unless
//! `MDB_NOSYNC`) per call. The floor Datalith's committer is built on.

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions};
use std::path::Path;

use super::key_bytes;
use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "lmdb-raw";
/// Address space only (LMDB does not allocate it without `MDB_WRITEMAP`): far above what a
/// million 44-byte records need, so the map never has to grow mid-run.
const MAP_BYTES: usize = 16 << 30;

pub struct LmdbRaw {
    // Leaked: the child process runs one condition and exits, and heed's database handle
    // borrows the environment. LMDB needs no close for committed data to be on disk (or, for
    // `nosync`, in the page cache, which outlives the process).
    env: &'static Env,
    db: Database<'static, Bytes, Bytes>,
}

impl LmdbRaw {
    pub fn open(dir: &Path, nosync: bool) -> Result<Self, BenchError> {
        let flags = if nosync {
            EnvFlags::NO_SYNC
        } else {
            EnvFlags::empty()
        };
        let mut options = EnvOpenOptions::new();
        options.map_size(MAP_BYTES).max_dbs(1);
        // SAFETY: only documented LMDB flags; the directory is this run's own and nothing
        // else modifies the file while it is mapped.
        let env = unsafe {
            options.flags(flags);
            options.open(dir)
        }
        .map_err(BenchError::store(STORE, "open"))?;
        let env: &'static Env = Box::leak(Box::new(env));
        let wtxn = env.write_txn().map_err(BenchError::store(STORE, "txn"))?;
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("bench"))?;
                Ok(CommitOrAbort::<_, ()>::Commit(db))
            })
            .map_err(BenchError::store(STORE, "create db"))?
            .commit()
            .ok_or_else(|| BenchError::Store {
                store: STORE.into(),
                op: "create db",
                message: "aborted".into(),
            })?;
        Ok(LmdbRaw { env, db })
    }

    fn write(&self, records: &[Record]) -> heed::Result<()> {
        let mut wtxn = self.env.write_txn()?;
        for r in records {
            self.db
                .put(&mut wtxn, &key_bytes(r.key), r.value.as_bytes())?;
        }
        wtxn.commit()
    }
}

impl Condition for LmdbRaw {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let result = self.write(&records);
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "put"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let rtxn = self
            .env
            .read_txn()
            .map_err(BenchError::store(STORE, "txn"))?;
        let v = self
            .db
            .get(&rtxn, &key_bytes(key))
            .map_err(BenchError::store(STORE, "get"))?;
        Ok(v.map(|v| String::from_utf8_lossy(v).into_owned()))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let rtxn = self
            .env
            .read_txn()
            .map_err(BenchError::store(STORE, "txn"))?;
        self.db.len(&rtxn).map_err(BenchError::store(STORE, "len"))
    }
}
