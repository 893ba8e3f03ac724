//! A data file that shrinks while mapped (another program truncates it: a copy over it, a
//! careless `truncate`) makes every read of a page past the new end a `SIGBUS`, which kills
//! the process. LMDB reads its map directly, so no length check before each read is possible;
//! instead a `SIGBUS` handler, scoped to the registered maps, puts a zero page where the fault
//! was and lets the read go on, and marks the map's environment: from then on no snapshot
//! begins and no commit is acknowledged (the environment reports the shrink as corruption).
//! LMDB sees a zero page as a page of the wrong type (`MDB_CORRUPTED`), so the read that met
//! it fails in most cases; one that reads zeros as a value (an overflow page) may answer them,
//! once. A fault outside every registered map goes to the handler installed before ours (the
//! Rust runtime's, which reports stack overflows) or to the default action.
//!
//! The handler only reads atomics and calls `mmap` (a plain system call on Linux).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

const SLOTS: usize = 64;

/// One registered map: its address range, and whether it met a shrink.
struct Slot {
    taken: AtomicBool,
    base: AtomicUsize,
    len: AtomicUsize,
    shrunk: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    taken: AtomicBool::new(false),
    base: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    shrunk: AtomicBool::new(false),
};

static MAPS: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// The handler before ours and its flags (read first, then ours installed).
static PREVIOUS_HANDLER: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PREVIOUS_FLAGS: AtomicUsize = AtomicUsize::new(0);

/// A registered map; unregisters when dropped (before the map is unmapped).
pub(crate) struct MapGuard {
    slot: Option<usize>,
}

impl MapGuard {
    /// Registers the mapping of `data` (LMDB's data file, already mapped by this process).
    /// Without a free slot or a visible mapping the map goes unguarded (as before).
    pub(crate) fn register(data: &Path) -> MapGuard {
        install();
        let Some(slot) = MAPS.iter().position(|s| {
            s.taken
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        }) else {
            return MapGuard { slot: None };
        };
        let guard = MapGuard { slot: Some(slot) };
        guard.refresh(data);
        guard
    }

    /// Reads the map's address range again (after LMDB replaced the map to resize it).
    pub(crate) fn refresh(&self, data: &Path) {
        let Some(slot) = self.slot else { return };
        let (base, len) = find_mapping(data).unwrap_or((0, 0));
        let s = &MAPS[slot];
        s.base.store(0, Ordering::Release);
        s.len.store(len, Ordering::Release);
        s.base.store(base, Ordering::Release);
    }

    /// Whether a read met the end of a file that shrank while mapped.
    pub(crate) fn shrunk(&self) -> bool {
        self.slot
            .is_some_and(|s| MAPS[s].shrunk.load(Ordering::Acquire))
    }
}

impl Drop for MapGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            let s = &MAPS[slot];
            s.base.store(0, Ordering::Release);
            s.len.store(0, Ordering::Release);
            s.shrunk.store(false, Ordering::Release);
            s.taken.store(false, Ordering::Release);
        }
    }
}

/// The address range of this process's mapping of `data`, from `/proc/self/maps` (LMDB does
/// not report its map's address).
fn find_mapping(data: &Path) -> Option<(usize, usize)> {
    let inode = std::fs::metadata(data).ok()?.ino();
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let (mut start, mut end) = (usize::MAX, 0);
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(_), Some(_), Some(_), Some(ino)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if ino.parse::<u64>().ok() != Some(inode) || !line.contains("data.mdb") {
            continue;
        }
        let (a, b) = range.split_once('-')?;
        start = start.min(usize::from_str_radix(a, 16).ok()?);
        end = end.max(usize::from_str_radix(b, 16).ok()?);
    }
    (end > start).then(|| (start, end - start))
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value; the previous action is read and kept
        // before ours is installed, so the handler always finds it.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous);
            PREVIOUS_HANDLER.store(previous.sa_sigaction, Ordering::Release);
            PREVIOUS_FLAGS.store(previous.sa_flags as usize, Ordering::Release);
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_sigbus as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut ours.sa_mask);
            libc::sigaction(libc::SIGBUS, &ours, std::ptr::null_mut());
        }
    });
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &MAPS {
        let base = s.base.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if base != 0 && addr >= base && addr - base < len {
            let at = addr & !(page - 1);
            // SAFETY: replaces one page of our own map, which faulted because the file no
            // longer backs it, with a private zero page: nothing else uses that page.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                s.shrunk.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: as if we were not there.
    let handler = PREVIOUS_HANDLER.load(Ordering::Acquire);
    let flags = PREVIOUS_FLAGS.load(Ordering::Acquire) as libc::c_int;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring the default action; returning re-runs the faulting access, which
        // then takes it.
        unsafe {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        }
    } else if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed with this signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: the previous handler was installed with this signature.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}
