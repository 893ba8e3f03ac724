//! The global allocator of Datalith's programs (`datalith`, so `datalith serve`, and
//! `datalith-bench`): mimalloc, entered through its plain `mi_malloc` wherever that already
//! gives the alignment a layout asks for. A library does not choose its users' allocator:
//! `datalith` itself does not depend on this crate; a program opts in with
//! `#[global_allocator] static GLOBAL: datalith_alloc::Allocator = datalith_alloc::Allocator;`.
//!
//! Why mimalloc at all: the Datalog pipeline allocates many small short-lived buffers; glibc's
//! allocator (consolidation, chunk unlinking) was a fifth of the committer's time, and a query
//! that builds thousands of rows runs about twice as fast (q1 of workload Q on 20,000 people:
//! 160 us with glibc's, 86 us with this one, in one process on this machine).
//!
//! Why not `mimalloc::MiMalloc` as it is: it sends every request through `mi_malloc_aligned`.
//! When the size class's free list is empty (every run of a query that builds thousands of rows
//! empties it), mimalloc's aligned path does not refill the list the way `mi_malloc` does; it
//! over-allocates `size + alignment` and aligns inside, on a slower path. `Value` holds an
//! `i128`, so its alignment is 16 and every row vector took that path: in callgrind a quarter
//! of q1's instructions were spent there.
//!
//! `mi_malloc` returns blocks aligned to at least 16 bytes when the size is a multiple of 16 and
//! to the size's largest power of two below that, so for `align <= 16` the plain call is
//! usually right; the pointer is checked, and a misaligned block is freed and the request is
//! made again through the aligned entry (never taken in practice, kept for correctness).

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_long, c_void};

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e` of the v3 sources this
/// crate builds; `libmimalloc-sys` exports no name for it). A test pins it by its default.
const MI_OPTION_PURGE_DELAY: c_int = 15;

extern "C" {
    // In the mimalloc library `libmimalloc-sys` links (its "extended" API, declared here
    // rather than pulled in with that feature's extra dependency).
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_option_set(option: c_int, value: c_long);
}

/// How long memory the program freed is kept for its own next allocations before it goes
/// back to the operating system (mimalloc's "purge"; its own default is 1 s).
///
/// Why longer: a large query takes hundreds of megabytes of rows and columns and frees them
/// as it goes; handed back a second later, the next step or the next query gets them again
/// as fresh pages, each zeroed by the kernel at its first touch. On TPC-H at scale factor 1
/// page faults were a fifth of the profile of Q18's first step: four runs took 917,000 with
/// a 1 s delay, 356,000 with 10 s (as many as never handing memory back), and the queries
/// ran, median of two passes: Q3 421 -> 191 ms, Q18 2,026 -> 1,064 ms, Q1 4,617 -> 3,752 ms.
///
/// The cost: memory a program stopped using stays resident 10 s longer (a server going idle
/// returns it then). `MIMALLOC_PURGE_DELAY` in the environment (mimalloc's own setting, in
/// milliseconds; -1 never) decides instead when it is set.
pub const KEEP_FREED_MS: c_long = 10_000;

/// Sets mimalloc's purge delay to [`KEEP_FREED_MS`] unless the environment sets it; a
/// program's `main` calls it first.
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's options may be set at any time, from any thread.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, KEEP_FREED_MS) };
    }
}

/// mimalloc's purge delay now, in milliseconds (-1: never).
pub fn purge_delay_ms() -> c_long {
    // SAFETY: reads an option.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}

/// The largest alignment `mi_malloc` is asked to satisfy on its own (mimalloc's
/// `MI_MAX_ALIGN_SIZE`).
const PLAIN_ALIGN: usize = 16;

/// mimalloc through its unaligned fast path where the alignment allows (see the module docs).
pub struct Allocator;

fn aligned(p: *mut c_void, align: usize) -> bool {
    (p as usize) & (align - 1) == 0
}

unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        if align <= PLAIN_ALIGN {
            // SAFETY: plain FFI allocation; the block is checked before it is returned.
            let p = unsafe { mi::mi_malloc(size) };
            if p.is_null() || aligned(p, align) {
                return p as *mut u8;
            }
            unsafe { mi::mi_free(p) };
        }
        // SAFETY: `align` is a power of two (a `Layout` guarantees it).
        unsafe { mi::mi_malloc_aligned(size, align) as *mut u8 }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`; mimalloc's zeroing entry has the same alignment rule.
        unsafe { mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (mimalloc frees aligned and plain blocks alike).
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if align <= PLAIN_ALIGN {
            // SAFETY: `ptr` came from this allocator; on a misaligned result the block is
            // moved once more through the aligned entry, which keeps the contents.
            let p = unsafe { mi::mi_realloc(ptr as *mut c_void, new_size) };
            if p.is_null() || aligned(p, align) {
                return p as *mut u8;
            }
            return unsafe { mi::mi_realloc_aligned(p, new_size, align) as *mut u8 };
        }
        // SAFETY: as above.
        unsafe { mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) as *mut u8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `MI_OPTION_PURGE_DELAY` names the purge delay: its default in mimalloc v3 is 1,000 ms
    /// (another option at that place would have another default), and keeping freed memory
    /// sets it to `KEEP_FREED_MS`.
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        assert_eq!(purge_delay_ms(), 1000);
        keep_freed_memory();
        assert_eq!(purge_delay_ms(), KEEP_FREED_MS);
    }

    /// Every (size, alignment) a Rust program asks for comes back aligned and usable, through
    /// alloc, realloc up and down, and free.
    #[test]
    fn blocks_are_aligned_and_keep_their_contents() {
        let a = Allocator;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 8, 16, 24, 32, 48, 96, 1000, 70_000] {
                let size = size.max(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    p.write_bytes(0xAB, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc size {size} align {align}");
                    assert_eq!(*q.add(size - 1), 0xAB);
                    let r = a.realloc(q, Layout::from_size_align(size * 3, align).unwrap(), size);
                    assert_eq!(r as usize % align, 0);
                    assert_eq!(*r, 0xAB);
                    a.dealloc(r, layout);
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
