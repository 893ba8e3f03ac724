//! Order-preserving encodings: a type tag byte, then bytes whose `memcmp` order is the value
//! order. See `LAYOUT.md` for the byte layouts.
//!
//! Every encoding is self-delimiting (fixed width, or terminated), so no encoding is a prefix
//! of another; that is what lets tuples compare element by element and lets the index keep an
//! order-preserving prefix of a long value (see `index_key`).
//!
//! Nothing here allocates except by growing the caller's output vector.

use super::keyword::Keyword;
use super::number::BigDec;
use super::value::Value;

/// Type tags, in cross-type order (the order of `Value`'s variants).
pub mod tag {
    use crate::codec::ValueType;

    /// Boolean.
    pub const BOOLEAN: u8 = 0x01;
    /// Long.
    pub const LONG: u8 = 0x02;
    /// BigInt.
    pub const BIGINT: u8 = 0x03;
    /// Float.
    pub const FLOAT: u8 = 0x04;
    /// Double.
    pub const DOUBLE: u8 = 0x05;
    /// BigDec.
    pub const BIGDEC: u8 = 0x06;
    /// Instant.
    pub const INSTANT: u8 = 0x07;
    /// Uuid.
    pub const UUID: u8 = 0x08;
    /// String.
    pub const STRING: u8 = 0x09;
    /// Keyword.
    pub const KEYWORD: u8 = 0x0A;
    /// Symbol.
    pub const SYMBOL: u8 = 0x0B;
    /// Ref.
    pub const REF: u8 = 0x0C;
    /// Bytes.
    pub const BYTES: u8 = 0x0D;
    /// Tuple.
    pub const TUPLE: u8 = 0x0E;

    /// Inside a tuple: the end of the elements (sorts first, so a prefix tuple sorts first).
    pub const TUPLE_END: u8 = 0x00;
    /// Inside a tuple: a nil element (sorts before any value).
    pub const TUPLE_NIL: u8 = 0x01;
    /// Inside a tuple: an element follows, encoded with its own tag.
    pub const TUPLE_ITEM: u8 = 0x02;

    /// The tag of a type.
    pub const fn of(t: ValueType) -> u8 {
        match t {
            ValueType::Boolean => BOOLEAN,
            ValueType::Long => LONG,
            ValueType::BigInt => BIGINT,
            ValueType::Float => FLOAT,
            ValueType::Double => DOUBLE,
            ValueType::BigDec => BIGDEC,
            ValueType::Instant => INSTANT,
            ValueType::Uuid => UUID,
            ValueType::String => STRING,
            ValueType::Keyword => KEYWORD,
            ValueType::Symbol => SYMBOL,
            ValueType::Ref => REF,
            ValueType::Bytes => BYTES,
            ValueType::Tuple => TUPLE,
        }
    }

    /// The type a tag stands for.
    pub fn value_type(tag: u8) -> Option<ValueType> {
        ValueType::ALL
            .get(usize::from(tag).checked_sub(1)?)
            .copied()
    }
}

/// Appends the encoding of `v`.
pub fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Boolean(b) => out.extend_from_slice(&[tag::BOOLEAN, u8::from(*b)]),
        Value::Long(n) => out.extend_from_slice(&long_bytes(*n)),
        Value::BigInt(n) => {
            out.push(tag::BIGINT);
            out.extend_from_slice(&encode_i128(**n));
        }
        Value::Float(x) => {
            out.push(tag::FLOAT);
            out.extend_from_slice(&encode_f32(x.get()));
        }
        Value::Double(x) => {
            out.push(tag::DOUBLE);
            out.extend_from_slice(&encode_f64(x.get()));
        }
        Value::BigDec(d) => {
            out.push(tag::BIGDEC);
            encode_bigdec(d, out);
        }
        Value::Instant(ms) => out.extend_from_slice(&instant_bytes(*ms)),
        Value::Uuid(u) => {
            out.push(tag::UUID);
            out.extend_from_slice(u);
        }
        Value::String(s) => encode_str(s, out),
        Value::Keyword(k) => encode_keyword(tag::KEYWORD, k, out),
        Value::Symbol(k) => encode_keyword(tag::SYMBOL, k, out),
        Value::Ref(e) => out.extend_from_slice(&ref_bytes(*e)),
        Value::Bytes(b) => {
            out.push(tag::BYTES);
            escaped(b, out);
        }
        Value::Tuple(items) => {
            out.push(tag::TUPLE);
            for it in items {
                match it {
                    None => out.push(tag::TUPLE_NIL),
                    Some(v) => {
                        out.push(tag::TUPLE_ITEM);
                        encode(v, out);
                    }
                }
            }
            out.push(tag::TUPLE_END);
        }
        Value::Ratio(_) | Value::Regex(_) | Value::Set(_) | Value::Map(_) | Value::Char(_) => {
            encode_str(&query_only_text(v), out)
        }
    }
}

/// What a query-only value (`Value::is_storable` false) encodes as: its printed text, as a
/// string. The tx pipeline refuses such values before encoding, so this only gives the typed
/// KV API a defined, panic-free answer.
fn query_only_text(v: &Value) -> String {
    format!("{v:?}")
}

/// The encoding of `v` as a new vector of exactly the right capacity.
pub fn encode_to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(v));
    encode(v, &mut out);
    out
}

