//! Counters of tallied ops ([`Stage::list_change_tallied`](super::Stage::list_change_tallied)):
//! per tally, the keys its ops created minus the keys they emptied, as LMDB itself reported while
//! applying them.
//!
//! Each counter is an `i64` (big-endian) in the environment's meta table under `tally/` and the
//! tally (`u32`, big-endian). It is updated in the very LMDB transaction that applies the ops
//! (the committer's own commit, the applier's, recovery's replay), so it always counts exactly
//! what LMDB holds: a snapshot's counter plus what its overlay changes is the count of the state
//! it shows. Writers therefore never look up whether a key exists before writing it.

use super::lmdb::{Dbi, LmdbError, PutFlags, RwTxn};

const PREFIX: &[u8] = b"tally/";

/// The meta-table key of `tally`'s counter.
pub(crate) fn key(tally: u32) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..6].copy_from_slice(PREFIX);
    k[6..].copy_from_slice(&tally.to_be_bytes());
    k
}

/// A counter's stored bytes as its value; `None` if they are not one.
pub fn decode(bytes: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(bytes.try_into().ok()?))
}

/// Adds each `(tally, delta)` to its counter, in `txn` (before its commit). A stored counter
/// that is not 8 bytes is damage (`MDB_CORRUPTED`): the commit fails rather than guess.
pub(crate) fn add(txn: &mut RwTxn, meta: Dbi, tallies: &[(u32, i64)]) -> Result<(), LmdbError> {
    for &(tally, delta) in tallies {
        if delta == 0 {
            continue;
        }
        let k = key(tally);
        let old = match txn.get(meta, &k)? {
            None => 0,
            Some(b) => decode(b).ok_or(LmdbError {
                code: LmdbError::CORRUPTED,
            })?,
        };
        txn.put(meta, &k, &(old + delta).to_be_bytes(), PutFlags::NONE)?;
    }
    Ok(())
}
