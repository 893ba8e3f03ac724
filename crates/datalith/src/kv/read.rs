//! Read snapshots.

use std::sync::Arc;

use super::error::KvError;
use super::gate::Ticket;
use super::lmdb::RoTxn;
use super::overlay::Overlay;
use super::shared::EnvShared;
use super::unapplied::Unapplied;
use super::view::View;
use super::wal::{seq_of, Tail};

/// A consistent, read-only snapshot of the environment. Many can be open at once, from any
/// threads; none blocks or is blocked by the committer. Keep them short: LMDB cannot reuse
/// pages that an open snapshot still sees, so a snapshot held while writes go on makes the
/// file grow; and a map growth waits for snapshots to close (for a bounded time, after which
/// the write that needed it fails with `KvError::SnapshotBlocksGrowth`).
pub struct ReadTxn {
    // Dropped before the gate slot is given back (see `Drop`).
    txn: Option<RoTxn>,
    /// The groups committed but not yet in LMDB when the snapshot began, merged into every
    /// read (`kv::unapplied`).
    unapplied: Option<Arc<Unapplied>>,
    ticket: Ticket,
    shared: Arc<EnvShared>,
}

/// How many snapshots a read-only environment begins, each found older than the log's
/// checkpoint, before it gives up (a snapshot begun after a checkpoint is never older than it,
/// so more than one or two means the data file is behind its log: a writer died mid-recovery).
const TAIL_SNAPSHOT_ATTEMPTS: usize = 16;

/// Pairs a fresh LMDB snapshot with the unapplied groups it lacks: this process's own
/// (`kv::unapplied`), beginning again in the rare case that the applier moved on between the
/// two looks; or, in a read-only environment, those another process acknowledged, read back
/// from the log's tail (`wal::tail`).
fn with_unapplied(
    shared: &EnvShared,
    mut txn: RoTxn,
) -> Result<(RoTxn, Option<Arc<Unapplied>>), KvError> {
    if let Some(tail) = &shared.core.tail {
        for _ in 0..TAIL_SNAPSHOT_ATTEMPTS {
            let applied = seq_of(&txn, shared.core.meta)?;
            match tail.after(applied)? {
                Tail::Groups(groups) if groups.is_empty() => return Ok((txn, None)),
                Tail::Groups(groups) => {
                    return Ok((txn, Some(Arc::new(Unapplied::read_back(&groups)))))
                }
                Tail::SnapshotTooOld => {
                    drop(txn);
                    txn = shared.core.env.read_txn()?;
                }
            }
        }
        return Err(KvError::Io(std::io::Error::new(
            std::io::ErrorKind::ResourceBusy,
            format!(
                "{}: the data file stays behind its log's checkpoint (a writer may be \
                 recovering it); retry",
                shared.core.path.display()
            ),
        )));
    }
    let Some(lazy) = &shared.lazy else {
        return Ok((txn, None));
    };
    loop {
        let version = lazy.current();
        if version.fits(txn.id()) {
            let version = (!version.is_empty()).then_some(version);
            return Ok((txn, version));
        }
        drop(txn);
        txn = shared.core.env.read_txn()?;
    }
}

impl ReadTxn {
    pub(crate) fn begin(shared: Arc<EnvShared>) -> Result<ReadTxn, KvError> {
        if let Some(e) = shared.core.shrink_error() {
            return Err(e);
        }
        // Before entering the gate: applying takes LMDB's writer lock, and a ticket held while
        // waiting for it could hold up a map growth that the lock's holder waits for.
        if let Some(lazy) = shared.lazy.as_ref().filter(|l| l.readers_apply()) {
            lazy.apply_for_reader(&shared.core);
        }
        let ticket = shared.core.gate.enter(shared.core.used_pages());
        Self::open(shared, ticket, true)
    }

    /// A snapshot of LMDB's state alone: the groups the applier has written, without those
    /// still waiting for it (`kv::unapplied`) or, read-only, those another process
    /// acknowledged since. It merges nothing and never makes its reader write waiting groups,
    /// so it costs the same however far the applier lags, and it lags `begin`'s by that much.
    pub(crate) fn begin_applied(shared: Arc<EnvShared>) -> Result<ReadTxn, KvError> {
        if let Some(e) = shared.core.shrink_error() {
            return Err(e);
        }
        let ticket = shared.core.gate.enter(shared.core.used_pages());
        Self::open(shared, ticket, false)
    }

    /// A snapshot if a reader slot is free right now (never waits); `None` otherwise or if
    /// LMDB refuses.
    pub(crate) fn try_begin(shared: Arc<EnvShared>) -> Option<ReadTxn> {
        if shared.core.env.shrunk() {
            return None;
        }
        let ticket = shared.core.gate.try_enter(shared.core.used_pages())?;
        Self::open(shared, ticket, true).ok()
    }

    /// Begins the LMDB snapshot for a reader holding `ticket`, paired with the groups it lacks
    /// when `unapplied`; gives the ticket back when that fails.
    fn open(shared: Arc<EnvShared>, ticket: Ticket, unapplied: bool) -> Result<ReadTxn, KvError> {
        let begun =
            shared
                .core
                .env
                .read_txn()
                .map_err(KvError::from)
                .and_then(|txn| match unapplied {
                    true => with_unapplied(&shared, txn),
                    false => Ok((txn, None)),
                });
        match begun {
            Ok((txn, unapplied)) => Ok(ReadTxn {
                txn: Some(txn),
                unapplied,
                ticket,
                shared,
            }),
            Err(e) => {
                shared.core.gate.leave(ticket);
                Err(e)
            }
        }
    }

