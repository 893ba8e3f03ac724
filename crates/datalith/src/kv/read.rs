//! Read snapshots.

use heed::{RoTxn, WithoutTls};
use std::sync::Arc;

use super::env::EnvShared;
use super::error::KvError;
use super::view::View;

/// A consistent, read-only snapshot of the environment. Many can be open at once, from any
/// threads; none blocks or is blocked by the committer. Keep them short: LMDB cannot reuse
/// pages that an open snapshot still sees, and a map growth waits for snapshots to close.
pub struct ReadTxn {
    // Dropped before the gate slot is given back (see `Drop`).
    txn: Option<RoTxn<'static, WithoutTls>>,
    shared: Arc<EnvShared>,
}

impl ReadTxn {
    pub(crate) fn begin(shared: Arc<EnvShared>) -> Result<ReadTxn, KvError> {
        shared.gate.enter();
        match shared.env.clone().static_read_txn() {
            Ok(txn) => Ok(ReadTxn {
                txn: Some(txn),
                shared,
            }),
            Err(e) => {
                shared.gate.leave();
                Err(e.into())
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
        self.shared.gate.leave();
    }
}
