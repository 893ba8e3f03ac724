//! Recovery after a crash or a power cut, in two steps: before LMDB opens the data file, its
//! meta pages are rolled back to the checkpoint's copy (dropping every unsynced LMDB commit as
//! a whole: the page-reuse guard kept the checkpointed tree intact); after it opens, the log
//! records after the checkpoint are applied in order, each exactly once (by `log_seq`).

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::super::error::KvError;
use super::super::file::layout::Meta;
use super::super::lmdb::{Dbi, Env, LmdbError, PutFlags, RoTxn, RwTxn};
use super::super::stage::Stage;
use super::super::table::{catalog_key, decode_kind, next_table_id, Table, TableKind};
use super::super::tally;
use super::body::{self, LoggedOpKind};
use super::checkpoint::WalSettings;
use super::derive::Derivation;
use super::file::LogFile;
use super::frame::Kind;
use super::slot::Checkpoint;
use super::survivor;
use super::LOG_SEQ_KEY;
use crate::limits::REPLAY_BATCH_BYTES;

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

/// A log damaged inside (`survivor`): why, and whether accepting the loss opens it.
pub(crate) struct Damage {
    /// The record where the records stop, a whole one following.
    pub(crate) seq: u64,
    pub(crate) detail: String,
    /// Only one record is missing before a whole one: replay may stop before it.
    pub(crate) acceptable: bool,
}

/// Reads the records after checkpoint `c` without applying them: how many are whole, and
/// the damage inside the log if a whole record lies past the point where they stop.
pub(crate) fn inspect(log: &LogFile, c: &Checkpoint) -> Result<(u64, Option<Damage>), KvError> {
    let tail = Tail::read(log, c)?;
    Ok((tail.next - (c.seq + 1), tail.damage(log)))
}

/// Where replay of the records after a checkpoint stops, and the first whole record past
/// that point, if any.
struct Tail {
    /// Where the log ends (the next write position).
    end: u64,
    /// The sequence number after the last whole record.
    next: u64,
    survivor: Option<survivor::Survivor>,
}

impl Tail {
    fn read(log: &LogFile, c: &Checkpoint) -> Result<Tail, KvError> {
        let (end, next) = log.scan(c.start, c.seq + 1, |_, _, _, _| Ok::<(), KvError>(()))?;
        Ok(Tail {
            end,
            next,
            survivor: survivor::after(log, end, next),
        })
    }

    fn damage(&self, log: &LogFile) -> Option<Damage> {
        let Tail { end, next, .. } = *self;
        // A survivor written without a sync speaks for nothing before it (`survivor`): the
        // log ends here, as that writer's mode allowed, if the records before it could lie
        // between the stop and it (else the ring has moved on: see below).
        let survivor = self
            .survivor
            .filter(|s| !(s.unsynced && fits(log, end, next, s)));
        survivor.map(|s| match s.seq > next + 1 {
            // More than the one record is missing: several damaged records, or the ring has
            // moved on past this checkpoint (a newer slot named a later one and is lost, and
            // this checkpoint's pages may have been reused since). Rolling the data file back
            // to it could read pages that hold something else now: refused even when damage
            // is accepted.
            true => Damage {
                seq: next,
                detail: format!(
                    "log records {next} to {} are missing or damaged where the checkpoint in \
                     use (byte {end}) says they follow it, yet {} is whole: the log is \
                     damaged across several records, or its newest checkpoint slot is lost; \
                     the data file cannot be rolled back to that checkpoint safely; restore a \
                     backup",
                    s.seq - 1,
                    s.describe()
                ),
                acceptable: false,
            },
            false => Damage {
                seq: next,
                detail: format!(
                    "log record {next} at byte {end} is damaged, yet {} after it is whole: \
                     the transactions from {next} on were acknowledged and would be lost; \
                     restore a backup, or open with `log_accept_damage` (the CLI's \
                     `--accept-log-damage`, after the command) to keep those before {next} \
                     and drop the rest",
                    s.describe()
                ),
                acceptable: true,
            },
        })
    }
}

/// Whether the records `next..survivor` fit between `end` and the survivor in this lap of
/// the ring, each at least a header long. Records written without a sync and lost in a crash
/// always do; a survivor of a later lap (a newer checkpoint slot lost, the ring moved on past
/// the one in use) numbers more records than its distance holds, unless those were long.
fn fits(log: &LogFile, end: u64, next: u64, s: &survivor::Survivor) -> bool {
    let span = match s.at >= end {
        true => s.at - end,
        false => (log.capacity() - end) + s.at.saturating_sub(log.area_start),
    };
    s.seq.saturating_sub(next) <= span / super::frame::HEADER_BYTES as u64 + 1
}

