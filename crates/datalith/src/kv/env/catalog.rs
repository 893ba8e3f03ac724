//! The table catalog: Datalith's own meta table (format magic and version, and
//! `table/<name>` -> kind entries), and opening or creating user tables through it.

use std::path::Path;

use super::open_error;
use super::Environment;
use crate::kv::core::EnvCore;
use crate::kv::error::KvError;
use crate::kv::lmdb::{self, Dbi, LmdbError};
use crate::kv::table::{
    catalog_key, decode_kind, encode_kind, Table, TableKind, CATALOG_PREFIX, META_MAGIC_KEY,
};
use crate::limits;

/// Name of the table holding Datalith's own metadata (format magic and version).
pub(super) const META_TABLE: &str = "__datalith_meta";
pub(super) const META_MAGIC: &[u8] = b"datalith";
pub(super) const META_VERSION_KEY: &[u8] = b"format_version";
/// On-disk format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

impl Environment {
    /// The table `name`, created (durably) if it does not exist.
    pub fn table(&self, name: &str, kind: TableKind) -> Result<Table, KvError> {
        self.table_with(name, kind, None)
    }

    /// The list table `name` whose values all have exactly `width` bytes, created (durably) if
    /// it does not exist. Such a table is stored `MDB_DUPFIXED`: reads of many values get
    /// whole pages of them at once ([`crate::kv::View::list_blocks`]). A list table of the same
    /// name made without the width (by an older build) is returned as it is (reads then go
    /// value by value). Writing a value of another width to it is an LMDB error: only
    /// Datalith's own tables (the AVE index: 8-byte entity ids) use this.
    pub fn fixed_list_table(&self, name: &str, width: u8) -> Result<Table, KvError> {
        self.table_with(name, TableKind::List, Some(width))
    }

    /// Creates every table of `specs` (name, kind, fixed width) that does not exist, in one
    /// transaction made durable once, and opens them all. A new database's store makes a dozen
    /// tables: one by one, each creation was a checkpoint of its own (three syncs), a third of
    /// the time to create a database and bulk-load 100,000 datoms into it.
    pub(crate) fn create_tables(
        &self,
        specs: &[(&str, TableKind, Option<u8>)],
    ) -> Result<(), KvError> {
        let core = &self.shared().core;
        if core.read_only {
            return Ok(());
        }
        let mut tables = self.inner.tables.write().unwrap_or_else(|p| p.into_inner());
        let missing: Vec<_> = specs
            .iter()
            .filter(|(name, _, _)| !tables.contains_key(*name))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        for (name, _, _) in &missing {
            validate_table_name(name)?;
        }
        let ticket = core.gate.enter(core.used_pages());
        let opened = (|| {
            let mut wtxn = core.env.write_txn()?;
            let mut opened = Vec::with_capacity(missing.len());
            let mut created = false;
            for (name, kind, fixed) in &missing {
                let (table, new) = open_or_create_in(core, &mut wtxn, name, *kind, *fixed)?;
                created |= new;
                opened.push(table);
            }
            commit(core, wtxn, created)?;
            Ok::<_, KvError>(opened)
        })();
        core.gate.leave(ticket);
        for table in opened? {
            self.register(&mut tables, table);
        }
        Ok(())
    }

    fn register(&self, tables: &mut std::collections::HashMap<String, Table>, table: Table) {
        let core = &self.shared().core;
        if let Some(wal) = &core.wal {
            wal.name_table(table.id, table.name.clone());
        }
        if let Some(tail) = &core.tail {
            tail.name_table(&table);
        }
        tables.insert(table.name.to_string(), table);
    }

