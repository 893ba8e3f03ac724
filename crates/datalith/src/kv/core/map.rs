//! The memory map's size, address and growth: the map an environment opens with, sizes in
//! whole pages, the OS page size, where the map is (a hint for the warmer), and growing it
//! (only while no snapshot of this process is open: the gate).

use std::sync::atomic::Ordering;

use super::EnvCore;
use crate::kv::durability::EnvOptions;
use crate::kv::error::KvError;
use crate::kv::flush::Flushing;
use crate::kv::gate::StillOpen;
use crate::kv::lmdb::{self, Dbi, EnvFlags};
use crate::kv::table::META_MAGIC_KEY;
use crate::kv::warm::Warmer;
use crate::limits;

/// The map to open with. `initial_map_bytes: 0` (the default) asks for a map chosen here:
/// where LMDB maps the file read-only (every mode but `MDB_WRITEMAP`), a map is only
/// reserved address space (no memory, no disk, no page tables until pages are read), so the
/// default reserves `limits::RESERVED_MAP_BYTES` and the map practically never has to grow,
/// which is what lets a snapshot be held for hours without ever stopping a writer. Under
/// `MDB_WRITEMAP` LMDB sets the file's length to the map's (a sparse file, but one that
/// every copy and backup tool sees at full length), so there the map starts at
/// `limits::DEFAULT_INITIAL_MAP_BYTES` and doubles as the data grows.
pub(crate) fn initial_map_bytes(options: &EnvOptions, flags: EnvFlags) -> usize {
    match options.initial_map_bytes {
        0 if flags.contains(EnvFlags::WRITE_MAP) => limits::DEFAULT_INITIAL_MAP_BYTES,
        0 => limits::RESERVED_MAP_BYTES,
        n => n,
    }
}

/// `n` rounded up to a multiple of `page`.
pub(crate) fn round_up(n: usize, page: usize) -> usize {
    n.div_ceil(page) * page
}

/// The address of the memory map, which LMDB does not report (`me_mapaddr` is only set for
/// `MDB_FIXEDMAP`): the meta table's magic lives on a page of the map, and every LMDB page
/// begins with its own page number. Only a hint for the warmer, so checked for plausibility,
/// and `None` when implausible.
pub(crate) fn map_base(
    txn: &lmdb::RwTxn,
    meta: Dbi,
    page_bytes: usize,
    map_bytes: usize,
) -> Option<usize> {
    let value = txn.get(meta, META_MAGIC_KEY).ok()??;
    let page = (value.as_ptr() as usize) & !(page_bytes - 1);
    // SAFETY: `page` is the start of the OS page holding `value`, which LMDB returned from the
    // map: at least a page header is readable there. An LMDB page header starts with the
    // page number (`pgno_t`, a `size_t`).
    let pgno = unsafe { std::ptr::read(page as *const usize) };
    let offset = pgno.checked_mul(page_bytes)?;
    if offset >= map_bytes {
        return None;
    }
    page.checked_sub(offset)
}

/// The OS page size (4096 when it cannot be read).
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

impl EnvCore {
    pub(crate) fn used_bytes(&self) -> usize {
        let pages = self.env.info().last_page_number + 1;
        self.used_pages.store(pages, Ordering::Relaxed);
        pages * self.page_bytes
    }

    /// Pages the file used as of the last look (cheap: no LMDB call).
    pub(crate) fn used_pages(&self) -> usize {
        self.used_pages.load(Ordering::Relaxed)
    }

    /// Before a batch: make sure the map has room for roughly `bytes` more (LMDB needs about
    /// twice the payload in pages while copying on write), growing if needed.
    pub(crate) fn ensure_room(&self, bytes: usize) -> Result<(), KvError> {
        let need = self.used_bytes() + 3 * bytes + 64 * self.page_bytes;
        if need > self.map_bytes.load(Ordering::Acquire) {
            return self.grow_to(need, true);
        }
        Ok(())
    }

