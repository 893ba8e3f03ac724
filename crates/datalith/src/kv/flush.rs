//! Starting write-back of a commit's pages while LMDB is still writing them.
//!
//! A durable commit is, inside `mdb_txn_commit`: `pwrite` every dirty page into the page cache,
//! then `fdatasync`, then write the meta page. The `fdatasync` does the kernel's write-back work
//! (mapping pages to blocks, building and submitting requests) on the calling thread, and that
//! thread is the committer, the serial part: on workload W at batch 1 (~1,300 dirty pages a
//! commit, mostly random `:v` leaves) it was ~30% of the committer's time, while the second
//! core sat mostly idle.
//!
//! The flusher moves that work to a helper thread. While a large commit runs, the helper asks
//! the kernel every `FLUSH_AHEAD_INTERVAL_MICROS` to start write-back of whatever the commit
//! has written so far (`sync_file_range(SYNC_FILE_RANGE_WRITE)`); the commit's own `fdatasync`
//! then finds most pages already on their way and only waits, and writes the rest.
//!
//! It cannot weaken a commit: `SYNC_FILE_RANGE_WRITE` only starts writing pages earlier than
//! the kernel would have; it promises nothing and orders nothing. Durability and the order
//! LMDB relies on (data pages flushed before the meta page is written) are still LMDB's own
//! `fdatasync`'s. The helper never calls LMDB (it works on its own duplicate of the data
//! file's descriptor), and its errors are ignored: `fdatasync` reports any real one.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::limits;

#[derive(Default)]
struct State {
    /// A large commit is running: keep starting write-back.
    active: bool,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state is two flags; a panic elsewhere cannot leave it half written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The flusher of one environment; dropping it stops the helper.
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    helper: Option<JoinHandle<()>>,
}

/// While it lives, the helper keeps starting write-back; dropped when the commit returns (or
/// fails, or the committer unwinds).
pub(crate) struct Flushing<'a> {
    flusher: &'a Flusher,
}

impl Flusher {
    /// A flusher with its helper thread, for the data file behind `data_fd` (duplicated here,
    /// so the helper never depends on LMDB's descriptor staying open).
    pub(crate) fn start(data_fd: RawFd) -> std::io::Result<Flusher> {
        // SAFETY: `data_fd` is LMDB's open descriptor of the data file, valid during the call.
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(data_fd) };
        let file = borrowed.try_clone_to_owned()?;
        let shared = Arc::new(Shared::default());
        let for_helper = shared.clone();
        let helper = std::thread::Builder::new()
            .name("datalith-flusher".into())
            .spawn(move || run(&for_helper, &file))?;
        Ok(Flusher {
            shared,
            helper: Some(helper),
        })
    }

    /// Starts the helper for the commit about to run; it stops when the guard is dropped.
    pub(crate) fn during_commit(&self) -> Flushing<'_> {
        self.shared.state().active = true;
        self.shared.wake.notify_one();
        Flushing { flusher: self }
    }
}

impl Drop for Flushing<'_> {
    fn drop(&mut self) {
        self.flusher.shared.state().active = false;
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shared.state().stop = true;
        self.shared.wake.notify_one();
        if let Some(helper) = self.helper.take() {
            // The helper cannot panic (its calls return errors), so join only waits for it.
            let _ = helper.join();
        }
    }
}

fn run(shared: &Shared, file: &OwnedFd) {
    let interval = Duration::from_micros(limits::FLUSH_AHEAD_INTERVAL_MICROS);
    loop {
        {
            let mut state = shared.state();
            while !state.active && !state.stop {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
        }
        // Offset 0, length 0: the whole file. Pages already under write-back are skipped.
        // SAFETY: a system call on a descriptor this thread owns; no memory is passed.
        let _ =
            unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
        std::thread::sleep(interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    /// The file's dirty pages by `cachestat(2)` (Linux 6.5+), or None where the kernel lacks it.
    fn dirty_pages(file: &std::fs::File) -> Option<u64> {
        #[repr(C)]
        struct Range {
            off: u64,
            len: u64,
        }
        #[repr(C)]
        #[derive(Default)]
        struct Stat {
            cache: u64,
            dirty: u64,
            writeback: u64,
            evicted: u64,
            recently_evicted: u64,
        }
        const SYS_CACHESTAT: libc::c_long = 451;
        let range = Range { off: 0, len: 0 };
        let mut stat = Stat::default();
        // SAFETY: cachestat reads `range` and writes `stat`, both live and of the kernel's layout.
        let rc = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                &range as *const Range,
                &mut stat as *mut Stat,
                0u32,
            )
        };
        (rc == 0).then_some(stat.dirty)
    }

    #[test]
    fn while_a_commit_runs_the_helper_starts_write_back_and_stops_after() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = std::fs::File::create(dir.path().join("data")).unwrap();
        file.write_all(&vec![7u8; 4 << 20]).unwrap();
        file.sync_all().unwrap();
        let Some(_) = dirty_pages(&file) else {
            eprintln!("skipped: no cachestat(2) on this kernel");
            return;
        };
        let flusher = Flusher::start(file.as_raw_fd()).unwrap();

        // Idle: pages written now stay dirty (nothing else here writes them back this soon).
        file.write_all_at(&vec![1u8; 1 << 20], 0).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(dirty_pages(&file).unwrap() > 0, "idle helper wrote back");

        // Active: the same pages leave the dirty state without any fsync from us.
        let flushing = flusher.during_commit();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while dirty_pages(&file).unwrap() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "no write-back started"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(flushing);

        // Stopped again once the guard is gone.
        std::thread::sleep(Duration::from_millis(10));
        file.write_all_at(&vec![2u8; 1 << 20], 0).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(dirty_pages(&file).unwrap() > 0, "helper kept writing back");
        drop(flusher);
    }
}
