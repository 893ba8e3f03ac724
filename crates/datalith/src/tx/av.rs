//! `attribute id ++ encoded value` bytes ("av bytes"): how the transaction stages name a datom's
//! attribute and value. They are the EAV list value and the AVE key of the datom (after
//! shrinking, for a value too long to index inline), so a value is encoded once per
//! transaction and the same bytes serve the overlay, the uniqueness checks and the writes.

use std::borrow::Cow;

use crate::codec::{self, Value};
use crate::limits::MAX_INLINE_VALUE_BYTES;
use crate::store::ids::{AttrId, EntityId};
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::IndexReader;
use crate::store::StoreError;

/// Av bytes, kept inline up to [`AV_INLINE_BYTES`]: most attribute values are short, and a
/// transaction encodes one per datom (an `add-all` of 100K datoms made as many allocations,
/// and its caller as many frees).
pub type AvBytes = smallvec::SmallVec<[u8; AV_INLINE_BYTES]>;

/// Av bytes up to this length need no allocation (an attribute id and a short value).
pub const AV_INLINE_BYTES: usize = 24;

/// The av bytes of `(a, v)`.
pub fn av(a: AttrId, v: &Value) -> AvBytes {
    let n = ATTR_BYTES + codec::encoded_len(v);
    if n > AV_INLINE_BYTES {
        let mut b = Vec::with_capacity(n);
        keys::attr_prefix(a, &mut b);
        codec::encode(v, &mut b);
        return AvBytes::from_vec(b);
    }
    // The encoder writes to a `Vec`: a short value goes through this thread's scratch one.
    SCRATCH.with_borrow_mut(|b| {
        b.clear();
        keys::attr_prefix(a, b);
        codec::encode(v, b);
        AvBytes::from_slice(b)
    })
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> =
        std::cell::RefCell::new(Vec::with_capacity(AV_INLINE_BYTES));
}

/// Whether av bytes are their own index key (the value is not a giant).
#[inline]
pub fn is_inline(av: &[u8]) -> bool {
    av.len() <= ATTR_BYTES + MAX_INLINE_VALUE_BYTES
}

/// The index form of av bytes (the AVE key, the EAV list value): the bytes themselves unless
/// the value is a giant.
pub fn index_key(av: &[u8]) -> Cow<'_, [u8]> {
    if is_inline(av) {
        return Cow::Borrowed(av);
    }
    let mut k = av.to_vec();
    codec::index_key::shrink_to_index_key(&mut k, ATTR_BYTES);
    Cow::Owned(k)
}

/// The lowest entity whose AVE key is `key` (an index key): one B-tree lookup.
pub fn first_holder(r: &IndexReader<'_>, key: &[u8]) -> Result<Option<EntityId>, StoreError> {
    match r.view.get(&r.t.ave, key)? {
        None => Ok(None),
        Some(raw) => match keys::read_entity(raw) {
            Some(e) => Ok(Some(e)),
            None => Err(StoreError::Corrupt {
                detail: format!("AVE entity: {} bytes", raw.len()),
            }),
        },
    }
}

/// Whether entity `e` holds the datom whose index key (EAV list value) is `key`.
pub fn holds(r: &IndexReader<'_>, e: EntityId, key: &[u8]) -> Result<bool, StoreError> {
    Ok(r.view.list_contains(&r.t.eav, &keys::eav_key(e), key)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_keys_match_the_readers_encoding() {
        let long = "x".repeat(MAX_INLINE_VALUE_BYTES + 40);
        // Strings around `AV_INLINE_BYTES`: av bytes kept inline and allocated alike.
        let around: Vec<Value> = (14..24).map(|n| Value::string(&"y".repeat(n))).collect();
        for v in [
            Value::Long(-3),
            Value::string("a\0b"),
            Value::string(&long),
            Value::Ref(1 << 20),
        ]
        .into_iter()
        .chain(around)
        {
            let mut expected = Vec::new();
            crate::store::reader::attr_value_bytes(7, &v, &mut expected);
            let b = av(7, &v);
            assert_eq!(index_key(&b).as_ref(), expected.as_slice(), "{v:?}");
            assert_eq!(is_inline(&b), b[..] == expected[..], "{v:?}");
        }
    }
}