/// The length of `v`'s encoding, without encoding it (to size buffers and to see whether a
/// value will be a giant before building its key).
pub fn encoded_len(v: &Value) -> usize {
    1 + match v {
        Value::Boolean(_) => 1,
        Value::Long(_) | Value::Instant(_) | Value::Ref(_) | Value::Double(_) => 8,
        Value::BigInt(_) | Value::Uuid(_) => 16,
        Value::Float(_) => 4,
        Value::BigDec(d) => match d.parts() {
            (_, "", _) => 1,
            (_, digits, _) => 1 + 4 + digits.len() + 1,
        },
        Value::String(s) => escaped_len(s.as_bytes()),
        Value::Keyword(k) | Value::Symbol(k) => {
            escaped_len(k.namespace().unwrap_or("").as_bytes()) + escaped_len(k.name().as_bytes())
        }
        Value::Bytes(b) => escaped_len(b),
        Value::Tuple(items) => {
            1 + items
                .iter()
                .map(|it| 1 + it.as_ref().map_or(0, encoded_len))
                .sum::<usize>()
        }
        Value::Ratio(_) | Value::Regex(_) | Value::Set(_) | Value::Map(_) | Value::Char(_) => {
            escaped_len(query_only_text(v).as_bytes())
        }
    }
}

// ---- Hot paths: encode without building a `Value` (and so without an `Arc`). ----

/// The encoding of a long: its tag, then 8 bytes. Also the KV API's typed `i64` key.
#[inline]
pub fn long_bytes(n: i64) -> [u8; 9] {
    tagged(tag::LONG, encode_i64(n))
}

/// Appends the encoding of a long.
#[inline]
pub fn encode_long(n: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(&long_bytes(n));
}

/// The encoding of an instant (epoch milliseconds).
#[inline]
pub fn instant_bytes(ms: i64) -> [u8; 9] {
    tagged(tag::INSTANT, encode_i64(ms))
}

/// The encoding of a ref (entity id).
#[inline]
pub fn ref_bytes(e: u64) -> [u8; 9] {
    tagged(tag::REF, e.to_be_bytes())
}

/// Appends the encoding of a ref.
#[inline]
pub fn encode_ref(e: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(&ref_bytes(e));
}

/// Appends the encoding of a string value.
#[inline]
pub fn encode_str(s: &str, out: &mut Vec<u8>) {
    out.push(tag::STRING);
    escaped(s.as_bytes(), out);
}

/// Appends the encoding of a keyword or symbol from its parts (`tag` is `tag::KEYWORD` or
/// `tag::SYMBOL`); an empty namespace is the same as none.
#[inline]
pub fn encode_keyword_parts(tag: u8, ns: Option<&str>, name: &str, out: &mut Vec<u8>) {
    debug_assert!(tag == tag::KEYWORD || tag == tag::SYMBOL);
    out.push(tag);
    escaped(ns.unwrap_or("").as_bytes(), out);
    escaped(name.as_bytes(), out);
}

fn encode_keyword(tag: u8, k: &Keyword, out: &mut Vec<u8>) {
    encode_keyword_parts(tag, k.namespace(), k.name(), out);
}

#[inline]
fn tagged(tag: u8, body: [u8; 8]) -> [u8; 9] {
    let mut b = [tag, 0, 0, 0, 0, 0, 0, 0, 0];
    b[1..].copy_from_slice(&body);
    b
}

// ---- Bodies (no tag). ----

/// Sign-flipped big-endian: negative numbers sort before positive ones.
#[inline]
pub fn encode_i64(n: i64) -> [u8; 8] {
    ((n as u64) ^ (1 << 63)).to_be_bytes()
}

/// Sign-flipped big-endian, 16 bytes.
#[inline]
pub fn encode_i128(n: i128) -> [u8; 16] {
    ((n as u128) ^ (1 << 127)).to_be_bytes()
}

/// IEEE-754 bits, all inverted for negatives and sign-flipped for positives, big-endian.
#[inline]
pub fn encode_f64(x: f64) -> [u8; 8] {
    let bits = x.to_bits();
    let bits = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    bits.to_be_bytes()
}

/// The 32-bit version of [`encode_f64`].
#[inline]
pub fn encode_f32(x: f32) -> [u8; 4] {
    let bits = x.to_bits();
    let bits = if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    };
    bits.to_be_bytes()
}

/// Bytes with 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x00: a prefix sorts first and the
/// encoding is self-delimiting (so tuples compare element by element).
pub fn escaped(bytes: &[u8], out: &mut Vec<u8>) {
    if !bytes.contains(&0) {
        out.extend_from_slice(bytes);
    } else {
        out.reserve(bytes.len() + 8);
        for chunk in bytes.split_inclusive(|b| *b == 0) {
            out.extend_from_slice(chunk);
            if chunk.last() == Some(&0) {
                out.push(0xFF);
            }
        }
    }
    out.extend_from_slice(&[0x00, 0x00]);
}

/// Length of [`escaped`]'s output.
fn escaped_len(bytes: &[u8]) -> usize {
    bytes.len() + bytes.iter().filter(|b| **b == 0).count() + 2
}

/// Sign class (0 negative, 1 zero, 2 positive), then for positives the exponent (sign-flipped
/// big-endian) and the digits terminated by 0x00; negatives store the complement of both
/// (digits then terminated by 0xFF) so that larger magnitudes sort first.
fn encode_bigdec(d: &BigDec, out: &mut Vec<u8>) {
    let (negative, digits, exponent) = d.parts();
    if digits.is_empty() {
        out.push(1);
        return;
    }
    let exp = ((exponent as u32) ^ (1 << 31)).to_be_bytes();
    if negative {
        out.push(0);
        out.extend(exp.iter().map(|b| !b));
        out.extend(digits.bytes().map(|b| !b));
        out.push(0xFF);
    } else {
        out.push(2);
        out.extend_from_slice(&exp);
        out.extend_from_slice(digits.as_bytes());
        out.push(0x00);
    }
}
