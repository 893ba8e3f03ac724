//! EDN values as CBOR (RFC 8949): the server's binary body format (`application/cbor`), for
//! clients that would rather not read EDN text, and for answers too large to print and read
//! back cheaply (an entity id is 9 bytes here, 14 digits and a space as text).
//!
//! Every value keeps its type, as in EDN. Where a CBOR tag registered with IANA means the
//! same thing it is used; four kinds EDN has and CBOR does not get tags of Datalith's own,
//! from the first-come range, not registered:
//!
//! | EDN | CBOR |
//! |---|---|
//! | `nil`, `true`, `false` | null, true, false |
//! | long | integer (major type 0 or 1); an integer beyond 64 bits reads as a big integer |
//! | big integer (`1N`) | tag 2 or 3 (bignum), whatever its size |
//! | double | float64 (float16 and float32 are read too) |
//! | big decimal (`1.5M`) | tag 4, `[exponent, mantissa]` (the mantissa an integer or a bignum) |
//! | ratio (`1/3`) | tag 30, `[numerator, denominator]` |
//! | string | text string |
//! | keyword `:a/b` | tag 39 (identifier) on the text `a/b` |
//! | symbol `a/b` | tag [`SYMBOL`] on the text `a/b` |
//! | vector | array |
//! | list | tag [`LIST`] on an array |
//! | set | tag 258 on an array |
//! | map | map, keys any value; a repeated key is refused, as EDN's reader refuses it |
//! | `#inst` | tag 1, seconds since the epoch: an integer, or a float64 when it has milliseconds (tag 0, RFC 3339 text, is read too) |
//! | `#uuid` | tag 37 on 16 bytes |
//! | character `\c` | tag [`CHAR`] on a one-character text |
//! | regex `#"..."` | tag 35 on its text |
//! | other tagged value `#my/tag v` | tag [`TAGGED`] on `[tag-text, v]` |
//!
//! Written and read by hand, not through a CBOR crate: the format's heads are a few lines,
//! and the first version, on minicbor, read q1's 2,575-row answer in 790 us against the EDN
//! reader's 510 (measured 2026-12-07, one process), where the point of the format is to be
//! cheaper than text.
//!
//! Reading trusts nothing: lengths are checked against the bytes there are, nesting stops at
//! [`crate::limits::MAX_EDN_DEPTH`], big numbers at [`MAX_BIGNUM_BYTES`], and every refusal
//! is a [`CborError`] naming the byte it met.

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub use decode::{read_cbor, read_cbor_map_deferring, CborError};
pub use encode::{write_cbor, CborWriter};

/// Tag of a symbol's text (Datalith's own; not registered).
pub const SYMBOL: u64 = 62_000;
/// Tag of a list's array (Datalith's own; not registered).
pub const LIST: u64 = 62_001;
/// Tag of a character's one-character text (Datalith's own; not registered).
pub const CHAR: u64 = 62_002;
/// Tag of a tagged value `#tag v` as `[tag-text, v]` (Datalith's own; not registered).
pub const TAGGED: u64 = 62_003;

/// Registered tags (IANA's CBOR tag registry), each used for what it was registered for.
/// An instant as RFC 3339 text (read, never written: what many libraries write for a
/// date and time by default).
pub const DATE_TIME_TEXT: u64 = 0;
/// An instant: seconds since the epoch.
pub const EPOCH_TIME: u64 = 1;
/// A big integer: its magnitude.
pub const POSITIVE_BIGNUM: u64 = 2;
/// A negative big integer: -1 minus the magnitude.
pub const NEGATIVE_BIGNUM: u64 = 3;
/// A big decimal: `[exponent, mantissa]`.
pub const DECIMAL_FRACTION: u64 = 4;
/// A ratio: `[numerator, denominator]`.
pub const RATIONAL: u64 = 30;
/// A regular expression's text.
pub const REGEX: u64 = 35;
/// A UUID's 16 bytes.
pub const UUID: u64 = 37;
/// A keyword's text, without its colon.
pub const IDENTIFIER: u64 = 39;
/// A set's array.
pub const SET: u64 = 258;

/// The longest bignum read, in bytes (~9,900 decimal digits): turning one into decimal
/// digits takes time quadratic in its length, and no stored value comes near it (a big
/// integer has at most 16 bytes; a big decimal's digits are what its text spelled).
pub const MAX_BIGNUM_BYTES: usize = 4096;