/// [`inspect`], refusing a damaged log unless its loss is `accept`ed and acceptable. Runs
/// before the data file is touched.
///
/// When the log ends before whole records written without a sync (lost ones before them),
/// zeroes the ring from the end up to the checkpoint's start first: the records written next
/// take the same numbers, and one of theirs cut short by a later crash must not be followed
/// by a whole record of the lost run that happens to begin where it ends.
pub(crate) fn refuse_damage(
    log: &LogFile,
    c: &Checkpoint,
    dir: &Path,
    accept: bool,
) -> Result<(), KvError> {
    let tail = Tail::read(log, c)?;
    match tail.damage(log) {
        Some(d) if !(accept && d.acceptable) => Err(KvError::Corrupt {
            path: dir.join(super::LOG_FILE),
            detail: d.detail,
        }),
        _ if tail.survivor.is_some_and(|s| s.unsynced) => zero_after(log, c, tail.end),
        _ => Ok(()),
    }
}

/// See [`refuse_damage`]: zeroes the ring from `end` up to the checkpoint's start.
fn zero_after(log: &LogFile, c: &Checkpoint, end: u64) -> Result<(), KvError> {
    let ranges = match c.start > end {
        true => [(end, c.start), (0, 0)],
        false => [(end, log.capacity()), (log.area_start, c.start)],
    };
    let zeros = vec![0u8; 1 << 20];
    for (from, to) in ranges {
        let mut at = from;
        while at < to {
            let n = (to - at).min(zeros.len() as u64);
            log.file.write_all_at(&zeros[..n as usize], at)?;
            at += n;
        }
    }
    log.file.sync_data()?;
    Ok(())
}

/// The last log sequence number the LMDB state holds (0 for none yet).
pub(crate) fn applied_seq(env: &Env, meta: Dbi) -> Result<u64, KvError> {
    Ok(seq_of(&env.read_txn()?, meta)?)
}

/// The last log sequence number the state `txn` reads holds (0 for none yet).
pub(crate) fn seq_of(txn: &RoTxn, meta: Dbi) -> Result<u64, LmdbError> {
    Ok(txn
        .get(meta, LOG_SEQ_KEY)?
        .and_then(|v| <[u8; 8]>::try_from(v).ok())
        .map_or(0, u64::from_be_bytes))
}

/// What replay leaves for the caller.
pub(crate) struct Replayed {
    /// Where the log ends (the next write position).
    pub(crate) end: u64,
    /// The sequence number after the last record replayed.
    pub(crate) next_seq: u64,
    /// The generation of the newest checkpoint slot (replay writes one when it must grow the
    /// map).
    pub(crate) generation: u64,
    /// The page-reuse guard: a snapshot of the last durable checkpoint, to hold until the
    /// caller's checkpoint of the replayed state is durable (`None` without the guard).
    pub(crate) guard: Option<RoTxn>,
}

