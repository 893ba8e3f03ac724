//! Byte layouts of the index entries. Every integer is big-endian so that `memcmp` order is
//! numeric order.
//!
//! | table | kind | key | value(s) |
//! |---|---|---|---|
//! | `eav` | list | entity id (u64) | attribute id (u32) ++ encoded value |
//! | `ave` | list | attribute id (u32) ++ encoded value | entity id (u64) |
//!
//! A value whose encoding would push an entry past LMDB's 511-byte limit is stored in the
//! `giants` table and indexed by an order-preserving prefix plus a hash (see `codec`).

use super::ids::{AttrId, EntityId};

/// Bytes of an entity id in keys.
pub const ENTITY_BYTES: usize = 8;
/// Bytes of an attribute id in keys.
pub const ATTR_BYTES: usize = 4;

/// The EAV key of entity `e`.
#[inline]
pub fn eav_key(e: EntityId) -> [u8; ENTITY_BYTES] {
    e.to_be_bytes()
}

/// Starts an `attr ++ encoded value` buffer (the EAV list value and the AVE key share it).
#[inline]
pub fn attr_prefix(a: AttrId, out: &mut Vec<u8>) {
    out.extend_from_slice(&a.to_be_bytes());
}

/// Reads an entity id from exactly 8 bytes (index values written by us; checked anyway).
#[inline]
pub fn read_entity(bytes: &[u8]) -> Option<EntityId> {
    Some(EntityId::from_be_bytes(bytes.try_into().ok()?))
}

/// Splits `attr ++ encoded value` into its parts.
#[inline]
pub fn split_attr(bytes: &[u8]) -> Option<(AttrId, &[u8])> {
    if bytes.len() < ATTR_BYTES {
        return None;
    }
    let (a, rest) = bytes.split_at(ATTR_BYTES);
    Some((AttrId::from_be_bytes(a.try_into().ok()?), rest))
}