    /// At the start of a batch of about `bytes` (its size hint), under `MDB_WRITEMAP`: has the
    /// warmer fault in the region past the used end that the batch will likely write.
    pub(crate) fn warm_ahead(&self, txn: &lmdb::RwTxn, bytes: usize) {
        let Some(warmer) = &self.warmer else { return };
        let map = self.map_bytes.load(Ordering::Acquire);
        warmer.ahead(map, self.used_bytes(), bytes, || {
            map_base(txn, self.meta, self.page_bytes, map)
        });
    }

    /// Around the commit of a batch that staged `ops` operations: has the flusher start
    /// write-back of the commit's pages while LMDB writes them, if the batch is large enough to
    /// be worth it. Write-back stops when the guard is dropped.
    pub(crate) fn flush_ahead(&self, ops: usize) -> Option<Flushing<'_>> {
        let flusher = self.flusher.as_ref()?;
        (ops >= limits::FLUSH_AHEAD_MIN_OPS).then(|| flusher.during_commit())
    }

    /// Whether the map is getting full (an early growth is due).
    pub(crate) fn map_getting_full(&self) -> bool {
        let map = self.map_bytes.load(Ordering::Acquire);
        let free = map.saturating_sub(self.used_bytes()) as f64 / map as f64;
        free < limits::MAP_GROW_WHEN_FREE_BELOW
    }

    /// After a commit: grow early, while no reader is open, if the map is getting full.
    pub(crate) fn after_commit(&self) {
        let map = self.map_bytes.load(Ordering::Acquire);
        if self.map_getting_full() {
            // Opportunistic: skipped if a reader is open; a later commit will try again.
            let _ = self.grow_to(map + 1, false);
        }
    }

    /// Grows the map (doubling); `forced` waits for readers to close.
    pub(crate) fn grow_map(&self, forced: bool) -> Result<(), KvError> {
        let map = self.map_bytes.load(Ordering::Acquire);
        self.grow_to(map + 1, forced)
    }

    fn grow_to(&self, at_least: usize, forced: bool) -> Result<(), KvError> {
        let current = self.map_bytes.load(Ordering::Acquire);
        if current >= limits::MAX_MAP_BYTES {
            return Err(KvError::MapLimit {
                max: limits::MAX_MAP_BYTES,
            });
        }
        let mut target = current.max(self.page_bytes);
        while target < at_least {
            target = target.saturating_mul(2);
        }
        let target = round_up(target.min(limits::MAX_MAP_BYTES), self.page_bytes);
        let resize = || {
            // The warmer must not fault pages of the mapping being replaced.
            let _remap = self.warmer.as_ref().map(Warmer::remapping);
            // SAFETY: LMDB allows `mdb_env_set_mapsize` only while this process has no open
            // transaction. The committer is the only writer and calls this between
            // transactions; the reader gate guarantees no read transaction is open while
            // `resize` runs.
            let resize = || unsafe { self.env.resize(target) };
            match &self.wal {
                Some(wal) => wal.around_resize(&self.env, resize),
                None => resize(),
            }
        };
        let result = if forced {
            // Snapshots kept only for reports would make this wait forever if their holder
            // waits for this commit: let them go.
            self.retained.release_all();
            match self.gate.exclusive(self.growth_patience, resize) {
                Ok(r) => Some(r),
                Err(StillOpen(oldest)) => {
                    return Err(KvError::SnapshotBlocksGrowth {
                        age_ms: oldest.age.as_millis() as u64,
                        open_snapshots: oldest.open_snapshots,
                        waited_ms: self.growth_patience.as_millis() as u64,
                    })
                }
            }
        } else {
            self.gate.try_exclusive(resize)
        };
        match result {
            None => Ok(()),
            Some(Ok(())) => {
                self.map_bytes.store(target, Ordering::Release);
                self.stats.map_growths.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Some(Err(e)) => Err(KvError::from(e)),
        }
    }
}
