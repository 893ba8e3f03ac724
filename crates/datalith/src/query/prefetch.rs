//! Cache hints for loops over data too large for the cache: a row loop reads each row's values
//! through a pointer (each row is its own allocation), and a column scan writes cells in an
//! order the hardware's own prefetcher cannot guess.

/// How many rows ahead a row loop asks for a row's values: far enough that the line arrives
/// before the loop reaches it (a row's step takes tens of nanoseconds, a miss about a hundred),
/// near enough that it is still cached then.
pub(crate) const ROWS_AHEAD: usize = 8;

/// Rows from which a row loop asks ahead: fewer rows' values mostly sit in the cache already
/// (a few hundred KiB), and the asking is then only cost (workload Q's `qpred1`, 10,088 rows:
/// 3-5% slower with it).
pub(crate) const PREFETCH_FROM_ROWS: usize = 16 * 1024;

/// Asks the CPU to bring the cache line at `p` in ahead of its use (a hint: nothing is
/// read, so any address will do).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads no memory and cannot fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// In a loop over `rows` at row `i`: asks for the values of the row `ROWS_AHEAD` places on,
/// when there are at least `PREFETCH_FROM_ROWS` rows (each row is its own allocation), all
/// of them: a row of a dozen values spans six cache lines, and the loops that take whole
/// rows (moving, copying or projecting them) read every one.
#[inline(always)]
pub(crate) fn row_ahead<T>(rows: &[Vec<T>], i: usize) {
    if rows.len() >= PREFETCH_FROM_ROWS {
        if let Some(next) = rows.get(i + ROWS_AHEAD) {
            prefetch_all(next);
        }
    }
}

/// As [`row_ahead`], for a loop that reads only column `c` of each row: that value's line.
#[inline(always)]
pub(crate) fn cell_ahead<T>(rows: &[Vec<T>], i: usize, c: usize) {
    if rows.len() >= PREFETCH_FROM_ROWS {
        if let Some(next) = rows.get(i + ROWS_AHEAD) {
            prefetch(next.as_ptr().wrapping_add(c));
        }
    }
}

/// Asks for every cache line of `items`.
#[inline(always)]
pub(crate) fn prefetch_all<T>(items: &[T]) {
    let start = items.as_ptr() as *const u8;
    let bytes = std::mem::size_of_val(items);
    let mut at = 0;
    while at < bytes {
        prefetch(start.wrapping_add(at));
        at += 64;
    }
}
