//! Faulting in the file's growth region ahead of the committer (`MDB_WRITEMAP` only).
//!
//! Under `MDB_WRITEMAP` LMDB writes pages straight into the shared map, so the first write to
//! each page past the file's used end is a page fault that reads the (sparse, zero) file page
//! and makes the file system reserve a block. On a growing database that is ~10% of a large
//! transaction's time (Q's add-all: ~1,750 new pages, ~2-4 us each), all of it on the
//! committer, the serial part. The warmer takes it off: at the start of a batch the committer
//! names the region the batch will likely grow into, and a helper thread faults it in with
//! `madvise(MADV_POPULATE_WRITE)` while the committer is still resolving the batch. It only
//! faults pages in; it never changes a byte, so racing with LMDB's own writes to those pages
//! is harmless, and a wrong guess costs nothing but the work.
//!
//! The only hazard is the map moving: a resize unmaps it. `remap` (held by `EnvCore::grow_to`
//! around the resize) excludes the helper's `madvise`, and bumps a generation so a request
//! computed against the old address is dropped.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use crate::limits;

/// A region to fault in, computed against the map at `base` in generation `generation`.
struct Region {
    generation: u64,
    base: usize,
    from: usize,
    to: usize,
}

/// State shared by the committer side and the helper thread.
#[derive(Default)]
struct Shared {
    /// Held while the map is being resized, and by the helper while it faults pages in.
    remap: Mutex<()>,
    generation: AtomicU64,
    /// Byte offset up to which the current mapping has been asked to be faulted in.
    warmed_to: AtomicUsize,
}

/// The warmer of one environment; dropping it stops the helper (before the map goes away:
/// `EnvCore` declares it ahead of the environment).
pub(crate) struct Warmer {
    shared: Arc<Shared>,
    sender: Option<Sender<Region>>,
    helper: Option<JoinHandle<()>>,
}

impl Warmer {
    /// A warmer with its helper thread, for an environment opened with `MDB_WRITEMAP`.
    pub(crate) fn start() -> std::io::Result<Warmer> {
        let shared = Arc::new(Shared::default());
        // Requests beyond one pending are stale by the time the helper gets to them.
        let (sender, receiver) = crossbeam_channel::bounded(2);
        let for_helper = shared.clone();
        let helper = std::thread::Builder::new()
            .name("datalith-warmer".into())
            .spawn(move || run(&for_helper, &receiver))?;
        Ok(Warmer {
            shared,
            sender: Some(sender),
            helper: Some(helper),
        })
    }

    /// Asks for the region `[used, used + ahead)` of the map (`map_bytes` long, at the address
    /// `base()` gives) to be faulted in, `ahead` derived from the batch's expected bytes. Does
    /// nothing while at least half of that is already asked for, so a stream of small batches
    /// wakes the helper once per half window, not once per batch. Never blocks.
    pub(crate) fn ahead(
        &self,
        map_bytes: usize,
        used: usize,
        batch_bytes: usize,
        base: impl FnOnce() -> Option<usize>,
    ) {
        let ahead = batch_bytes
            .saturating_mul(limits::WARM_AHEAD_PER_BATCH_BYTE)
            .clamp(limits::WARM_AHEAD_MIN_BYTES, limits::WARM_AHEAD_MAX_BYTES);
        let warmed_to = self.shared.warmed_to.load(Ordering::Acquire);
        if warmed_to >= used.saturating_add(ahead / 2) {
            return;
        }
        let to = used.saturating_add(ahead).min(map_bytes);
        let from = used.max(warmed_to);
        if from >= to {
            return;
        }
        let Some(base) = base() else { return };
        let region = Region {
            generation: self.shared.generation.load(Ordering::Acquire),
            base,
            from,
            to,
        };
        if let Some(s) = &self.sender {
            if s.try_send(region).is_ok() {
                self.shared.warmed_to.store(to, Ordering::Release);
            }
        }
    }

    /// Held around a resize of the map: no `madvise` runs meanwhile, and every request made
    /// against the old mapping is dropped.
    pub(crate) fn remapping(&self) -> RemapGuard<'_> {
        let guard = self.shared.remap.lock().unwrap_or_else(|p| p.into_inner());
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
        self.shared.warmed_to.store(0, Ordering::Release);
        RemapGuard { _guard: guard }
    }
}

/// See [`Warmer::remapping`].
pub(crate) struct RemapGuard<'a> {
    _guard: MutexGuard<'a, ()>,
}

impl Drop for Warmer {
    fn drop(&mut self) {
        self.sender.take();
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

fn run(shared: &Shared, receiver: &Receiver<Region>) {
    while let Ok(region) = receiver.recv() {
        let _guard = shared.remap.lock().unwrap_or_else(|p| p.into_inner());
        if region.generation != shared.generation.load(Ordering::Acquire) {
            continue;
        }
        populate_write(region.base + region.from, region.to - region.from);
    }
}

/// `MADV_POPULATE_WRITE` (Linux 5.14); not in every libc's constants.
#[cfg(target_os = "linux")]
const MADV_POPULATE_WRITE: libc::c_int = 23;

#[cfg(target_os = "linux")]
fn populate_write(addr: usize, len: usize) {
    // SAFETY: MADV_POPULATE_WRITE faults pages in writable without changing a byte of them,
    // so it cannot break any memory of this process whatever the range. The range is meant to
    // lie in the environment's current mapping (computed from a page of it and its size; a
    // resize cannot run while we hold the remap lock), but its base derives from a page number
    // read from the file: were that corrupt, the call would at worst fault in other memory of
    // ours or fail with ENOMEM on unmapped addresses. Errors (also EINVAL from kernels before
    // 5.14) are ignored: the warmer is a hint.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, MADV_POPULATE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn populate_write(_addr: usize, _len: usize) {}
