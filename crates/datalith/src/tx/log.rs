//! The transaction log as data (Datomic's `tx-range`): the net datoms of each transaction,
//! kept in the store's `tx_log` table under the transaction's entity id, written in the same
//! LMDB transaction as the indexes (so the log and the indexes never disagree).
//!
//! An entry's bytes (big-endian): `count u32`, then per datom `entity u64 | added u8 |
//! av_len u32 | av bytes` (`tx::av`: attribute id ++ the value's full encoding, giants
//! included). A replica can apply entries in key order to rebuild the indexes: each holds
//! everything its transaction changed, attribute installations included.

use std::ops::Bound;

use super::datoms::NetDatoms;
use crate::codec;
use crate::kv::{Direction, View};
use crate::store::datom::Datom;
use crate::store::ids::EntityId;
use crate::store::keys::ATTR_BYTES;
use crate::store::schema::builtin::TX_INSTANT;
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

/// Appends the log entry of `datoms` to `out`.
pub fn encode_entry(datoms: &NetDatoms, out: &mut Vec<u8>) {
    out.extend_from_slice(&(datoms.len() as u32).to_be_bytes());
    for (d, av) in datoms.iter() {
        out.extend_from_slice(&d.e.to_be_bytes());
        out.push(d.added as u8);
        out.extend_from_slice(&(av.len() as u32).to_be_bytes());
        out.extend_from_slice(av);
    }
}

/// Decodes the entry of transaction `tx` (bytes from disk: every length is checked).
pub fn decode_entry(tx: EntityId, b: &[u8]) -> Result<TxLogEntry, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt {
        detail: format!("tx log entry {tx}: {what}"),
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
        let added = match take(&mut at, 1)?[0] {
            0 => false,
            1 => true,
            _ => return Err(corrupt("added flag neither 0 nor 1")),
        };
        let len = u32::from_be_bytes(take(&mut at, 4)?.try_into().unwrap_or_default()) as usize;
        let av = take(&mut at, len)?;
        if av.len() < ATTR_BYTES {
            return Err(corrupt("attribute missing"));
        }
        let a = u32::from_be_bytes(av[..ATTR_BYTES].try_into().unwrap_or_default());
        let v = codec::decode_exact(&av[ATTR_BYTES..])?;
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

/// The log entries of transactions `start <= tx < end` (either bound open when `None`), in
/// transaction order, as of `view`. Empty when the store keeps no log.
pub fn tx_range(
    view: View<'_>,
    tables: &Tables,
    start: Option<EntityId>,
    end: Option<EntityId>,
) -> Result<Vec<TxLogEntry>, StoreError> {
    let Some(log) = &tables.tx_log else {
        return Ok(Vec::new());
    };
    let (lo, hi) = (start.map(u64::to_be_bytes), end.map(u64::to_be_bytes));
    let lower = lo
        .as_ref()
        .map_or(Bound::Unbounded, |k| Bound::Included(&k[..]));
    let upper = hi
        .as_ref()
        .map_or(Bound::Unbounded, |k| Bound::Excluded(&k[..]));
    let mut out = Vec::new();
    for entry in view.range(log, lower, upper, Direction::Forward)? {
        let (k, v) = entry?;
        let tx = <[u8; 8]>::try_from(k)
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::Corrupt {
                detail: format!("tx log key of {} bytes", k.len()),
            })?;
        out.push(decode_entry(tx, v)?);
    }
    Ok(out)
}