    /// The reading API over this snapshot.
    pub fn view(&self) -> View<'_> {
        let view = self.raw_view();
        let Some(unapplied) = &self.unapplied else {
            return view;
        };
        if unapplied.lists_touched() {
            return view.with_overlay_on_demand(&**unapplied);
        }
        match unapplied.overlay() {
            Some(o) => view.with_overlay(o),
            None => view,
        }
    }

    /// The reading API over LMDB's state alone, without the unapplied groups (the committer
    /// merges its own overlay of them).
    pub(crate) fn raw_view(&self) -> View<'_> {
        View::new(self.txn.as_ref().expect("txn lives until drop"))
            .with_tallies(self.shared.core.meta)
    }

    /// The writes this snapshot sees beyond LMDB's state (groups committed but not yet
    /// written into LMDB), if any.
    pub(crate) fn overlay(&self) -> Option<&Arc<Overlay>> {
        self.unapplied.as_ref().and_then(|u| u.overlay())
    }

    /// The unapplied groups this snapshot sees, oldest first.
    pub(crate) fn unapplied(&self) -> Option<&Arc<Unapplied>> {
        self.unapplied.as_ref()
    }

    /// The LMDB transaction under this snapshot.
    pub(crate) fn raw_txn(&self) -> &RoTxn {
        self.txn.as_ref().expect("txn lives until drop")
    }

    /// The sequence number of the newest unapplied group this snapshot sees, if any.
    pub(crate) fn unapplied_last_seq(&self) -> Option<u64> {
        self.unapplied.as_ref().and_then(|u| u.last_seq())
    }

    /// LMDB's id of the transaction this snapshot sees (grows with every commit).
    pub fn txn_id(&self) -> usize {
        self.txn.as_ref().expect("txn lives until drop").id()
    }

    /// Staged ops of the committed groups LMDB did not hold yet when this snapshot began,
    /// which every read of it merges over LMDB's state (0: it reads LMDB alone).
    pub fn unapplied_ops(&self) -> usize {
        self.unapplied.as_ref().map_or(0, |u| u.ops())
    }
}

impl Drop for ReadTxn {
    fn drop(&mut self) {
        drop(self.txn.take());
        drop(self.unapplied.take());
        self.shared.core.gate.leave(self.ticket);
    }
}

/// A snapshot several database values share (a speculative database and the one it was made
/// from; the reports of one group commit), possibly from several threads.
///
/// LMDB lets a read-only transaction be read through by several threads at once except for
/// one piece of lazily refreshed state: the first read of a named table in a transaction
/// refreshes that table's record in the transaction (`DB_STALE`). [`Snapshot::prepare_share`]
/// does that first read for every table the sharers will read, on one thread, before the
/// snapshot is handed to anyone else; afterwards reads only read.
pub struct Snapshot {
    txn: ReadTxn,
    prepared: std::sync::atomic::AtomicBool,
    /// Serializes the first reads of `prepare_share` between threads.
    preparing: std::sync::Mutex<()>,
}

// SAFETY: see the type's documentation: every table a sharer reads is refreshed by
// `prepare_share` before a second holder exists, after which concurrent reads through one
// read-only LMDB transaction touch no shared mutable state (read transactions track no
// cursors; each read uses its own cursor).
unsafe impl Sync for Snapshot {}

impl Snapshot {
    /// Wraps a snapshot that nobody else reads yet.
    pub fn new(txn: ReadTxn) -> Snapshot {
        Snapshot {
            txn,
            prepared: std::sync::atomic::AtomicBool::new(false),
            preparing: std::sync::Mutex::new(()),
        }
    }

    /// The reading API over this snapshot.
    pub fn view(&self) -> View<'_> {
        self.txn.view()
    }

    /// The writes this snapshot sees beyond LMDB's state, if any (see [`ReadTxn::view`]).
    pub(crate) fn overlay(&self) -> Option<&Arc<Overlay>> {
        self.txn.overlay()
    }

    /// LMDB's id of the transaction this snapshot sees.
    pub fn txn_id(&self) -> usize {
        self.txn.txn_id()
    }

    /// Makes the snapshot safe to read from several threads at once (see the type's
    /// documentation); every holder calls it before its first read. Cheap after the first
    /// call; concurrent first calls are serialized.
    pub fn prepare_share(&self, tables: &[&super::table::Table]) {
        use std::sync::atomic::Ordering;
        if self.prepared.load(Ordering::Acquire) {
            return;
        }
        let _one_at_a_time = self.preparing.lock().unwrap_or_else(|p| p.into_inner());
        if self.prepared.load(Ordering::Acquire) {
            return;
        }
        let view = self.view();
        for t in tables {
            // Any read refreshes the table's record; errors surface again on real reads.
            let _ = view.first(t);
        }
        self.prepared.store(true, Ordering::Release);
    }
}
