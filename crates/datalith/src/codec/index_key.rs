//! Index keys: the form a value takes inside the EAV and AVE indexes.
//!
//! LMDB keys and dupsort values hold at most 511 bytes, and the attribute id takes 4 of them.
//! A value whose encoding fits in [`MAX_INLINE_VALUE_BYTES`] is its own index key. A longer
//! one (a *giant*) is indexed by the first [`GIANT_PREFIX_BYTES`] of its encoding followed by
//! a 16-byte hash of the whole encoding; the full encoding lives in the store's `giants`
//! table under that hash.
//!
//! What this keeps:
//! - **Equality is exact**: equal values have equal keys, different values different keys
//!   (up to a 128-bit hash collision, which the store checks for on write).
//! - **Inline against anything is exact in order**: an inline encoding is at most as long as a
//!   giant's prefix and no encoding is a prefix of another, so the two differ inside the
//!   prefix and `memcmp` of the keys is the value order.
//! - **Giant against giant** is exact when their prefixes differ; giants sharing a prefix are
//!   ordered by hash, which is arbitrary. A range scan over such values is exact only after a
//!   full-value comparison: [`cmp_key_to_encoding`] says when one is needed and
//!   [`cmp_keys_exact`] does it.
//!
//! The kind of a stored key is told by its length alone: at most `MAX_INLINE_VALUE_BYTES` is
//! inline, exactly `MAX_INDEXED_VALUE_BYTES` is a giant, anything else is corrupt.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::decode::{decode_exact, CodecError};
use super::encode::encode;
use super::value::Value;
use crate::limits::{
    GIANT_HASH_BYTES, GIANT_PREFIX_BYTES, MAX_INDEXED_VALUE_BYTES, MAX_INLINE_VALUE_BYTES,
};

const _: () = assert!(MAX_INLINE_VALUE_BYTES <= GIANT_PREFIX_BYTES);
const _: () = assert!(GIANT_PREFIX_BYTES + GIANT_HASH_BYTES == MAX_INDEXED_VALUE_BYTES);

/// The hash naming a giant: the first 16 bytes of the BLAKE3 hash of its full encoding.
pub type GiantHash = [u8; GIANT_HASH_BYTES];

/// The hash of a full encoding.
pub fn giant_hash(full_encoding: &[u8]) -> GiantHash {
    let mut h = [0u8; GIANT_HASH_BYTES];
    h.copy_from_slice(&blake3::hash(full_encoding).as_bytes()[..GIANT_HASH_BYTES]);
    h
}

/// A giant's record for the `giants` table: its hash and full encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Giant {
    /// The key of the record (the store may put the attribute id in front).
    pub hash: GiantHash,
    /// The full encoding of the value.
    pub full: Vec<u8>,
}

/// The index form of a value, built for writing or for seeking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexKey {
    /// The encoding itself.
    Inline(Vec<u8>),
    /// A giant: `key` is `prefix ++ hash`, and `giant` the record for the `giants` table.
    Giant {
        /// The bytes that go into the index.
        key: Vec<u8>,
        /// What goes into the `giants` table.
        giant: Giant,
    },
}

/// The index key of `v`.
pub fn index_key(v: &Value) -> IndexKey {
    let mut enc = Vec::with_capacity(super::encode::encoded_len(v));
    encode(v, &mut enc);
    IndexKey::from_encoding(enc)
}

/// Appends the index key of `v` to `out` (which may already hold, say, an attribute id) and
/// returns the giant record if `v` is a giant. Allocates nothing but `out` for inline values.
pub fn encode_index_key(v: &Value, out: &mut Vec<u8>) -> Option<Giant> {
    let start = out.len();
    encode(v, out);
    shrink_to_index_key(out, start)
}

/// Turns the encoding in `out[start..]` into its index key in place; returns the giant record
/// if it was too long.
pub fn shrink_to_index_key(out: &mut Vec<u8>, start: usize) -> Option<Giant> {
    let enc = out.get(start..)?;
    if enc.len() <= MAX_INLINE_VALUE_BYTES {
        return None;
    }
    let full = enc.to_vec();
    let hash = giant_hash(&full);
    out.truncate(start + GIANT_PREFIX_BYTES);
    out.extend_from_slice(&hash);
    Some(Giant { hash, full })
}

impl IndexKey {
    /// The index key of a full encoding.
    pub fn from_encoding(mut enc: Vec<u8>) -> IndexKey {
        match shrink_to_index_key(&mut enc, 0) {
            None => IndexKey::Inline(enc),
            Some(giant) => IndexKey::Giant { key: enc, giant },
        }
    }

    /// The bytes that go into the index (after the attribute id).
    pub fn bytes(&self) -> &[u8] {
        match self {
            IndexKey::Inline(b) => b,
            IndexKey::Giant { key, .. } => key,
        }
    }

    /// The full encoding of the value.
    pub fn full_encoding(&self) -> &[u8] {
        match self {
            IndexKey::Inline(b) => b,
            IndexKey::Giant { giant, .. } => &giant.full,
        }
    }

    /// The giant record, if this is a giant.
    pub fn giant(&self) -> Option<&Giant> {
        match self {
            IndexKey::Inline(_) => None,
            IndexKey::Giant { giant, .. } => Some(giant),
        }
    }

