//! Named tables (LMDB sub-databases): plain (one value per key) or list (sorted duplicate
//! values per key, LMDB's `MDB_DUPSORT`).

use std::path::Path;
use std::sync::Arc;

use super::error::KvError;

/// The raw LMDB handle: a table number, valid for the environment's lifetime (tables are
/// never dropped), used only with transactions of the environment that opened it.
pub(crate) type RawDb = super::lmdb::Dbi;

/// Whether a table holds one value per key or a sorted list of values per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// One value per key; values can be large (overflow pages).
    Plain,
    /// A sorted set of values per key (LMDB dupsort); each value at most `MAX_KEY_BYTES`.
    List,
}

impl TableKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TableKind::Plain => "plain",
            TableKind::List => "list",
        }
    }
}

/// A handle to a named table of an environment. Cheap to clone.
#[derive(Clone)]
pub struct Table {
    pub(crate) name: Arc<str>,
    pub(crate) kind: TableKind,
    pub(crate) db: RawDb,
    /// List tables whose values all have this many bytes (stored `MDB_DUPFIXED`: whole pages
    /// of values read at once).
    pub(crate) fixed: Option<u8>,
    /// Unique in the process (handles of one table share it): how an overlay names tables.
    pub(crate) id: u32,
    /// No write request reads this table (an append-only log): the committer holds back its
    /// unapplied writes as it does list-table writes (`committer::later::Working`). Set on
    /// the handle that stages the writes; a read that meets one still gets it (the read
    /// fails and the request runs again with the writes added), so it only saves work.
    pub(crate) unread_by_writers: bool,
}

impl Table {
    /// A handle that opened nothing (its `db` is `id`), for tests of what only reads a
    /// table's name, id and kind.
    #[cfg(test)]
    pub(crate) fn for_test(name: &str, id: u32, kind: TableKind) -> Table {
        Table {
            name: name.into(),
            kind,
            db: super::lmdb::Dbi(id),
            fixed: None,
            id,
            unread_by_writers: false,
        }
    }
}

/// A fresh table identity.
pub(crate) fn next_table_id() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Table {
    /// A handle to the LMDB table `db`, with a fresh identity.
    pub(crate) fn opened(name: &str, kind: TableKind, db: RawDb, fixed: Option<u8>) -> Table {
        Table {
            name: name.into(),
            kind,
            db,
            fixed,
            id: next_table_id(),
            unread_by_writers: false,
        }
    }

    /// This handle, marked as one whose table no write request reads (see the field).
    pub(crate) fn unread_by_writers(mut self) -> Table {
        self.unread_by_writers = true;
        self
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Plain or list.
    pub fn kind(&self) -> TableKind {
        self.kind
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({:?}, {})", self.name, self.kind.name())
    }
}

/// The meta table's format magic is kept under this key (the map's address is also found
/// through it: `core::map::map_base`).
pub(crate) const META_MAGIC_KEY: &[u8] = b"magic";

/// Catalog entries in the meta table: `table/<name>` -> one kind byte. Here, below both, so
/// that the environment (which opens tables through it) and the log's replay (which opens the
/// tables its records name) read it alike.
pub(crate) const CATALOG_PREFIX: &[u8] = b"table/";

pub(crate) fn catalog_key(name: &str) -> Vec<u8> {
    let mut k = CATALOG_PREFIX.to_vec();
    k.extend_from_slice(name.as_bytes());
    k
}

/// A catalog entry: `[0]` plain, `[1]` list, `[2, width]` list of fixed-width values.
pub(crate) fn decode_kind(v: &[u8], path: &Path) -> Result<(TableKind, Option<u8>), KvError> {
    match v {
        [0] => Ok((TableKind::Plain, None)),
        [1] => Ok((TableKind::List, None)),
        [2, w] if *w > 0 => Ok((TableKind::List, Some(*w))),
        _ => Err(KvError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("table catalog entry {v:?} is not a table kind"),
        }),
    }
}

pub(crate) fn encode_kind(kind: TableKind, fixed: Option<u8>) -> Vec<u8> {
    match (kind, fixed) {
        (TableKind::Plain, _) => vec![0],
        (TableKind::List, None) => vec![1],
        (TableKind::List, Some(w)) => vec![2, w],
    }
}
