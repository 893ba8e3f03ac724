//! The store's tables in the KV environment, and its counters.

use crate::kv::{Environment, KvError, Table, TableKind, View};

/// Handles to every table the Datalog store uses.
#[derive(Debug, Clone)]
pub struct Tables {
    /// entity -> sorted `attr ++ value` (see `keys`).
    pub eav: Table,
    /// `attr ++ value` -> sorted entity ids.
    pub ave: Table,
    /// Full encodings of values too long to index inline.
    pub giants: Table,
    /// Counters and statistics (see `MetaKey`).
    pub meta: Table,
    /// tx entity id -> the transaction's datoms (`tx::log`); `None` when the log is not kept
    /// (or, read-only, a database made before it existed).
    pub tx_log: Option<Table>,
    /// entity -> its events, `attr ++ tx ++ added ++ value` (`store::history`); `None` in a
    /// database made before history was kept, opened read-only.
    pub history: Option<Table>,
    /// attribute -> entities that ever lost a value of it.
    pub history_attr: Option<Table>,
    /// attribute -> entities that held a value of it, for attributes without AVE entries
    /// (`store::value_index`); `None` read-only in a database made before it.
    pub attr_entities: Option<Table>,
    /// Which datoms have AVE entries, as the database recorded when it was made.
    pub value_index: super::ValueIndex,
    /// The full-text indexes of `:db/fulltext` attributes (`search::tables`, the attribute's
    /// id as the space); `None` read-only in a database made before them.
    pub search: Option<crate::search::SearchTables>,
    /// The largest `:db/txInstant` of the state after the last committed transaction, shared
    /// by every handle of the store (see [`LastInstant`]).
    pub last_instant: std::sync::Arc<LastInstant>,
}

/// The largest `:db/txInstant` of one state, named by that state's next transaction id: a
/// transaction clocked `AtLeast` needs it, and reading it from the index (a backward seek
/// over the instants, through the log's writes LMDB does not hold yet) cost more than half
/// of such a transaction. A transaction that knows it afterwards records it for the state it
/// leaves (`tx::request`); one that does not, and every writer of datoms that bypasses
/// transactions (bulk load, the built-ins' bootstrap), forgets it. A state is named by its
/// next transaction id, so a value recorded by a transaction whose batch then failed names
/// a state that never came to be, and a later state with another next id ignores it.
#[derive(Debug, Default)]
pub struct LastInstant(std::sync::Mutex<Option<(u64, i64)>>);