    /// The lowest index key that may hold a value `>=` this one: for a giant, its prefix
    /// followed by sixteen 0x00 (every giant sharing the prefix, then a full comparison).
    pub fn scan_floor(&self) -> Cow<'_, [u8]> {
        self.with_hash_filled(0x00)
    }

    /// The highest index key that may hold a value `<=` this one: for a giant, its prefix
    /// followed by sixteen 0xFF.
    pub fn scan_ceiling(&self) -> Cow<'_, [u8]> {
        self.with_hash_filled(0xFF)
    }

    fn with_hash_filled(&self, fill: u8) -> Cow<'_, [u8]> {
        match self {
            IndexKey::Inline(b) => Cow::Borrowed(b),
            IndexKey::Giant { key, .. } => {
                let mut k = key[..GIANT_PREFIX_BYTES].to_vec();
                k.resize(MAX_INDEXED_VALUE_BYTES, fill);
                Cow::Owned(k)
            }
        }
    }
}

/// A stored index key, split by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKeyRef<'a> {
    /// A full encoding.
    Inline(&'a [u8]),
    /// A giant's prefix and hash.
    Giant {
        /// The first `GIANT_PREFIX_BYTES` of the full encoding.
        prefix: &'a [u8],
        /// The hash of the full encoding.
        hash: &'a GiantHash,
    },
}

/// Splits a stored index key (the bytes after the attribute id) by its length.
pub fn classify(key: &[u8]) -> Result<IndexKeyRef<'_>, CodecError> {
    if key.len() <= MAX_INLINE_VALUE_BYTES {
        return Ok(IndexKeyRef::Inline(key));
    }
    if key.len() != MAX_INDEXED_VALUE_BYTES {
        return Err(CodecError::Malformed {
            offset: key.len(),
            what: "index key length (neither inline nor giant)",
        });
    }
    let (prefix, hash) = key.split_at(GIANT_PREFIX_BYTES);
    let hash: &GiantHash = hash.try_into().map_err(|_| CodecError::Malformed {
        offset: GIANT_PREFIX_BYTES,
        what: "giant hash",
    })?;
    Ok(IndexKeyRef::Giant { prefix, hash })
}

/// Decodes a giant from its stored full encoding, checking it against the index key's prefix
/// and hash (bytes from disk are not trusted).
pub fn decode_giant(prefix: &[u8], hash: &GiantHash, full: &[u8]) -> Result<Value, CodecError> {
    if full.len() <= MAX_INLINE_VALUE_BYTES || !full.starts_with(prefix) {
        return Err(CodecError::Malformed {
            offset: 0,
            what: "giant value (does not match its index key)",
        });
    }
    if giant_hash(full) != *hash {
        return Err(CodecError::Malformed {
            offset: 0,
            what: "giant value (hash mismatch)",
        });
    }
    decode_exact(full)
}

/// Decodes a stored index key, fetching a giant's full encoding with `load` (called only for
/// giants, with the hash).
pub fn decode_index_key<E: From<CodecError>, B: AsRef<[u8]>>(
    key: &[u8],
    load: impl FnOnce(&GiantHash) -> Result<B, E>,
) -> Result<Value, E> {
    match classify(key)? {
        IndexKeyRef::Inline(enc) => Ok(decode_exact(enc)?),
        IndexKeyRef::Giant { prefix, hash } => {
            let full = load(hash)?;
            Ok(decode_giant(prefix, hash, full.as_ref())?)
        }
    }
}

/// Orders a stored index key against the full encoding of a value (a range bound, say).
/// `None` when the key is a giant whose prefix equals the start of `enc`: then only the
/// giant's full encoding can tell, so compare that with `enc` instead.
pub fn cmp_key_to_encoding(key: &[u8], enc: &[u8]) -> Option<Ordering> {
    if key.len() <= MAX_INLINE_VALUE_BYTES {
        return Some(key.cmp(enc));
    }
    let prefix = &key[..GIANT_PREFIX_BYTES.min(key.len())];
    let n = prefix.len().min(enc.len());
    match prefix[..n].cmp(&enc[..n]) {
        Ordering::Equal if enc.len() > MAX_INLINE_VALUE_BYTES => None,
        // `enc` is a proper prefix of the giant: only for bytes no encoder writes.
        Ordering::Equal => Some(Ordering::Greater),
        o => Some(o),
    }
}

/// The exact value order of two stored index keys: `memcmp`, except for two giants that share
/// a prefix, whose full encodings `load` fetches (by hash) and compares.
pub fn cmp_keys_exact<E, B: AsRef<[u8]>>(
    a: &[u8],
    b: &[u8],
    mut load: impl FnMut(&GiantHash) -> Result<B, E>,
) -> Result<Ordering, E> {
    let giant = |k: &[u8]| k.len() == MAX_INDEXED_VALUE_BYTES;
    if !(giant(a) && giant(b)) || a[..GIANT_PREFIX_BYTES] != b[..GIANT_PREFIX_BYTES] || a == b {
        return Ok(a.cmp(b));
    }
    let hash = |k: &[u8]| -> GiantHash {
        let mut h = [0u8; GIANT_HASH_BYTES];
        h.copy_from_slice(&k[GIANT_PREFIX_BYTES..]);
        h
    };
    let (fa, fb) = (load(&hash(a))?, load(&hash(b))?);
    Ok(fa.as_ref().cmp(fb.as_ref()))
}
