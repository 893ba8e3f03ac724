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
use super::file::LogFile;
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
) -> Result<(u64, u64), KvError> {
    let applied = applied_seq(env, meta)?;
    let mut tables: HashMap<String, Table> = HashMap::new();
    log.scan(c.start, c.seq + 1, |seq, body| {
        if seq <= applied {
            return Ok(());
        }
        loop {
            match apply_record(env, meta, seq, body, &mut tables, dir) {
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

fn apply_record(
    env: &Env,
    meta: Dbi,
    seq: u64,
    bytes: &[u8],
    tables: &mut HashMap<String, Table>,
    dir: &Path,
) -> Result<(), Replay> {
    let ops = body::decode(bytes).ok_or_else(|| {
        Replay::Kv(KvError::Corrupt {
            path: dir.join(super::LOG_FILE),
            detail: format!("log record {seq} passed its checksum but is not a record body"),
        })
    })?;
    let mut txn = env.write_txn()?;
    let mut stage = Stage::default();
    let from = stage.mark();
    for op in &ops {
        if !tables.contains_key(op.table) {
            let table = open_table(&txn, meta, op.table, dir)?;
            tables.insert(op.table.to_string(), table);
        }
        let table = &tables[op.table];
        match op.kind {
            LoggedOpKind::Put => stage.put(table, op.key, op.value),
            LoggedOpKind::Delete => stage.delete(table, op.key),
            LoggedOpKind::ListAdd => {
                stage.list_change_tallied(true, table, op.key, op.value, op.tally)
            }
            LoggedOpKind::ListRemove => {
                stage.list_change_tallied(false, table, op.key, op.value, op.tally)
            }
        }
    }
    stage.apply(from, &mut txn)?;
    tally::add(&mut txn, meta, stage.tallies())?;
    txn.put(meta, LOG_SEQ_KEY, &seq.to_be_bytes(), PutFlags::NONE)?;
    txn.commit()?;
    Ok(())
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