impl LastInstant {
    /// The largest instant of the state whose next transaction id is `next_tx`, if known.
    pub fn of_state(&self, next_tx: u64) -> Option<i64> {
        match *self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((t, ms)) if t == next_tx => Some(ms),
            _ => None,
        }
    }

    /// Records `instant` as the largest of the state whose next transaction id is
    /// `next_tx` (`None`: unknown).
    pub fn record(&self, next_tx: u64, instant: Option<i64>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = instant.map(|ms| (next_tx, ms));
    }

    /// Forgets it (datoms were written outside a transaction).
    pub fn forget(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl Tables {
    /// Opens (creating) the store's tables.
    pub fn open(env: &Environment) -> Result<Tables, KvError> {
        // A new database's tables in one durable step (`Environment::create_tables`).
        let mut specs = STORE_TABLES.to_vec();
        specs.extend(crate::search::SearchTables::NAMES.map(|n| (n, TableKind::Plain, None)));
        env.create_tables(&specs)?;
        let [eav, ave, giants, meta, tx_log, history, history_attr, attr_entities] = STORE_TABLES
            .map(|spec| {
                let (name, kind, fixed) = spec;
                match fixed {
                    Some(width) => env.fixed_list_table(name, width),
                    None => env.table(name, kind),
                }
            });
        let meta = meta?;
        let stored = env
            .read()?
            .view()
            .get(&meta, super::value_index::META_KEY)?
            .map(<[u8]>::to_vec);
        let value_index =
            super::ValueIndex::from_meta(stored.as_deref()).ok_or_else(|| KvError::WrongType {
                table: "store_meta".into(),
                expected: "`declared` or nothing under `value_index`",
                found: format!("{} bytes", stored.as_ref().map_or(0, Vec::len)),
            })?;
        Ok(Tables {
            eav: eav?,
            ave: ave?,
            giants: giants?,
            meta,
            // Transactions write the log and never read it: the committer need not hold its
            // unapplied entries in its overlay (`kv::Table::unread_by_writers`).
            tx_log: optional(tx_log)?.map(Table::unread_by_writers),
            history: optional(history)?,
            history_attr: optional(history_attr)?,
            attr_entities: optional(attr_entities)?,
            value_index,
            search: crate::search::SearchTables::open(env)?,
            last_instant: Default::default(),
        })
    }
}

/// The store's tables: name, kind, fixed value width. Every AVE value (and every
/// `history_attr` and `attr_entities` value) is an 8-byte entity id: stored fixed-width, read a page at a time.
const STORE_TABLES: [(&str, TableKind, Option<u8>); 8] = [
    ("eav", TableKind::List, None),
    ("ave", TableKind::List, Some(8)),
    ("giants", TableKind::Plain, None),
    ("store_meta", TableKind::Plain, None),
    ("tx_log", TableKind::Plain, None),
    ("history", TableKind::List, None),
    ("history_attr", TableKind::List, Some(8)),
    ("attr_entities", TableKind::List, Some(8)),
];

/// A table a read-only open of an older database may lack.
fn optional(t: Result<Table, KvError>) -> Result<Option<Table>, KvError> {
    match t {
        Ok(t) => Ok(Some(t)),
        Err(KvError::NoSuchTable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Keys of the store's meta table.
pub mod meta_key {
    /// Next user entity id (u64).
    pub const NEXT_ENTITY: &[u8] = b"next_entity";
    /// Next transaction entity id (u64).
    pub const NEXT_TX: &[u8] = b"next_tx";
    /// Next attribute id (u32 stored as u64).
    pub const NEXT_ATTR: &[u8] = b"next_attr";
    /// Present once datoms were written around the transaction log (a bulk load): the log no
    /// longer replays to the indexes (`check` then only decodes it).
    pub const TX_LOG_GAP: &[u8] = b"tx_log_gap";
    /// Schema version (u64), bumped by every schema change.
    pub const SCHEMA_VERSION: &[u8] = b"schema_version";
    /// Prefix of per-attribute statistics: `stats/` ++ attr id (u32) -> [`super::AttrStats`].
    pub const STATS_PREFIX: &[u8] = b"stats/";
}

/// Reads a u64 counter; absent means `default`. Bytes from disk are checked.
pub fn read_counter(
    view: View<'_>,
    meta: &Table,
    key: &[u8],
    default: u64,
) -> Result<u64, KvError> {
    match view.get(meta, key)? {
        None => Ok(default),
        Some(b) => match <[u8; 8]>::try_from(b) {
            Ok(a) => Ok(u64::from_be_bytes(a)),
            Err(_) => Err(KvError::WrongType {
                table: "store_meta".into(),
                expected: "an 8-byte counter",
                found: format!(
                    "{} bytes under {}",
                    b.len(),
                    crate::edn::Edn::String(String::from_utf8_lossy(key).into_owned())
                ),
            }),
        },
    }
}

/// Statistics of one attribute, kept current at commit for the query planner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttrStats {
    /// Datoms of the attribute.
    pub datoms: u64,
    /// Distinct values of the attribute.
    pub distinct: u64,
}

impl AttrStats {
    /// 16 bytes: datoms then distinct, big-endian.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.datoms.to_be_bytes());
        b[8..].copy_from_slice(&self.distinct.to_be_bytes());
        b
    }

    /// Parses what `to_bytes` wrote; `None` for anything else.
    pub fn from_bytes(b: &[u8]) -> Option<AttrStats> {
        let b: &[u8; 16] = b.try_into().ok()?;
        Some(AttrStats {
            datoms: u64::from_be_bytes(b[..8].try_into().ok()?),
            distinct: u64::from_be_bytes(b[8..].try_into().ok()?),
        })
    }
}

/// The meta key of attribute `a`'s statistics.
pub fn stats_key(a: u32) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..6].copy_from_slice(meta_key::STATS_PREFIX);
    k[6..].copy_from_slice(&a.to_be_bytes());
    k
}
