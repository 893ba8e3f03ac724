//! Stack for recursion whose depth the caller's input decides: clauses nested in clauses
//! (`or`, `not`, their `-join` forms), rules calling rules, pull patterns following references.
//! Such recursion runs on whatever stack the calling thread has (2 MiB for a Rust or tokio
//! thread: one level of nested `or`s took ~36 KiB of the executor's in an unoptimized build,
//! and a release server's request thread overflowed between 300 and 500 levels, measured
//! 2026-12-07), and running out of stack aborts the whole process (a server with it), where
//! every other bad input is a typed error. So each recursive step
//! asks for a red zone first and continues on a segment of its own when the thread has less
//! left (`stacker`, the crate rustc uses for the same reason). What bounds such recursion is
//! then the input and the query's budget, never the thread it happens to run on.

use crate::limits::{STACK_RED_ZONE_BYTES, STACK_SEGMENT_BYTES};

/// Runs `f` with at least [`STACK_RED_ZONE_BYTES`] of stack left: on the caller's stack when
/// it has that much, else on a new segment of [`STACK_SEGMENT_BYTES`], freed when `f` returns.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE_BYTES, STACK_SEGMENT_BYTES, f)
}

#[cfg(test)]
mod tests {
    use super::deep;

    /// Far deeper than any thread's own stack holds at a kilobyte a level.
    fn depth(n: u32) -> u32 {
        let pad = std::hint::black_box([0u8; 1024]);
        match n {
            0 => u32::from(pad[0]),
            _ => deep(|| depth(n - 1)) + 1,
        }
    }

    #[test]
    fn recursion_deeper_than_the_threads_stack_completes() {
        let small = std::thread::Builder::new().stack_size(256 * 1024);
        let got = small.spawn(|| depth(100_000)).unwrap().join().unwrap();
        assert_eq!(got, 100_000);
    }
}
