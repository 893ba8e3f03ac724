//! Recovery after a crash or a power cut, in two steps: before LMDB opens the data file, its
//! meta pages are rolled back to the checkpoint's copy (dropping every unsynced LMDB commit as
//! a whole: the page-reuse guard kept the checkpointed tree intact); after it opens, the log
//! records after the checkpoint are applied in order, each exactly once (by `log_seq`).

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::super::env::{catalog_key, decode_kind};
use super::super::error::KvError;
use super::super::file::layout::Meta;
use super::super::lmdb::{Dbi, Env, LmdbError, PutFlags, RwTxn};
use super::super::stage::Stage;
use super::super::table::{next_table_id, Table, TableKind};
use super::super::tally;
use super::body::{self, LoggedOpKind};
use super::derive::Derivation;
use super::file::LogFile;
use super::frame::Kind;
use super::slot::Checkpoint;
use super::LOG_SEQ_KEY;

/// Overwrites the data file's meta pages with the checkpoint's when they differ. A data file
/// whose meta pages are older than the checkpoint does not belong to this log: refused.
pub(crate) fn restore_meta_pages(data: &Path, c: &Checkpoint) -> Result<(), KvError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(data)?;
    let mut current = vec![0; c.meta.len()];
    let readable = file.read_exact_at(&mut current, 0).is_ok();
    if readable && current == c.meta {
        return Ok(());
    }
    let txnid_of = |pages: &[u8]| {
        let half = pages.len() / 2;
        [&pages[..half], &pages[half..]]
            .into_iter()
            .filter_map(Meta::parse)
            .map(|m| m.txnid)
            .max()
    };
    if let (true, Some(now)) = (readable, txnid_of(&current)) {
        if now < c.txnid {
            return Err(KvError::Corrupt {
                path: data.to_path_buf(),
                detail: format!(
                    "the data file's last commit ({now}) is older than its log's checkpoint ({}): the data file was replaced; move {} away to open it without the log",
                    c.txnid,
                    super::LOG_FILE
                ),
            });
        }
    }
    file.write_all_at(&c.meta, 0)?;
    file.sync_data()?;
    Ok(())
}

/// The last log sequence number the LMDB state holds (0 for none yet).
pub(crate) fn applied_seq(env: &Env, meta: Dbi) -> Result<u64, KvError> {
    let txn = env.read_txn()?;
    let seq = txn
        .get(meta, LOG_SEQ_KEY)?
        .and_then(|v| <[u8; 8]>::try_from(v).ok())
        .map_or(0, u64::from_be_bytes);
    Ok(seq)
}

/// Applies the records after checkpoint `c` that the LMDB state does not hold yet. Returns
/// where the log ends and the next sequence number.
pub(crate) fn replay(
    env: &Env,
    meta: Dbi,
    log: &LogFile,
    c: &Checkpoint,
    dir: &Path,
    derivation: Option<&dyn Derivation>,
) -> Result<(u64, u64), KvError> {
    let applied = applied_seq(env, meta)?;
    let mut tables: HashMap<String, Table> = HashMap::new();
    log.scan(c.start, c.seq + 1, |seq, kind, body| {
        if seq <= applied {
            return Ok(());
        }
        let record = Record {
            seq,
            kind,
            bytes: body,
        };
        loop {
            match apply_record(env, meta, &record, derivation, &mut tables, dir) {
                Err(Replay::Lmdb(e)) if e.is_map_full() => grow(env)?,
                Err(Replay::Lmdb(e)) => return Err(KvError::from(e)),
                Err(Replay::Kv(e)) => return Err(e),
                Ok(()) => return Ok(()),
            }
        }
    })
}

enum Replay {
    Lmdb(LmdbError),
    Kv(KvError),
}

impl From<LmdbError> for Replay {
    fn from(e: LmdbError) -> Replay {
        Replay::Lmdb(e)
    }
}

/// A record read from the log.
struct Record<'a> {
    seq: u64,
    kind: Kind,
    bytes: &'a [u8],
}

