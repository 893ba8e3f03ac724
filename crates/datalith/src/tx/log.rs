//! The transaction log as data (Datomic's `tx-range`): the net datoms of each transaction,
//! kept in the store's `tx_log` table under the transaction's entity id, written in the same
//! LMDB transaction as the indexes (so the log and the indexes never disagree), and read back
//! one entry at a time by [`TxRange`].
//!
//! # Record format
//!
//! The `tx_log` table is a plain KV table (one value a key). All integers are big-endian.
//!
//! - **Key**: the transaction's entity id, `u64` (8 bytes). Transaction ids are handed out by
//!   the single committer in commit order (the `next_tx` counter of `store_meta` is read and
//!   bumped inside the writing LMDB transaction), so key order is commit order and a new entry
//!   always lands after every entry already committed.
//! - **Value**: `count u32`, then `count` datoms, each `entity u64 | flags u8 (0 to 3) |
//!   av_len u32 | av bytes`, where `flags` (written `added` before 2026-12-07, when it was
//!   only 0 or 1) has bit 0 set for an assertion and bit 1 set when the attribute's datoms
//!   have no AVE entries (`store::value_index`), and `av` is the attribute id (`u32`) followed by the value's
//!   full `codec` encoding (giant values inline, never a reference to the `giants` table).
//!   Every datom's transaction is the key. The datoms are the transaction's *net* changes in
//!   the order it produced them (`:db/txInstant` on the transaction entity among them), so
//!   applying them in order (assertions add `(e a v)`, retractions remove it) reproduces the
//!   transaction; attribute installations are datoms too, in the entry of the transaction
//!   that made them, so a replica that applies every entry from the first learns the schema
//!   before any datom uses it.
//!
//! # Reading it from another process
//!
//! A reader (a replica tailing the table through its own read-only LMDB environment) must:
//!
//! - Treat the bytes as untrusted, as [`decode_entry`] does: the key is exactly 8 bytes; the
//!   count is at most `len / 13` (the smallest datom is 13 bytes); each flag is 0 or 1; each
//!   `av_len` fits in what is left and holds at least the 4-byte attribute id; the value
//!   decodes to exactly `av_len - 4` bytes; no byte follows the last datom. Any failure is
//!   damage ([`StoreError::CorruptTxLogEntry`] naming the tx), never a partial apply.
//! - Check that the log is complete before relying on it alone: a database written with the
//!   log switched off (`DbOptions::skip_tx_log`) has no entries for those transactions, and a
//!   bulk load writes around the log and leaves the `tx_log_gap` key in `store_meta`. With the
//!   gap key present, a replica must start from a copy of the data file, not from the log.
//! - Resume by key: remember the last transaction id applied, `last`, and read the range
//!   `[last + 1, ∞)` from a fresh snapshot (`Database::tx_range(Some(last + 1), None)`). An
//!   entry is visible only once its whole transaction committed, and ids only grow, so
//!   nothing is skipped and nothing is seen twice. Storing `last` in the same write as the
//!   datoms applied keeps a replica's resume point exact across its own crashes.

use std::ops::Bound;

use super::datoms::NetDatoms;
use crate::codec;
use crate::kv::{Direction, ReadTxn, Table};
use crate::store::datom::Datom;
use crate::store::ids::{AttrId, EntityId};
use crate::store::keys::ATTR_BYTES;
use crate::store::schema::builtin::TX_INSTANT;
use crate::store::value_index;
use crate::store::{StoreError, Tables};

/// One transaction of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct TxLogEntry {
    /// The transaction's entity id.
    pub tx: EntityId,
    /// Its `:db/txInstant` (milliseconds since the epoch), when it has one.
    pub instant: Option<i64>,
    /// The datoms it asserted and retracted, in the order the transaction produced them.
    pub datoms: Vec<Datom>,
}

/// Appends the log entry of `datoms` to `out`; `in_ave` says which attributes' datoms have
/// AVE entries (`store::value_index`).
pub fn encode_entry(datoms: &NetDatoms, in_ave: impl Fn(AttrId) -> bool, out: &mut Vec<u8>) {
    out.extend_from_slice(&(datoms.len() as u32).to_be_bytes());
    for (d, av) in datoms.iter() {
        out.extend_from_slice(&d.e.to_be_bytes());
        out.push(value_index::log_flag_byte(d.added, in_ave(d.a)));
        out.extend_from_slice(&(av.len() as u32).to_be_bytes());
        out.extend_from_slice(av);
    }
}

