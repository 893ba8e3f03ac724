//! A checkpoint that failed to reach the disk, remembered for good.
//!
//! Why no retry: when `fdatasync` of the data file fails, Linux may already have marked the
//! unwritten pages clean (it reports a write-back error once per open file, then forgets it),
//! so a second sync can return success for pages that never reached the disk. A checkpoint
//! record written after such a "success" would free the log records that still hold those
//! writes, and the next open would trust a data file with holes in it. The same goes for the
//! checkpoint record's own write and sync in the log.
//!
//! So the first failure is final for this open: every later checkpoint refuses, and the
//! environment reports itself poisoned (writes and the applier stop; readers still see every
//! acknowledged write, from memory). The log is left as it was at the last good checkpoint,
//! which is everything reopening needs: recovery restores that checkpoint's meta pages (whose
//! pages the page-reuse guard kept untouched) and replays every record after it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::super::error::KvError;

/// The log's sticky checkpoint failure (and a test hook that causes one).
#[derive(Default)]
pub(crate) struct Failure {
    cause: OnceLock<String>,
    injected: AtomicBool,
}

impl Failure {
    /// Why checkpoints stopped, if they did.
    pub(crate) fn cause(&self) -> Option<&str> {
        self.cause.get().map(String::as_str)
    }

    /// The error a checkpoint returns once one has failed.
    pub(crate) fn refusal(&self) -> Option<KvError> {
        self.cause().map(|cause| KvError::CommitFailed {
            cause: cause.to_string(),
        })
    }

    /// Records `err`, a checkpoint's failed write or sync (the first one recorded stays), and
    /// returns the error to report.
    pub(crate) fn record(&self, err: &KvError) -> KvError {
        let cause = self.cause.get_or_init(|| {
            format!(
                "a checkpoint could not be made durable ({err}); writes are refused \
                 until the database is reopened, which recovers every acknowledged write from \
                 the log"
            )
        });
        KvError::CommitFailed {
            cause: cause.clone(),
        }
    }

    /// Test hook: the next checkpoint's sync fails as a failing disk's would.
    pub(crate) fn inject(&self) {
        self.injected.store(true, Ordering::Release);
    }

    /// The injected failure, once.
    pub(crate) fn take_injected(&self) -> Result<(), KvError> {
        match self.injected.swap(false, Ordering::AcqRel) {
            true => Err(KvError::Io(std::io::Error::from_raw_os_error(libc::EIO))),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_is_kept_and_refuses_every_later_checkpoint() {
        let f = Failure::default();
        assert!(f.refusal().is_none());
        assert!(f.take_injected().is_ok());
        f.inject();
        let first = f.take_injected().unwrap_err();
        assert!(f.take_injected().is_ok(), "an injection fires once");
        let reported = f.record(&first);
        let later = f.record(&KvError::Closed);
        for e in [reported, later, f.refusal().unwrap()] {
            let KvError::CommitFailed { cause } = e else {
                panic!("not a commit failure: {e:?}");
            };
            assert!(cause.contains("Input/output error"), "{cause}");
            assert!(cause.contains("reopened"), "{cause}");
        }
    }
}