fn apply_record(
    env: &Env,
    meta: Dbi,
    record: &Record<'_>,
    derivation: Option<&dyn Derivation>,
    tables: &mut HashMap<String, Table>,
    dir: &Path,
) -> Result<(), Replay> {
    let seq = record.seq;
    let corrupt = |detail: String| {
        Replay::Kv(KvError::Corrupt {
            path: dir.join(super::LOG_FILE),
            detail,
        })
    };
    let (derivation, bytes) = match record.kind {
        Kind::Derived => {
            let (name, rest) = derived_name(record.bytes).ok_or_else(|| {
                corrupt(format!(
                    "log record {seq} passed its checksum but has no derivation name"
                ))
            })?;
            match derivation {
                Some(d) if d.name() == name => (Some(d), rest),
                _ => {
                    return Err(Replay::Kv(KvError::NeedsDerivation {
                        path: dir.join(super::LOG_FILE),
                        name: name.to_string(),
                    }))
                }
            }
        }
        _ => (None, record.bytes),
    };
    let ops = body::decode(bytes).ok_or_else(|| {
        corrupt(format!(
            "log record {seq} passed its checksum but is not a record body"
        ))
    })?;
    let mut txn = env.write_txn()?;
    let mut stage = Stage::default();
    let from = stage.mark();
    let mut derived_tables = Vec::new();
    if let Some(d) = derivation {
        for name in d.tables() {
            derived_tables.push(table_named(&txn, meta, name, tables, dir)?.clone());
        }
    }
    for op in &ops {
        let table = table_named(&txn, meta, op.table, tables, dir)?;
        stage_op(&mut stage, table, op.kind, op.key, op.value, op.tally);
        let Some(d) = derivation.filter(|d| op.table == d.source() && op.kind == LoggedOpKind::Put)
        else {
            continue;
        };
        let mut bad_table = false;
        d.derive(
            op.key,
            op.value,
            &mut |derived| match derived_tables.get(derived.table) {
                Some(t) => stage_op(
                    &mut stage,
                    t,
                    derived.kind,
                    derived.key,
                    derived.value,
                    derived.tally,
                ),
                None => bad_table = true,
            },
        )
        .map_err(|e| corrupt(format!("log record {seq}: {e}")))?;
        if bad_table {
            return Err(corrupt(format!(
                "log record {seq}: a derived write names no table of {}",
                d.name()
            )));
        }
    }
    stage.apply(from, &mut txn)?;
    tally::add(&mut txn, meta, stage.tallies())?;
    txn.put(meta, LOG_SEQ_KEY, &seq.to_be_bytes(), PutFlags::NONE)?;
    txn.commit()?;
    Ok(())
}

/// The name of a derived record's derivation, and the body after it.
fn derived_name(b: &[u8]) -> Option<(&str, &[u8])> {
    let len = u16::from_le_bytes(b.get(..2)?.try_into().ok()?) as usize;
    let name = std::str::from_utf8(b.get(2..2 + len)?).ok()?;
    Some((name, &b[2 + len..]))
}

fn stage_op(
    stage: &mut Stage,
    table: &Table,
    kind: LoggedOpKind,
    key: &[u8],
    value: &[u8],
    tally: Option<u32>,
) {
    match kind {
        LoggedOpKind::Put => stage.put(table, key, value),
        LoggedOpKind::Delete => stage.delete(table, key),
        LoggedOpKind::ListAdd => stage.list_change_tallied(true, table, key, value, tally),
        LoggedOpKind::ListRemove => stage.list_change_tallied(false, table, key, value, tally),
    }
}

/// Table `name`, opened on first use.
fn table_named<'t>(
    txn: &RwTxn,
    meta: Dbi,
    name: &str,
    tables: &'t mut HashMap<String, Table>,
    dir: &Path,
) -> Result<&'t Table, Replay> {
    if !tables.contains_key(name) {
        let table = open_table(txn, meta, name, dir)?;
        tables.insert(name.to_string(), table);
    }
    Ok(&tables[name])
}

fn open_table(txn: &RwTxn, meta: Dbi, name: &str, dir: &Path) -> Result<Table, Replay> {
    let path = dir.join(super::super::file::DATA_FILE);
    let kind = txn.get(meta, &catalog_key(name))?;
    let Some(kind) = kind else {
        return Err(Replay::Kv(KvError::Corrupt {
            path,
            detail: format!("the log writes to table \"{name}\", which the catalog lacks"),
        }));
    };
    let (kind, fixed) = decode_kind(kind, &path).map_err(Replay::Kv)?;
    let db = txn
        .open_dbi(name, false, kind == TableKind::List, fixed.is_some())?
        .ok_or_else(|| {
            Replay::Kv(KvError::NoSuchTable {
                name: name.to_string(),
            })
        })?;
    Ok(Table {
        name: name.into(),
        kind,
        db,
        fixed,
        id: next_table_id(),
    })
}

/// Doubles the map (no transaction is open: recovery runs before anything else).
fn grow(env: &Env) -> Result<(), KvError> {
    let size = env.info().map_size;
    // SAFETY: recovery runs at open, before any reader or the committer exists, and between
    // its own transactions.
    unsafe { env.resize(size.saturating_mul(2)) }?;
    Ok(())
}