    fn table_with(&self, name: &str, kind: TableKind, fixed: Option<u8>) -> Result<Table, KvError> {
        validate_table_name(name)?;
        if let Some(t) = self
            .inner
            .tables
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            return check_kind(t, kind);
        }
        let mut tables = self.inner.tables.write().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.get(name) {
            return check_kind(t, kind);
        }
        let core = &self.shared().core;
        // A write transaction of our own: LMDB's writer lock orders it with the committer's.
        // Holding a reader slot keeps the committer from resizing the map meanwhile.
        let ticket = core.gate.enter(core.used_pages());
        let result = match core.read_only {
            true => open_existing(core, name, kind),
            false => open_or_create(core, name, kind, fixed),
        };
        core.gate.leave(ticket);
        let table = result?;
        self.register(&mut tables, table.clone());
        Ok(table)
    }

    /// Names and kinds of every user table.
    pub fn tables(&self) -> Result<Vec<(String, TableKind)>, KvError> {
        let core = &self.shared().core;
        let txn = self.read()?;
        let view = txn.view();
        let meta = meta_table(core);
        let mut out = Vec::new();
        for entry in view.prefix(&meta, CATALOG_PREFIX, crate::kv::view::Direction::Forward)? {
            let (k, v) = entry?;
            let name = String::from_utf8_lossy(&k[CATALOG_PREFIX.len()..]).into_owned();
            out.push((name, decode_kind(v, &core.path)?.0));
        }
        Ok(out)
    }
}

/// The meta table as a [`Table`] (opened once, with the environment).
pub(super) fn meta_table(core: &EnvCore) -> Table {
    Table::opened(META_TABLE, TableKind::Plain, core.meta, None)
}

/// Opens table `name` (creating it and its catalog entry if missing) in a write transaction
/// of its own. Callers hold the environment's table map lock: LMDB wants table opens from one
/// transaction at a time.
fn open_or_create(
    core: &EnvCore,
    name: &str,
    kind: TableKind,
    fixed: Option<u8>,
) -> Result<Table, KvError> {
    let mut wtxn = core.env.write_txn()?;
    let (table, created) = open_or_create_in(core, &mut wtxn, name, kind, fixed)?;
    commit(core, wtxn, created)?;
    Ok(table)
}

/// Commits a transaction that opened tables: durably at once (a checkpoint) when it created
/// one; one that only opened existing tables wrote nothing.
fn commit(core: &EnvCore, wtxn: lmdb::RwTxn, created: bool) -> Result<(), KvError> {
    match &core.wal {
        Some(wal) if created => wal.commit_outside_committer(&core.env, wtxn),
        _ => Ok(wtxn.commit()?),
    }
}

/// [`open_or_create`] inside `wtxn`, not committed; whether it created the table.
fn open_or_create_in(
    core: &EnvCore,
    wtxn: &mut lmdb::RwTxn,
    name: &str,
    kind: TableKind,
    fixed: Option<u8>,
) -> Result<(Table, bool), KvError> {
    let key = catalog_key(name);
    let existing = match wtxn.get(core.meta, &key)? {
        Some(v) => Some(decode_kind(v, &core.path)?),
        None => None,
    };
    if let Some((actual, _)) = existing {
        // On an error, dropping the transaction aborts it.
        expect_kind(name, actual, kind)?;
    }
    // An existing table keeps the layout it was made with.
    let fixed = match existing {
        Some((_, f)) => f,
        None if kind == TableKind::List => fixed.filter(|w| *w > 0),
        None => None,
    };
    let db = match wtxn.open_dbi(name, true, kind == TableKind::List, fixed.is_some()) {
        Ok(Some(db)) => db,
        Ok(None) => {
            return Err(KvError::Lmdb(format!(
                "table {name} was neither found nor created"
            )))
        }
        Err(e) if e.code == LmdbError::DBS_FULL => {
            return Err(KvError::TooManyTables {
                max: limits::MAX_TABLES,
            })
        }
        Err(e) => return Err(e.into()),
    };
    if existing.is_none() {
        wtxn.put(
            core.meta,
            &key,
            &encode_kind(kind, fixed),
            lmdb::PutFlags::NONE,
        )?;
    }
    Ok((Table::opened(name, kind, db, fixed), existing.is_none()))
}

