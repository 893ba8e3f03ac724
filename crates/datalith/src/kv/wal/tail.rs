//! The log's tail read by another process: the groups a writer has acknowledged (durable in
//! the log, visible to its own readers) but not yet written into LMDB, so that a read-only
//! process's snapshot includes every commit acknowledged before it began.
//!
//! A read-only environment pairs each LMDB snapshot with the records after that snapshot's
//! `log_seq` (`LOG_SEQ_KEY`, the last group LMDB holds), read from the log file with plain
//! reads, no lock:
//!
//! 1. read the newest checkpoint slot: if its `seq` is past the snapshot's `log_seq`, the
//!    records between may already lie before the slot's `start`, so the caller begins a
//!    newer snapshot (one begun after the checkpoint holds everything it covers);
//! 2. scan the records from the slot's `start` (or from where the last scan of the same
//!    checkpoint stopped), keeping those after `log_seq`, each checked by its checksum and
//!    its place in the sequence;
//! 3. read the file's length and the slot again: a log that grew under the scan is scanned
//!    again; a checkpoint that passed `log_seq` meanwhile may have let the ring overwrite a
//!    record the scan had yet to read, so the caller begins a newer snapshot.
//!
//! Every record acknowledged before the snapshot began was written whole before it was
//! acknowledged, and a record after `log_seq` is not overwritten while the durable checkpoint
//! is at or before `log_seq` (the ring keeps every record after the checkpoint's start), so a
//! scan that ends with the checkpoint still there has read every one (a record still being
//! written stops the scan; it was not acknowledged yet). For the same reason the next
//! snapshot's read resumes where this one stopped, whatever checkpoints came between.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::super::error::KvError;
use super::super::stage::Stage;
use super::super::table::Table;
use super::derive::Derivation;
use super::file::LogFile;
use super::recovery::{stage_record, RecordTables};

/// How many times a read of the tail starts over (the log grew during each scan) before it
/// gives up: the log grows a few times in its life.
const TAIL_ATTEMPTS: usize = 64;

/// One group read back from the log.
pub(crate) struct TailGroup {
    pub(crate) seq: u64,
    pub(crate) stage: Arc<Stage>,
}

/// What one read of the tail found.
pub(crate) enum Tail {
    /// The groups after the snapshot's `log_seq`, oldest first (empty: LMDB holds them all).
    Groups(Vec<Arc<TailGroup>>),
    /// A checkpoint passed the snapshot's `log_seq`: begin a newer snapshot and ask again.
    SnapshotTooOld,
}

/// The reader of one environment's log tail, shared by its snapshots.
pub(crate) struct LogTail {
    dir: PathBuf,
    page_bytes: usize,
    derivation: Option<Arc<dyn Derivation>>,
    state: Mutex<State>,
}

/// What the last scan learned, reused while the checkpoint stays the same.
#[derive(Default)]
struct State {
    /// The tables this process opened, by name: only their writes are read back.
    tables: HashMap<String, Table>,
    scanned: Option<Scanned>,
}

struct Scanned {
    capacity: u64,
    /// Where the scan stopped and the sequence number expected there.
    next_pos: u64,
    next_seq: u64,
    /// Groups after some snapshot's `log_seq`, oldest first, up to `next_seq`.
    groups: Vec<Arc<TailGroup>>,
}

impl LogTail {
    pub(crate) fn new(
        dir: &Path,
        page_bytes: usize,
        derivation: Option<Arc<dyn Derivation>>,
    ) -> LogTail {
        LogTail {
            dir: dir.to_path_buf(),
            page_bytes,
            derivation,
            state: Mutex::new(State::default()),
        }
    }

    /// Records that this process opened `table`: its writes are read back from now on. The
    /// groups read before did not keep them, so they are read again.
    pub(crate) fn name_table(&self, table: &Table) {
        let mut state = self.lock();
        state.tables.insert(table.name.to_string(), table.clone());
        state.scanned = None;
    }

    /// The groups after `applied` (a snapshot's `log_seq`) that the log holds.
    pub(crate) fn after(&self, applied: u64) -> Result<Tail, KvError> {
        let mut state = self.lock();
        for _ in 0..TAIL_ATTEMPTS {
            let Some(log) = LogFile::open_to_read(&self.dir, self.page_bytes)? else {
                return Ok(Tail::Groups(Vec::new()));
            };
            // A log gets its first slot before its first record: none means no records.
            let Some(checkpoint) = log.checkpoint() else {
                return Ok(Tail::Groups(Vec::new()));
            };
            if checkpoint.seq > applied {
                return Ok(Tail::SnapshotTooOld);
            }
            // Records after the durable checkpoint are never overwritten (the ring keeps
            // every record after its start, and checkpoints only move forward), so what an
            // earlier scan read of records after this checkpoint stays true, whatever
            // checkpoints came between. A log that grew may hold the next record
            // where a scan at the old length wrapped: scanned again from the checkpoint.
            // An earlier scan that stopped at or before `applied` still saves reading: its
            // stop is where record `next_seq` begins, intact while no checkpoint passed it.
            let resume = state
                .scanned
                .take()
                .filter(|s| s.capacity == log.capacity() && s.next_seq > checkpoint.seq);
            let (start, first_seq, mut groups) = match resume {
                Some(s) => (s.next_pos, s.next_seq, s.groups),
                None => (checkpoint.start, checkpoint.seq + 1, Vec::new()),
            };
            groups.retain(|g| g.seq > applied);
            let mut tables = ReadTables(&state.tables);
            let (next_pos, next_seq) = log.scan(start, first_seq, |seq, kind, body, _| {
                if seq <= applied {
                    return Ok(());
                }
                let mut stage = Stage::default();
                stage_record(
                    seq,
                    kind,
                    body,
                    self.derivation.as_deref(),
                    &mut tables,
                    &self.dir,
                    &mut stage,
                )?;
                groups.push(Arc::new(TailGroup {
                    seq,
                    stage: Arc::new(stage),
                }));
                Ok::<(), KvError>(())
            })?;
            if log.file.metadata()?.len() != log.capacity() {
                continue;
            }
            // A checkpoint past `applied` during the scan may have let the ring overwrite a
            // record the scan still had to read: what it read may stop short.
            if log.checkpoint().is_some_and(|c| c.seq > applied) {
                return Ok(Tail::SnapshotTooOld);
            }
            state.scanned = Some(Scanned {
                capacity: log.capacity(),
                next_pos,
                next_seq,
                groups: groups.clone(),
            });
            return Ok(Tail::Groups(groups));
        }
        Err(KvError::Io(std::io::Error::new(
            std::io::ErrorKind::ResourceBusy,
            format!(
                "the log {} changed under {TAIL_ATTEMPTS} reads of its tail in a row",
                self.dir.join(super::LOG_FILE).display()
            ),
        )))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The tables this process opened; a record's writes to any other are skipped (nothing here
/// can read them).
struct ReadTables<'a>(&'a HashMap<String, Table>);

impl RecordTables for ReadTables<'_> {
    fn table(&mut self, name: &str) -> Result<Option<&Table>, KvError> {
        Ok(self.0.get(name))
    }
}
