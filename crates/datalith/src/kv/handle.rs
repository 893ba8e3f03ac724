//! Completion of a queued write: a handle the caller can wait on, or a callback.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use super::error::KvError;

/// Where the outcome of a request goes.
pub(crate) enum Completion<T, E> {
    Channel(Sender<Result<T, E>>),
    Callback(Box<dyn FnOnce(Result<T, E>) + Send>),
}

impl<T, E> Completion<T, E> {
    pub(crate) fn complete(self, outcome: Result<T, E>) {
        match self {
            // The receiver may have been dropped (the caller stopped caring): not an error.
            Completion::Channel(tx) => {
                let _ = tx.send(outcome);
            }
            Completion::Callback(f) => f(outcome),
        }
    }
}

/// A pending write. It completes only after the write is durable (as durable as the
/// environment's [`super::Durability`] promises) or has failed.
#[must_use = "a handle does nothing unless waited on; drop it explicitly to fire and forget"]
pub struct CommitHandle<T, E = KvError> {
    rx: Receiver<Result<T, E>>,
}

impl<T, E: From<KvError>> CommitHandle<T, E> {
    pub(crate) fn pair() -> (Completion<T, E>, CommitHandle<T, E>) {
        let (tx, rx) = crossbeam_channel::bounded(1);
        (Completion::Channel(tx), CommitHandle { rx })
    }

    /// A handle that is already complete (e.g. a request rejected before it was queued).
    pub(crate) fn ready(outcome: Result<T, E>) -> Self {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let _ = tx.send(outcome);
        CommitHandle { rx }
    }

    /// Blocks until the write is durable or failed.
    pub fn wait(self) -> Result<T, E> {
        self.rx
            .recv()
            .unwrap_or_else(|_| Err(KvError::Closed.into()))
    }

    /// Waits at most `timeout`; gives the handle back if the write is still pending.
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<T, E>, Self> {
        match self.rx.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => Err(self),
            Err(RecvTimeoutError::Disconnected) => Ok(Err(KvError::Closed.into())),
        }
    }

    /// The outcome if the write has finished, without blocking.
    pub fn try_wait(self) -> Result<Result<T, E>, Self> {
        match self.rx.try_recv() {
            Ok(r) => Ok(r),
            Err(TryRecvError::Empty) => Err(self),
            Err(TryRecvError::Disconnected) => Ok(Err(KvError::Closed.into())),
        }
    }

    /// Whether the write has finished (successfully or not).
    pub fn is_done(&self) -> bool {
        !self.rx.is_empty()
    }
}
