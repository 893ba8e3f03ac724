//! Order-preserving encodings: a type tag byte, then bytes whose `memcmp` order is the value
//! order. See `LAYOUT.md` for the byte layouts.

use super::value::{BigDec, Keyword, Value};

/// Type tags, in cross-type order.
pub mod tag {
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
}

/// Appends the encoding of `v`.
pub fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Boolean(b) => out.extend_from_slice(&[tag::BOOLEAN, *b as u8]),
        Value::Long(n) => {
            out.push(tag::LONG);
            out.extend_from_slice(&encode_i64(*n));
        }
        Value::BigInt(n) => {
            out.push(tag::BIGINT);
            out.extend_from_slice(&((*n as u128) ^ (1u128 << 127)).to_be_bytes());
        }
        Value::Float(x) => {
            out.push(tag::FLOAT);
            let bits = x.get().to_bits();
            let bits = if bits >> 31 == 1 {
                !bits
            } else {
                bits | (1 << 31)
            };
            out.extend_from_slice(&bits.to_be_bytes());
        }
        Value::Double(x) => {
            out.push(tag::DOUBLE);
            out.extend_from_slice(&encode_f64(x.get()));
        }
        Value::BigDec(d) => {
            out.push(tag::BIGDEC);
            encode_bigdec(d, out);
        }
        Value::Instant(ms) => {
            out.push(tag::INSTANT);
            out.extend_from_slice(&encode_i64(*ms));
        }
        Value::Uuid(u) => {
            out.push(tag::UUID);
            out.extend_from_slice(u);
        }
        Value::String(s) => {
            out.push(tag::STRING);
            escaped(s.as_bytes(), out);
        }
        Value::Keyword(k) => {
            out.push(tag::KEYWORD);
            keyword(k, out);
        }
        Value::Symbol(k) => {
            out.push(tag::SYMBOL);
            keyword(k, out);
        }
        Value::Ref(e) => {
            out.push(tag::REF);
            out.extend_from_slice(&e.to_be_bytes());
        }
        Value::Bytes(b) => {
            out.push(tag::BYTES);
            escaped(b, out);
        }
        Value::Tuple(items) => {
            out.push(tag::TUPLE);
            for it in items {
                match it {
                    None => out.push(0x01),
                    Some(v) => {
                        out.push(0x02);
                        encode(v, out);
                    }
                }
            }
            out.push(0x00);
        }
    }
}

/// The encoding of `v` as a new vector.
pub fn encode_to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    encode(v, &mut out);
    out
}

/// Sign-flipped big-endian: negative numbers sort before positive ones.
#[inline]
pub fn encode_i64(n: i64) -> [u8; 8] {
    ((n as u64) ^ (1 << 63)).to_be_bytes()
}

/// IEEE-754 bits, negated for negatives and sign-flipped for positives.
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

/// Bytes with 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x00: a prefix sorts first and the
/// encoding is self-delimiting (so tuples compare element by element).
pub fn escaped(bytes: &[u8], out: &mut Vec<u8>) {
    if !bytes.contains(&0) {
        out.extend_from_slice(bytes);
    } else {
        for &b in bytes {
            out.push(b);
            if b == 0 {
                out.push(0xFF);
            }
        }
    }
    out.extend_from_slice(&[0x00, 0x00]);
}

fn keyword(k: &Keyword, out: &mut Vec<u8>) {
    escaped(k.namespace().unwrap_or("").as_bytes(), out);
    escaped(k.name().as_bytes(), out);
}

/// Sign class (0 negative, 1 zero, 2 positive), then for positives the exponent (sign-flipped
/// big-endian) and the digits terminated by 0x00; negatives store the complement of both so
/// that larger magnitudes sort first.
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
