//! Errors of the KV engine, split by who must act: the caller (bad input), the environment
//! (I/O, poisoned after a failed commit) or the file (corrupt or not ours).

use std::path::PathBuf;

use super::lmdb::LmdbError;
use crate::edn::Edn;
use crate::error::{self, text_field, Category, Field};

/// An error of the KV engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KvError {
    /// A key longer than LMDB accepts (`limits::MAX_KEY_BYTES`).
    #[error("key of {len} bytes is longer than the limit of {max} bytes (table \"{table}\")")]
    KeyTooLong {
        /// The table written.
        table: String,
        /// The key's length, in bytes.
        len: usize,
        /// The longest key accepted, in bytes.
        max: usize,
    },
    /// An empty key: LMDB rejects zero-length keys.
    #[error("empty key in table \"{table}\": keys must be at least one byte")]
    EmptyKey {
        /// The table written.
        table: String,
    },
    /// A value too large to store.
    #[error("value of {len} bytes is larger than the limit of {max} bytes (table \"{table}\")")]
    ValueTooLarge {
        /// The table written.
        table: String,
        /// The value's length, in bytes.
        len: usize,
        /// The largest value accepted, in bytes.
        max: usize,
    },
    /// A list (dupsort) value longer than LMDB accepts.
    #[error(
        "list value of {len} bytes is longer than the limit of {max} bytes (table \"{table}\")"
    )]
    ListValueTooLong {
        /// The table written.
        table: String,
        /// The list value's length, in bytes.
        len: usize,
        /// The longest list value accepted, in bytes (a list value is stored as an LMDB key).
        max: usize,
    },
    /// A value of another width than a fixed-width list table holds (`fixed_list_table`).
    #[error("list value of {len} bytes in table \"{table}\", whose values have {width} bytes")]
    ListValueWidth {
        /// The table written.
        table: String,
        /// The value's length, in bytes.
        len: usize,
        /// The width every value of the table has, in bytes.
        width: u8,
    },
    /// An insert found its key already present.
    #[error("key {} already exists in table \"{table}\"", bytes_text(key))]
    KeyExists {
        /// The table written.
        table: String,
        /// The key that was already present.
        key: Vec<u8>,
    },
    /// The table does not exist.
    #[error("no table named \"{name}\"")]
    NoSuchTable {
        /// The name asked for.
        name: String,
    },
    /// The table exists with another kind (plain versus list).
    #[error("table \"{name}\" is a {actual} table, not a {wanted} table")]
    WrongTableKind {
        /// The table's name.
        name: String,
        /// The kind the table has (`"plain"` or `"list"`).
        actual: &'static str,
        /// The kind the operation needs.
        wanted: &'static str,
    },
    /// A table name that is empty, too long, or reserved.
    #[error("invalid table name \"{name}\": {reason}")]
    InvalidTableName {
        /// The name refused.
        name: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// Too many tables.
    #[error("too many tables: the limit is {max}")]
    TooManyTables {
        /// The most tables an environment holds (`limits::MAX_TABLES`).
        max: u32,
    },
    /// A stored value did not have the shape its type needs (e.g. a typed get of a value that
    /// was written as another type).
    #[error("wrong type in table \"{table}\": expected {expected}, found {found}")]
    WrongType {
        /// The table read.
        table: String,
        /// The type the caller asked for.
        expected: &'static str,
        /// What the stored bytes are, described for the message.
        found: String,
    },
    /// A previous commit or fsync failed; no write is accepted after that, because LMDB's
    /// state on disk may no longer match what earlier callers were told.
    #[error("environment is poisoned by an earlier failed commit ({cause}); reopen it")]
    Poisoned {
        /// The failure that poisoned the environment.
        cause: String,
    },
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
    MapLimit {
        /// The map size reached, in bytes (0 when LMDB did not say).
        max: usize,
    },
    /// The map had to grow for this write, and a snapshot stayed open longer than the growth
    /// may wait (LMDB can resize its map only while no snapshot of the process is open). The
    /// write failed alone: nothing is poisoned; retry once the snapshot is closed.
    #[error(
        "the database file must grow for this write, but a snapshot opened {age_ms} ms ago is \
         still open ({open_snapshots} open in all); waited {waited_ms} ms. Close long-held \
         database values (Db) and retry"
    )]
    SnapshotBlocksGrowth {
        /// How long the oldest open snapshot has been open, in milliseconds.
        age_ms: u64,
        /// How many snapshots of the process were open.
        open_snapshots: u32,
        /// How long the write waited for them to close, in milliseconds.
        waited_ms: u64,
    },
    /// A commit failed (the whole batch is failed and the environment poisoned).
    #[error("commit failed: {cause}")]
    CommitFailed {
        /// What failed.
        cause: String,
    },
    /// The file is not an LMDB environment, or its pages are damaged.
    #[error("{path}: corrupt or not a database file ({detail})")]
    Corrupt {
        /// The data file.
        path: PathBuf,
        /// What was found wrong.
        detail: String,
    },
    /// The file is not an LMDB data file at all (missing, empty, too short, no LMDB magic).
    #[error("{path}: not a database file ({detail})")]
    NotADatabase {
        /// The file opened.
        path: PathBuf,
        /// Why it is not a database file.
        detail: String,
    },
    /// The file is an LMDB environment, but not one Datalith made.
    #[error("{path}: an LMDB file that Datalith did not create ({detail})")]
    Foreign {
        /// The data file.
        path: PathBuf,
        /// What shows that Datalith did not make it.
        detail: String,
    },
    /// The file was made by a newer, incompatible Datalith.
    #[error("{path}: format version {found} is not supported (this build reads {supported})")]
    UnsupportedFormat {
        /// The data file.
        path: PathBuf,
        /// The format version the file records.
        found: u32,
        /// The format version this build reads and writes.
        supported: u32,
    },
    /// The log holds records that only the layer that wrote them can replay (the Datalog
    /// store leaves its index writes out of records and rebuilds them from its transaction
    /// log), and this environment was opened without it.
    #[error("{path}: the log's records leave out writes that \"{name}\" rebuilds; open the directory as a Datalog database to recover it")]
    NeedsDerivation {
        /// The log file.
        path: PathBuf,
        /// The rule the records were written under.
        name: String,
    },
    /// Another process holds the database for writing and kept it past the busy timeout
    /// (`EnvOptions::busy_timeout`), as SQLite's `SQLITE_BUSY`.
    ///
    /// Plain numbers only: this enum is the error type of every read's callback, and a variant
    /// with a `String` here made the hottest read loops a third slower (Q `lookup-raw`, 0.058
    /// against 0.088 ms, 2026-12-01: the drop glue and moves of the larger error).
    #[error(
        "the database is open for writing by {}; waited {waited_ms} ms (busy timeout). Read it \
         from any process (read-only), or send writes through the process that holds it",
        holder_text(*holder)
    )]
    Busy {
        /// The process holding the database for writing (0 when unknown).
        holder: u32,
        /// How long the open waited, in milliseconds.
        waited_ms: u64,
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
        self.category().is_user_error()
    }

    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            KvError::KeyTooLong { .. }
            | KvError::EmptyKey { .. }
            | KvError::ValueTooLarge { .. }
            | KvError::ListValueTooLong { .. }
            | KvError::ListValueWidth { .. }
            | KvError::TooManyTables { .. } => error::LIMIT_EXCEEDED,
            KvError::KeyExists { .. } => error::KEY_EXISTS,
            KvError::NoSuchTable { .. } => error::NO_SUCH_TABLE,
            KvError::WrongTableKind { .. } | KvError::InvalidTableName { .. } => {
                error::INVALID_TABLE
            }
            KvError::WrongType { .. } => error::WRONG_VALUE_TYPE,
            KvError::Poisoned { .. } => error::POISONED,
            KvError::Closed => error::CLOSED,
            KvError::PendingWrites => error::PENDING_WRITES,
            KvError::MapLimit { .. } => error::DATABASE_FULL,
            KvError::SnapshotBlocksGrowth { .. } => error::SNAPSHOT_BLOCKS_GROWTH,
            KvError::CommitFailed { .. } => error::COMMIT_FAILED,
            KvError::Corrupt { .. } => error::CORRUPT,
            KvError::NotADatabase { .. } => error::NOT_A_DATABASE,
            KvError::Foreign { .. } => error::FOREIGN_FILE,
            KvError::UnsupportedFormat { .. } | KvError::NeedsDerivation { .. } => {
                error::UNSUPPORTED_FORMAT
            }
            KvError::Busy { .. } => error::DATABASE_BUSY,
            KvError::Io(e) => error::io_category(e),
            KvError::Lmdb(_) => error::STORAGE,
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        let n = |k: &'static str, x: usize| (k, Edn::Long(x as i64));
        match self {
            KvError::KeyTooLong { table, len, max }
            | KvError::ValueTooLarge { table, len, max }
            | KvError::ListValueTooLong { table, len, max } => vec![
                text_field("table", table),
                n("length", *len),
                n("limit", *max),
            ],
            KvError::ListValueWidth { table, len, width } => vec![
                text_field("table", table),
                n("length", *len),
                n("width", *width as usize),
            ],
            KvError::EmptyKey { table }
            | KvError::KeyExists { table, .. }
            | KvError::WrongType { table, .. } => vec![text_field("table", table)],
            KvError::NoSuchTable { name }
            | KvError::WrongTableKind { name, .. }
            | KvError::InvalidTableName { name, .. } => vec![text_field("table", name)],
            KvError::TooManyTables { max } => vec![n("limit", *max as usize)],
            KvError::Corrupt { path, .. }
            | KvError::Foreign { path, .. }
            | KvError::UnsupportedFormat { path, .. } => {
                vec![text_field("path", &path.display().to_string())]
            }
            KvError::NeedsDerivation { path, name } => vec![
                text_field("path", &path.display().to_string()),
                text_field("derivation", name),
            ],
            KvError::Busy { holder, waited_ms } => vec![
                n("pid", *holder as usize),
                n("waited-ms", *waited_ms as usize),
            ],
            _ => Vec::new(),
        }
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

/// The holder of a busy database, for a message.
fn holder_text(pid: u32) -> String {
    match pid {
        0 => "another process".to_string(),
        p => format!("process {p}"),
    }
}

/// A key's bytes for a message: its text when it is printable UTF-8, else hex.
fn bytes_text(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) if !s.chars().any(char::is_control) => format!("\"{s}\""),
        _ => key.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    }
}

/// Whether an LMDB error means the map is full (and the batch should be retried after growth).
pub(crate) fn is_map_full(e: &LmdbError) -> bool {
    e.is_map_full()
}
