//! Values and their order-preserving byte encodings (see `LAYOUT.md`).
//!
//! - [`value`]: `Value`, the values a datom holds; [`keyword`]: `Keyword`; [`number`]: `F32`,
//!   `F64`, `BigDec`; [`ratio`]: `Ratio`; [`regex`]: `Regex` (both query values only);
//!   [`value_type`]: `ValueType` (`:db.type/...`).
//! - [`encode`] / [`decode`]: a tag byte, then bytes whose `memcmp` order is the value order.
//! - [`index_key`]: the bounded form a value takes in an index key, with giants (values too long
//!   for LMDB keys) kept as an order-preserving prefix plus a hash.

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
