//! The memory map's size and address: the map an environment opens with, sizes in whole
//! pages, the OS page size, and where the map is (a hint for the warmer).

use super::catalog::META_MAGIC_KEY;
use super::EnvOptions;
use crate::kv::lmdb::{self, Dbi, EnvFlags};
use crate::limits;

/// The map to open with. `initial_map_bytes: 0` (the default) asks for a map chosen here:
/// where LMDB maps the file read-only (every mode but `MDB_WRITEMAP`), a map is only
/// reserved address space (no memory, no disk, no page tables until pages are read), so the
/// default reserves `limits::RESERVED_MAP_BYTES` and the map practically never has to grow,
/// which is what lets a snapshot be held for hours without ever stopping a writer. Under
/// `MDB_WRITEMAP` LMDB sets the file's length to the map's (a sparse file, but one that
/// every copy and backup tool sees at full length), so there the map starts at
/// `limits::DEFAULT_INITIAL_MAP_BYTES` and doubles as the data grows.
pub(super) fn initial_map_bytes(options: &EnvOptions, flags: EnvFlags) -> usize {
    match options.initial_map_bytes {
        0 if flags.contains(EnvFlags::WRITE_MAP) => limits::DEFAULT_INITIAL_MAP_BYTES,
        0 => limits::RESERVED_MAP_BYTES,
        n => n,
    }
}

/// `n` rounded up to a multiple of `page`.
pub(super) fn round_up(n: usize, page: usize) -> usize {
    n.div_ceil(page) * page
}

/// The address of the memory map, which LMDB does not report (`me_mapaddr` is only set for
/// `MDB_FIXEDMAP`): the meta table's magic lives on a page of the map, and every LMDB page
/// begins with its own page number. Only a hint for the warmer, so checked for plausibility,
/// and `None` when implausible.
pub(super) fn map_base(
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
pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::map_base;
    use crate::kv::env::Environment;
    use crate::kv::{Durability, EnvOptions};
    use std::sync::atomic::Ordering;

    /// The warmer's map address is where the kernel mapped `data.mdb`.
    #[test]
    fn map_base_is_the_start_of_the_data_file_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(
            dir.path(),
            EnvOptions::with_durability(Durability::WriteMapAsync),
        )
        .unwrap();
        let shared = env.shared();
        let map = shared.map_bytes.load(Ordering::Acquire);
        let txn = shared.env.write_txn().unwrap();
        let base = map_base(&txn, shared.meta, shared.page_bytes, map).expect("a plausible base");
        drop(txn);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let data_file = dir.path().join("data.mdb");
        let line = maps
            .lines()
            .find(|l| l.ends_with(&*data_file.to_string_lossy()))
            .expect("data.mdb is mapped");
        let (start, end) = line.split_once(' ').unwrap().0.split_once('-').unwrap();
        let start = usize::from_str_radix(start, 16).unwrap();
        let end = usize::from_str_radix(end, 16).unwrap();
        assert_eq!(base, start, "{line}");
        assert_eq!(end - start, map, "{line}");
    }
}
