//! LMDB's free-page table read directly: how many pages commits freed after a given
//! transaction. For the checkpointer (pages it may soon let LMDB reuse, `wal::checkpoint`) and
//! `stat` (the data file's free pages).

use super::cursor::Op;
use super::{Cursor, Dbi, Env, LmdbError};

/// LMDB's free-page table: its handle 0 in every transaction.
const FREE_DBI: Dbi = Dbi(0);

/// Why the free list could not be counted.
#[derive(Debug)]
pub(crate) enum Freed {
    Lmdb(LmdbError),
    /// An entry too short to hold its count (its length).
    Entry(usize),
}

impl From<LmdbError> for Freed {
    fn from(e: LmdbError) -> Freed {
        Freed::Lmdb(e)
    }
}

/// The pages LMDB's free list holds under the transactions after `after` (the pages each
/// freed), and the last such transaction (`after` when there is none), in the newest
/// committed state. Pages freed after a snapshot that is still held cannot be reused while
/// it is: the checkpointer counts them (`wal::checkpoint`).
pub(crate) fn freed_after(env: &Env, after: u64) -> Result<(u64, u64), Freed> {
    const WORD: usize = std::mem::size_of::<usize>();
    let txn = env.read_txn()?;
    let mut cursor = Cursor::open(&txn, FREE_DBI)?;
    let (mut pages, mut last) = (0u64, after);
    // Keys are transaction ids as native `size_t` (`MDB_INTEGERKEY`).
    let from = usize::try_from(after.saturating_add(1)).unwrap_or(usize::MAX);
    let mut next = cursor.seek(&from.to_ne_bytes())?;
    while let Some((key, value)) = next {
        // An entry's value is a list of page numbers led by their count, each a native
        // `size_t` (LMDB's `MDB_IDL`).
        let word = |b: &[u8]| b.get(..WORD)?.try_into().ok().map(usize::from_ne_bytes);
        let count = word(value).ok_or(Freed::Entry(value.len()))?;
        pages += count as u64;
        last = last.max(word(key).map_or(last, |k| k as u64));
        next = cursor.step(Op::Next)?;
    }
    Ok((pages, last))
}