/// Decodes the entry of transaction `tx` (bytes from disk: every length is checked).
pub fn decode_entry(tx: EntityId, b: &[u8]) -> Result<TxLogEntry, StoreError> {
    let corrupt = |what: &str| StoreError::CorruptTxLogEntry {
        tx,
        detail: what.to_string(),
    };
    let take = |at: &mut usize, n: usize| -> Result<&[u8], StoreError> {
        let s = b
            .get(*at..at.saturating_add(n))
            .ok_or_else(|| corrupt("ends early"))?;
        *at += n;
        Ok(s)
    };
    let mut at = 0;
    let count = u32::from_be_bytes(take(&mut at, 4)?.try_into().unwrap_or_default()) as usize;
    // Every datom takes at least 13 bytes: a larger count is damage.
    if count > b.len() / 13 {
        return Err(corrupt("datom count past its length"));
    }
    let mut datoms = Vec::with_capacity(count);
    let mut instant = None;
    for _ in 0..count {
        let e = u64::from_be_bytes(take(&mut at, 8)?.try_into().unwrap_or_default());
        let (added, _) = value_index::log_flags(take(&mut at, 1)?[0])
            .ok_or_else(|| corrupt("added flag not 0 or 1 (plus 2 without an AVE entry)"))?;
        let len = u32::from_be_bytes(take(&mut at, 4)?.try_into().unwrap_or_default()) as usize;
        let av = take(&mut at, len)?;
        if av.len() < ATTR_BYTES {
            return Err(corrupt("attribute missing"));
        }
        let a = u32::from_be_bytes(av[..ATTR_BYTES].try_into().unwrap_or_default());
        let v =
            codec::decode_exact(&av[ATTR_BYTES..]).map_err(|e| StoreError::CorruptTxLogEntry {
                tx,
                detail: format!("undecodable value: {e}"),
            })?;
        if let (true, codec::Value::Instant(ms)) = (a == TX_INSTANT && e == tx && added, &v) {
            instant = Some(*ms);
        }
        datoms.push(Datom { e, a, v, tx, added });
    }
    if at != b.len() {
        return Err(corrupt("bytes after the last datom"));
    }
    Ok(TxLogEntry {
        tx,
        instant,
        datoms,
    })
}

/// The log entries of transactions `start <= tx < end`, in transaction order, read from one
/// snapshot one entry at a time (only the entry being yielded is decoded and held).
///
/// Each step seeks the first key at or after the last one read, so the iterator holds no
/// cursor between steps, only the snapshot (and so one reader slot until it is dropped). A
/// damaged entry yields its [`StoreError::CorruptTxLogEntry`] and the iteration goes on with
/// the next transaction (the caller decides whether to stop); a key that is not a
/// transaction id ends it, since no position after it can be named.
pub struct TxRange {
    txn: Option<ReadTxn>,
    log: Option<Table>,
    /// The lowest transaction id not yet read (`None`: from the first).
    next: Option<EntityId>,
    end: Option<EntityId>,
}

impl TxRange {
    /// The entries `start <= tx < end` (a `None` bound is open) of `tables`' log as of `txn`;
    /// yields nothing when the store keeps no log.
    pub fn new(
        txn: ReadTxn,
        tables: &Tables,
        start: Option<EntityId>,
        end: Option<EntityId>,
    ) -> TxRange {
        TxRange {
            log: tables.tx_log.clone(),
            txn: Some(txn),
            next: start,
            end,
        }
    }

    fn finish(&mut self) {
        // Lets the snapshot go as soon as nothing more can be read.
        self.txn = None;
    }

    fn step(&mut self) -> Result<Option<TxLogEntry>, StoreError> {
        let (Some(txn), Some(log)) = (&self.txn, &self.log) else {
            return Ok(None);
        };
        let (lo, hi) = (
            self.next.map(u64::to_be_bytes),
            self.end.map(u64::to_be_bytes),
        );
        let lower = lo
            .as_ref()
            .map_or(Bound::Unbounded, |k| Bound::Included(&k[..]));
        let upper = hi
            .as_ref()
            .map_or(Bound::Unbounded, |k| Bound::Excluded(&k[..]));
        let view = txn.view();
        // (the key read, or None at the end; the entry decoded): decoded before the snapshot's
        // borrow ends so that the entry's bytes are never copied.
        let read = match view.range(log, lower, upper, Direction::Forward)?.next() {
            None => None,
            Some(first) => {
                let (k, v) = first?;
                Some(match <[u8; 8]>::try_from(k) {
                    Ok(key) => {
                        let tx = u64::from_be_bytes(key);
                        (Some(tx), decode_entry(tx, v))
                    }
                    Err(_) => (
                        None,
                        Err(StoreError::CorruptTxLogEntry {
                            tx: 0,
                            detail: format!("a key of {} bytes, not a transaction id", k.len()),
                        }),
                    ),
                })
            }
        };
        match read {
            None => {
                self.finish();
                Ok(None)
            }
            Some((tx, entry)) => {
                match tx.and_then(|tx| tx.checked_add(1)) {
                    Some(after) => self.next = Some(after),
                    None => self.finish(),
                }
                entry.map(Some)
            }
        }
    }
}

impl Iterator for TxRange {
    type Item = Result<TxLogEntry, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

impl std::fmt::Debug for TxRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxRange")
            .field("next", &self.next)
            .field("end", &self.end)
            .field("done", &self.txn.is_none())
            .finish()
    }
}
