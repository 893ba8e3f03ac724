//! Values and their order-preserving byte encodings (see `LAYOUT.md`).
//!
//! - [`value`]: `Value`, the values a datom holds; [`keyword`]: `Keyword`; [`number`]: `F32`,
//!   `F64`, `BigDec`; [`ratio`]: `Ratio`; [`regex`]: `Regex` (both query values only);
//!   [`value_type`]: `ValueType` (`:db.type/...`).
//! - [`encode`](mod@encode) / [`decode`](mod@decode): a tag byte, then bytes whose `memcmp` order is the value order.
//! - [`index_key`](mod@index_key): the bounded form a value takes in an index key, with giants (values too long
//!   for LMDB keys) kept as an order-preserving prefix plus a hash.
//!
//! # Encodings (moved from ARCHITECTURE.md)
//!
//! A type tag byte, then bytes whose `memcmp` order is the value order; across types, tag
//! order. Every encoding is self-delimiting, so tuples compare element by element.
//!
//! | tag | type | bytes after the tag |
//! |---|---|---|
//! | 0x01 | boolean | 0 or 1 |
//! | 0x02 | long | 8 bytes big-endian, sign bit flipped |
//! | 0x03 | bigint (i128) | 16 bytes big-endian, sign bit flipped |
//! | 0x04 | float | IEEE bits: negatives inverted, positives sign-flipped (NaN refused) |
//! | 0x05 | double | as float, 8 bytes |
//! | 0x06 | bigdec | sign class (0 neg, 1 zero, 2 pos); exponent (i32, sign-flipped) and decimal digits then 0x00; negatives store the complement of both |
//! | 0x07 | instant | epoch ms, as long |
//! | 0x08 | uuid | 16 bytes |
//! | 0x09 | string | UTF-8 with 0x00 escaped as 0x00 0xFF, then 0x00 0x00 |
//! | 0x0A | keyword | namespace (escaped, terminated) then name (escaped, terminated) |
//! | 0x0B | symbol | as keyword |
//! | 0x0C | ref | entity id, 8 bytes big-endian |
//! | 0x0D | bytes | escaped like strings |
//! | 0x0E | tuple | per element 0x01 (nil) or 0x02 + encoding; then 0x00 |
//!
//! `decode` never trusts its input: truncated or malformed bytes give a `CodecError`; tuple
//! nesting is capped (`MAX_TUPLE_DEPTH`).
//!
//! Query-only values: `Value` also has `Ratio` (`codec/ratio.rs`: an `i128` fraction in lowest
//! terms, denominator above 1, ordered numerically without overflow), `Regex` (`codec/regex.rs`:
//! a Java-syntax pattern rewritten for the `regex` crate, which has no backtracking, so
//! backreferences, lookaround, atomic groups and possessive quantifiers are refused by name;
//! equal, ordered and hashed by source text), `Set` and `Map` (sorted, distinct). Queries compute
//! them and results print them; no datom holds one (Datomic has no such types): their
//! `value_type()` is `None`, `is_storable()` false, and the tx pipeline refuses them
//! (`TxError::NotStorable`) before anything is encoded. They have no tag: `encode` writes their
//! printed text as a string, only so that the typed KV API has a defined, panic-free answer.

pub mod decode;
pub mod encode;
pub mod index_key;
pub mod keyword;
pub mod number;
pub mod ratio;
pub mod regex;
pub mod value;
pub mod value_type;

pub use decode::{
    decode, decode_exact, decode_instant, decode_long, decode_ref, decode_str, peek_type, skip,
    tuple_items, CodecError,
};
pub use encode::{
    encode, encode_keyword_parts, encode_long, encode_ref, encode_str, encode_to_vec, encoded_len,
    instant_bytes, long_bytes, ref_bytes,
};
pub use index_key::{
    classify, cmp_key_to_encoding, cmp_keys_exact, decode_giant, decode_index_key,
    encode_index_key, giant_hash, index_key, Giant, GiantHash, IndexKey, IndexKeyRef,
};
pub use keyword::Keyword;
pub use number::{BigDec, F32, F64};
pub use ratio::{Ratio, Reduced};
pub use regex::{Regex, RegexError};
pub use value::{parse_uuid, uuid_text, Value};
pub use value_type::ValueType;

#[cfg(test)]
mod tests;
