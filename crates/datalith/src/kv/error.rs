//! Errors of the KV engine, split by who must act: the caller (bad input), the environment
//! (I/O, poisoned after a failed commit) or the file (corrupt or not ours).

use std::path::PathBuf;

use super::lmdb::LmdbError;

/// An error of the KV engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KvError {
    /// A key longer than LMDB accepts (`limits::MAX_KEY_BYTES`).
    #[error("key of {len} bytes is longer than the limit of {max} bytes (table {table:?})")]
    KeyTooLong {
        table: String,
        len: usize,
        max: usize,
    },
    /// An empty key: LMDB rejects zero-length keys.
    #[error("empty key in table {table:?}: keys must be at least one byte")]
    EmptyKey { table: String },
    /// A value too large to store.
    #[error("value of {len} bytes is larger than the limit of {max} bytes (table {table:?})")]
    ValueTooLarge {
        table: String,
        len: usize,
        max: usize,
    },
    /// A list (dupsort) value longer than LMDB accepts.
    #[error("list value of {len} bytes is longer than the limit of {max} bytes (table {table:?})")]
    ListValueTooLong {
        table: String,
        len: usize,
        max: usize,
    },
    /// A value of another width than a fixed-width list table holds (`fixed_list_table`).
    #[error("list value of {len} bytes in table {table:?}, whose values have {width} bytes")]
    ListValueWidth {
        table: String,
        len: usize,
        width: u8,
    },
    /// An insert found its key already present.
    #[error("key {key:?} already exists in table {table:?}")]
    KeyExists { table: String, key: Vec<u8> },
    /// The table does not exist.
    #[error("no table named {name:?}")]
    NoSuchTable { name: String },
    /// The table exists with another kind (plain versus list).
    #[error("table {name:?} is a {actual} table, not a {wanted} table")]
    WrongTableKind {
        name: String,
        actual: &'static str,
        wanted: &'static str,
    },
    /// A table name that is empty, too long, or reserved.
    #[error("invalid table name {name:?}: {reason}")]
    InvalidTableName { name: String, reason: &'static str },
    /// Too many tables.
    #[error("too many tables: the limit is {max}")]
    TooManyTables { max: u32 },
    /// A stored value did not have the shape its type needs (e.g. a typed get of a value that
    /// was written as another type).
    #[error("wrong type in table {table:?}: expected {expected}, found {found}")]
    WrongType {
        table: String,
        expected: &'static str,
        found: String,
    },
    /// A previous commit or fsync failed; no write is accepted after that, because LMDB's
    /// state on disk may no longer match what earlier callers were told.
    #[error("environment is poisoned by an earlier failed commit ({cause}); reopen it")]
    Poisoned { cause: String },
    /// The environment has been closed.
    #[error("environment is closed")]
    Closed,
    /// Inside the committer only: a read of a request's `prepare` may have missed writes of
    /// earlier requests of its batch that are staged but not yet applied. The committer applies
    /// them and runs the request again (see `kv::pending`); no caller ever receives it.
    #[error("read met writes of the batch not yet applied (internal; the request is rerun)")]
    PendingWrites,
    /// The map cannot grow any further.
    #[error("database is full: the map reached {max} bytes")]
    MapLimit { max: usize },
    /// The map had to grow for this write, and a snapshot stayed open longer than the growth
    /// may wait (LMDB can resize its map only while no snapshot of the process is open). The
    /// write failed alone: nothing is poisoned; retry once the snapshot is closed.
    #[error(
        "the database file must grow for this write, but a snapshot opened {age_ms} ms ago is \
         still open ({open_snapshots} open in all); waited {waited_ms} ms. Close long-held \
         database values (Db) and retry"
    )]
    SnapshotBlocksGrowth {
        age_ms: u64,
        open_snapshots: u32,
        waited_ms: u64,
    },
    /// A commit failed (the whole batch is failed and the environment poisoned).
    #[error("commit failed: {cause}")]
    CommitFailed { cause: String },
    /// The file is not an LMDB environment, or its pages are damaged.
    #[error("{path}: corrupt or not a database file ({detail})")]
    Corrupt { path: PathBuf, detail: String },
    /// The file is an LMDB environment, but not one Datalith made.
    #[error("{path}: an LMDB file that Datalith did not create ({detail})")]
    Foreign { path: PathBuf, detail: String },
    /// The file was made by a newer, incompatible Datalith.
    #[error("{path}: format version {found} is not supported (this build reads {supported})")]
    UnsupportedFormat {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// An I/O error from the operating system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// Any other LMDB error, with LMDB's own message.
    #[error("LMDB error: {0}")]
    Lmdb(String),
}

impl KvError {
    /// Whether the error is the caller's fault (bad input), as opposed to the environment's.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            KvError::KeyTooLong { .. }
                | KvError::KeyExists { .. }
                | KvError::EmptyKey { .. }
                | KvError::ValueTooLarge { .. }
                | KvError::ListValueTooLong { .. }
                | KvError::ListValueWidth { .. }
                | KvError::NoSuchTable { .. }
                | KvError::WrongTableKind { .. }
                | KvError::InvalidTableName { .. }
                | KvError::TooManyTables { .. }
                | KvError::WrongType { .. }
        )
    }
}

impl From<LmdbError> for KvError {
    fn from(e: LmdbError) -> Self {
        if let Some(io) = e.os_error() {
            return KvError::Io(io);
        }
        match e.code {
            LmdbError::MAP_FULL => KvError::MapLimit { max: 0 },
            LmdbError::DBS_FULL => KvError::TooManyTables {
                max: crate::limits::MAX_TABLES,
            },
            _ => KvError::Lmdb(e.to_string()),
        }
    }
}

/// Whether an LMDB error means the map is full (and the batch should be retried after growth).
pub(crate) fn is_map_full(e: &LmdbError) -> bool {
    e.is_map_full()
}