/// Opens the existing table `name` in a read transaction of its own (read-only environments).
fn open_existing(core: &EnvCore, name: &str, kind: TableKind) -> Result<Table, KvError> {
    let rtxn = core.env.read_txn()?;
    let (actual, fixed) = match rtxn.get(core.meta, &catalog_key(name))? {
        Some(v) => decode_kind(v, &core.path)?,
        None => {
            return Err(KvError::NoSuchTable {
                name: name.to_string(),
            })
        }
    };
    expect_kind(name, actual, kind)?;
    let db = rtxn
        .open_dbi(name, false, kind == TableKind::List, fixed.is_some())?
        .ok_or_else(|| KvError::NoSuchTable {
            name: name.to_string(),
        })?;
    // Committing makes the handle global.
    rtxn.commit()?;
    Ok(Table::opened(name, kind, db, fixed))
}

fn check_kind(t: &Table, kind: TableKind) -> Result<Table, KvError> {
    expect_kind(&t.name, t.kind, kind)?;
    Ok(t.clone())
}

/// Table `name` is of kind `actual`; the caller asked for `wanted`.
fn expect_kind(name: &str, actual: TableKind, wanted: TableKind) -> Result<(), KvError> {
    if actual != wanted {
        return Err(KvError::WrongTableKind {
            name: name.to_string(),
            actual: actual.name(),
            wanted: wanted.name(),
        });
    }
    Ok(())
}

fn validate_table_name(name: &str) -> Result<(), KvError> {
    let reason = if name.is_empty() {
        Some("empty")
    } else if name.len() > limits::MAX_TABLE_NAME_BYTES {
        Some("longer than 255 bytes")
    } else if name.starts_with("__datalith") {
        Some("names starting with __datalith are reserved")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(KvError::InvalidTableName {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A new environment gets our magic and format version; an existing one must have them.
/// Returns the meta table's handle (usable by every transaction from now on).
pub(super) fn check_or_init_meta(
    env: &lmdb::Env,
    path: &Path,
    read_only: bool,
) -> Result<Dbi, KvError> {
    let corrupt = |detail: String| KvError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    let rtxn = env.read_txn().map_err(|e| open_error(path, e))?;
    let meta = match rtxn.open_dbi(META_TABLE, false, false, false) {
        Ok(db) => db,
        // The main database holds a key named like our table that is not a table.
        Err(e) if e.code == LmdbError::INCOMPATIBLE => {
            return Err(KvError::Foreign {
                path: path.to_path_buf(),
                detail: format!("{META_TABLE} is not a table"),
            })
        }
        Err(e) => return Err(open_error(path, e)),
    };
    match meta {
        Some(db) => {
            let magic = rtxn
                .get(db, META_MAGIC_KEY)
                .map_err(|e| corrupt(e.to_string()))?;
            if magic != Some(META_MAGIC) {
                return Err(KvError::Foreign {
                    path: path.to_path_buf(),
                    detail: "bad magic".into(),
                });
            }
            let version = rtxn
                .get(db, META_VERSION_KEY)
                .map_err(|e| corrupt(e.to_string()))?;
            let version = version
                .and_then(|v| <[u8; 4]>::try_from(v).ok())
                .map(u32::from_be_bytes)
                .ok_or_else(|| corrupt("format version missing or malformed".into()))?;
            if version != FORMAT_VERSION {
                return Err(KvError::UnsupportedFormat {
                    path: path.to_path_buf(),
                    found: version,
                    supported: FORMAT_VERSION,
                });
            }
            // Committing makes the handle global.
            rtxn.commit()?;
            Ok(db)
        }
        None => {
            drop(rtxn);
            // Only an empty environment may be claimed; anything else belongs to someone else.
            let main_entries = env.main_entries()?;
            if main_entries > 0 || read_only {
                return Err(KvError::Foreign {
                    path: path.to_path_buf(),
                    detail: format!("{main_entries} entries but no {META_TABLE} table"),
                });
            }
            let mut wtxn = env.write_txn()?;
            let db = wtxn
                .open_dbi(META_TABLE, true, false, false)?
                .ok_or_else(|| corrupt(format!("{META_TABLE} could not be created")))?;
            wtxn.put(db, META_MAGIC_KEY, META_MAGIC, lmdb::PutFlags::NONE)?;
            wtxn.put(
                db,
                META_VERSION_KEY,
                &FORMAT_VERSION.to_be_bytes(),
                lmdb::PutFlags::NONE,
            )?;
            wtxn.commit()?;
            Ok(db)
        }
    }
}
