//! Read snapshots.

use std::sync::Arc;

use super::env::EnvShared;
use super::error::KvError;
use super::gate::Ticket;
use super::lmdb::RoTxn;
use super::view::View;

/// A consistent, read-only snapshot of the environment. Many can be open at once, from any
/// threads; none blocks or is blocked by the committer. Keep them short: LMDB cannot reuse
/// pages that an open snapshot still sees, so a snapshot held while writes go on makes the
/// file grow; and a map growth waits for snapshots to close (for a bounded time, after which
/// the write that needed it fails with `KvError::SnapshotBlocksGrowth`).
pub struct ReadTxn {
    // Dropped before the gate slot is given back (see `Drop`).
    txn: Option<RoTxn>,
    ticket: Ticket,
    shared: Arc<EnvShared>,
}

impl ReadTxn {
    pub(crate) fn begin(shared: Arc<EnvShared>) -> Result<ReadTxn, KvError> {
        if let Some(e) = shared.shrink_error() {
            return Err(e);
        }
        let ticket = shared.gate.enter(shared.used_pages());
        match shared.env.read_txn() {
            Ok(txn) => Ok(ReadTxn {
                txn: Some(txn),
                ticket,
                shared,
            }),
            Err(e) => {
                shared.gate.leave(ticket);
                Err(e.into())
            }
        }
    }

    /// A snapshot if a reader slot is free right now (never waits); `None` otherwise or if
    /// LMDB refuses.
    pub(crate) fn try_begin(shared: Arc<EnvShared>) -> Option<ReadTxn> {
        if shared.env.shrunk() {
            return None;
        }
        let ticket = shared.gate.try_enter(shared.used_pages())?;
        match shared.env.read_txn() {
            Ok(txn) => Some(ReadTxn {
                txn: Some(txn),
                ticket,
                shared,
            }),
            Err(_) => {
                shared.gate.leave(ticket);
                None
            }
        }
    }

    /// The reading API over this snapshot.
    pub fn view(&self) -> View<'_> {
        View::new(self.txn.as_ref().expect("txn lives until drop"))
    }

    /// LMDB's id of the transaction this snapshot sees (grows with every commit).
    pub fn txn_id(&self) -> usize {
        self.txn.as_ref().expect("txn lives until drop").id()
    }
}

impl Drop for ReadTxn {
    fn drop(&mut self) {
        drop(self.txn.take());
        self.shared.gate.leave(self.ticket);
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

    /// LMDB's id of the transaction this snapshot sees.
    pub fn txn_id(&self) -> usize {
        self.txn.txn_id()
    }

    /// Makes the snapshot safe to read from several threads at once (see the type's
    /// documentation); every holder calls it before its first read. Cheap after the first
    /// call; concurrent first calls are serialized.
    pub fn prepare_share(&self, tables: &[&super::Table]) {
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