/// Applies the records after checkpoint `c` that the LMDB state does not hold yet, many in
/// one LMDB transaction (up to `REPLAY_BATCH_BYTES` of records), each transaction setting
/// `log_seq` to its last record.
///
/// With `guard`, a snapshot of the checkpoint is held throughout: replay's commits are
/// unsynced, and until the caller's next checkpoint is durable the log's slot still names
/// this one, so a power cut must find its pages as they were (the checkpointer's rule,
/// `wal::checkpoint`). Held, it forbids reusing pages freed since, so replay commits in
/// batches: one transaction per record grew the file by every page each record touched.
/// A full map cannot grow while the guard is held: replay then makes its state durable and
/// names it in a new checkpoint slot, lets the guard go, grows, and guards that state.
pub(crate) fn replay(
    env: &Env,
    meta: Dbi,
    log: &LogFile,
    c: &Checkpoint,
    dir: &Path,
    settings: &WalSettings,
) -> Result<Replayed, KvError> {
    let derivation = settings.derivation.as_deref();
    let applied = applied_seq(env, meta)?;
    let mut r = Replayer {
        env,
        meta,
        log,
        dir,
        derivation,
        tables: HashMap::new(),
        batch: Vec::new(),
        batch_bytes: 0,
        committed: None,
        generation: c.generation,
        meta_bytes: c.meta.len(),
        guard: match settings.guard_pages {
            true => Some(env.read_txn()?),
            false => None,
        },
    };
    let (end, next_seq) = log.scan(c.start, c.seq + 1, |seq, kind, body, end| {
        if seq <= applied {
            return Ok(());
        }
        r.batch.push(Owned {
            seq,
            kind,
            bytes: body.to_vec(),
            end,
        });
        r.batch_bytes += body.len();
        if r.batch_bytes >= REPLAY_BATCH_BYTES {
            r.flush()?;
        }
        Ok::<(), KvError>(())
    })?;
    r.flush()?;
    Ok(Replayed {
        end,
        next_seq,
        generation: r.generation,
        guard: r.guard,
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

/// A record read from the log, kept until its batch commits (a batch aborted for a full map
/// is staged again from them).
struct Owned {
    seq: u64,
    kind: Kind,
    bytes: Vec<u8>,
    /// Where the next record begins.
    end: u64,
}

struct Replayer<'a> {
    env: &'a Env,
    meta: Dbi,
    log: &'a LogFile,
    dir: &'a Path,
    derivation: Option<&'a dyn Derivation>,
    /// Tables opened by committed transactions (a handle opened by an aborted one is closed).
    tables: HashMap<String, Table>,
    batch: Vec<Owned>,
    batch_bytes: usize,
    /// The last record committed: its sequence number and where the next one begins.
    committed: Option<(u64, u64)>,
    generation: u64,
    meta_bytes: usize,
    guard: Option<RoTxn>,
}

impl Replayer<'_> {
    /// Commits the batch's records, in as many transactions as LMDB's dirty-page limit needs.
    fn flush(&mut self) -> Result<(), KvError> {
        let records = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let mut rest: &[Owned] = &records;
        while !rest.is_empty() {
            let mut n = rest.len();
            loop {
                match self.commit(&rest[..n]) {
                    Ok(()) => break,
                    Err(Replay::Lmdb(e)) if e.is_map_full() => self.make_room()?,
                    Err(Replay::Lmdb(e)) if e.code == LmdbError::TXN_FULL && n > 1 => n /= 2,
                    Err(Replay::Lmdb(e)) => return Err(KvError::from(e)),
                    Err(Replay::Kv(e)) => return Err(e),
                }
            }
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Stages `records` and commits them in one transaction.
    fn commit(&mut self, records: &[Owned]) -> Result<(), Replay> {
        let Some(last) = records.last() else {
            return Ok(());
        };
        let mut txn = self.env.write_txn()?;
        let mut opened = Vec::new();
        let mut stage = Stage::default();
        let from = stage.mark();
        let staged = records.iter().try_for_each(|record| {
            let mut tables = Tables {
                txn: &txn,
                meta: self.meta,
                open: &mut self.tables,
                opened: &mut opened,
                dir: self.dir,
                lmdb_failure: None,
            };
            let staged = stage_record(
                record.seq,
                record.kind,
                &record.bytes,
                self.derivation,
                &mut tables,
                self.dir,
                &mut stage,
            );
            match (staged, tables.lmdb_failure) {
                (Ok(()), _) => Ok(()),
                // A table LMDB could not open (a full map among them) is LMDB's failure, so
                // that the batch is retried the way any LMDB failure is.
                (Err(_), Some(e)) => Err(Replay::Lmdb(e)),
                (Err(e), None) => Err(Replay::Kv(e)),
            }
        });
        let written = staged.and_then(|()| {
            stage.apply(from, &mut txn)?;
            tally::add(&mut txn, self.meta, stage.tallies())?;
            txn.put(
                self.meta,
                LOG_SEQ_KEY,
                &last.seq.to_be_bytes(),
                PutFlags::NONE,
            )?;
            Ok(())
        });
        match written.and_then(|()| Ok(txn.commit()?)) {
            Ok(()) => {
                self.committed = Some((last.seq, last.end));
                Ok(())
            }
            Err(e) => {
                // The handles this transaction opened closed with it.
                for name in opened {
                    self.tables.remove(&name);
                }
                Err(e)
            }
        }
    }

    /// Makes the map larger. A held guard must go first (a resize needs every transaction
    /// closed), and only once the state it would stop protecting is durable and named by a
    /// checkpoint slot; then the grown state is guarded.
    fn make_room(&mut self) -> Result<(), KvError> {
        let Some(guard) = self.guard.take() else {
            return grow(self.env);
        };
        if let Some((seq, start)) = self.committed {
            self.env.sync()?;
            let txnid = self.env.read_txn()?.id() as u64;
            let mut meta = vec![0; self.meta_bytes];
            let data = std::fs::File::open(self.dir.join(super::super::file::DATA_FILE))?;
            data.read_exact_at(&mut meta, 0)?;
            let c = Checkpoint {
                generation: self.generation + 1,
                seq,
                txnid,
                start,
                meta,
            };
            self.log.write_checkpoint(&c)?;
            self.generation = c.generation;
        }
        drop(guard);
        grow(self.env)?;
        self.guard = Some(self.env.read_txn()?);
        Ok(())
    }
}

/// Where the tables a record names come from: replay opens them in its write transaction, a
/// reader of the log's tail (`wal::tail`) from its environment's catalog.
pub(crate) trait RecordTables {
    /// The table named `name`; `None` when its writes do not matter to the reader (a reader
    /// of the tail skips tables its process never opened); an error names why it cannot be had.
    fn table(&mut self, name: &str) -> Result<Option<&Table>, KvError>;
}

/// The tables records write to, opened on first use in the batch's transaction.
struct Tables<'t> {
    txn: &'t RwTxn,
    meta: Dbi,
    open: &'t mut HashMap<String, Table>,
    /// The tables this transaction opened (their handles close if it aborts).
    opened: &'t mut Vec<String>,
    dir: &'t Path,
    /// Why the last `table` failed inside LMDB (kept so a full map is told from damage).
    lmdb_failure: Option<LmdbError>,
}

impl RecordTables for Tables<'_> {
    fn table(&mut self, name: &str) -> Result<Option<&Table>, KvError> {
        if !self.open.contains_key(name) {
            let table = match open_table(self.txn, self.meta, name, self.dir) {
                Ok(t) => t,
                Err(Replay::Kv(e)) => return Err(e),
                Err(Replay::Lmdb(e)) => {
                    self.lmdb_failure = Some(e);
                    return Err(KvError::from(e));
                }
            };
            self.open.insert(name.to_string(), table);
            self.opened.push(name.to_string());
        }
        Ok(Some(&self.open[name]))
    }
}

/// Stages the writes of record `seq` (of `kind`, body `bytes`; for a derived record, also the
/// writes its derivation rebuilds) into `stage`. `dir` names the log in errors.
pub(crate) fn stage_record(
    seq: u64,
    kind: Kind,
    bytes: &[u8],
    derivation: Option<&dyn Derivation>,
    tables: &mut dyn RecordTables,
    dir: &Path,
    stage: &mut Stage,
) -> Result<(), KvError> {
    let corrupt = |detail: String| KvError::Corrupt {
        path: dir.join(super::LOG_FILE),
        detail,
    };
    let (derivation, bytes) = match kind {
        Kind::Derived => {
            let (name, rest) = derived_name(bytes).ok_or_else(|| {
                corrupt(format!(
                    "log record {seq} passed its checksum but has no derivation name"
                ))
            })?;
            match derivation {
                Some(d) if d.name() == name => (Some(d), rest),
                _ => {
                    return Err(KvError::NeedsDerivation {
                        path: dir.join(super::LOG_FILE),
                        name: name.to_string(),
                    })
                }
            }
        }
        _ => (None, bytes),
    };
    let ops = body::decode(bytes).ok_or_else(|| {
        corrupt(format!(
            "log record {seq} passed its checksum but is not a record body"
        ))
    })?;
    let mut derived_tables = Vec::new();
    if let Some(d) = derivation {
        for name in d.tables() {
            derived_tables.push(tables.table(name)?.cloned());
        }
    }
    for op in &ops {
        if let Some(table) = tables.table(op.table)? {
            stage_op(stage, table, op.kind, op.key, op.value, op.tally);
        }
        let Some(d) = derivation.filter(|d| op.table == d.source() && op.kind == LoggedOpKind::Put)
        else {
            continue;
        };
        let mut bad_table = false;
        d.derive(
            op.key,
            op.value,
            &mut |derived| match derived_tables.get(derived.table) {
                Some(None) => {}
                Some(Some(t)) => stage_op(
                    stage,
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
        unread_by_writers: false,
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
