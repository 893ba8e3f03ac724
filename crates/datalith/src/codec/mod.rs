//! Values and their order-preserving byte encodings (see `LAYOUT.md`).
//!
//! - [`value`]: `Value`, `Keyword`, `ValueType`.
//! - [`encode`] / [`decode`]: bytes whose `memcmp` order is the value order.

pub mod decode;
pub mod encode;
pub mod value;

pub use decode::{decode, CodecError};
pub use encode::{encode, encode_to_vec};
pub use value::{parse_uuid, uuid_text, BigDec, Keyword, Value, ValueType, F32, F64};

#[cfg(test)]
mod tests;
