//! Writing EDN values as CBOR (the table in `mod.rs`): each item's head (major type and
//! argument, in the fewest bytes) written straight into the buffer.

use super::*;
use crate::codec::{Keyword, Value};
use crate::edn::Edn;

/// `value` as CBOR at the end of `out`.
pub fn write_cbor(value: &Edn, out: &mut Vec<u8>) {
    CborWriter(out).value(value);
}

/// CBOR items written at the end of a byte buffer: whole values, and the heads of
/// collections written item by item (an answer streamed as it is made).
pub struct CborWriter<'a>(pub &'a mut Vec<u8>);

/// Major types (RFC 8949, 3.1), in an initial byte's top three bits.
pub(super) const UNSIGNED: u8 = 0;
pub(super) const NEGATIVE: u8 = 1 << 5;
pub(super) const BYTES: u8 = 2 << 5;
pub(super) const TEXT: u8 = 3 << 5;
pub(super) const ARRAY: u8 = 4 << 5;
pub(super) const MAP: u8 = 5 << 5;
pub(super) const TAG: u8 = 6 << 5;
/// Major type 7: simple values, floats, and the break (its additional information 31).
pub(super) const SIMPLE: u8 = 7 << 5;
/// Major type 7: simple values and floats.
pub(super) const FALSE: u8 = 0xf4;
pub(super) const TRUE: u8 = 0xf5;
pub(super) const NULL: u8 = 0xf6;
pub(super) const FLOAT64: u8 = 0xfb;
/// What ends an indefinite-length item.
pub(super) const BREAK: u8 = 0xff;
/// The additional information of an indefinite-length array, map or string.
pub(super) const INDEFINITE: u8 = 31;

impl CborWriter<'_> {
    /// An item's head: its major type and `arg` (a count, a length, a tag or the integer
    /// itself) in the fewest bytes.
    fn head(&mut self, major: u8, arg: u64) {
        let out = &mut *self.0;
        match arg {
            0..=23 => out.push(major | arg as u8),
            24..=0xff => out.extend_from_slice(&[major | 24, arg as u8]),
            0x100..=0xffff => {
                out.push(major | 25);
                out.extend_from_slice(&(arg as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(major | 26);
                out.extend_from_slice(&(arg as u32).to_be_bytes());
            }
            _ => {
                out.push(major | 27);
                out.extend_from_slice(&arg.to_be_bytes());
            }
        }
    }

    fn long(&mut self, n: i64) {
        match n < 0 {
            // -1 - n, which is !n in two's complement.
            true => self.head(NEGATIVE, !n as u64),
            false => self.head(UNSIGNED, n as u64),
        }
    }

    fn text(&mut self, s: &str) {
        self.head(TEXT, s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.head(BYTES, b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn float(&mut self, x: f64) {
        self.0.push(FLOAT64);
        self.0.extend_from_slice(&x.to_be_bytes());
    }

    /// The head of a map of `entries` entries (its keys and values follow).
    pub fn map_head(&mut self, entries: usize) {
        self.head(MAP, entries as u64);
    }

    /// The head of an array whose items follow until [`Self::end`].
    pub fn begin_array(&mut self) {
        self.0.push(ARRAY | INDEFINITE);
    }

    /// The end of an array begun with [`Self::begin_array`].
    pub fn end(&mut self) {
        self.0.push(BREAK);
    }

    /// A tag, for the item that follows.
    pub fn tag(&mut self, tag: u64) {
        self.head(TAG, tag);
    }

    /// The head of an array of `items` items (they follow).
    pub fn array_head(&mut self, items: usize) {
        self.head(ARRAY, items as u64);
    }

    /// A stored value, written as its EDN (`edn_from_value`) is: the kinds a result is
    /// mostly made of directly, the others through their EDN.
    pub fn stored(&mut self, v: &Value) {
        match v {
            Value::Long(n) => self.long(*n),
            Value::Ref(e) => self.long(*e as i64),
            Value::String(s) => self.text(s),
            Value::Keyword(k) => self.named(IDENTIFIER, k),
            Value::Boolean(b) => self.0.push(if *b { TRUE } else { FALSE }),
            Value::Double(x) => self.float(x.get()),
            Value::Instant(ms) => self.value(&Edn::Inst(*ms)),
            other => self.value(&crate::edn::edn_from_value(other)),
        }
    }

    /// One whole value.
    pub fn value(&mut self, value: &Edn) {
        match value {
            Edn::Nil => self.0.push(NULL),
            Edn::Bool(b) => self.0.push(if *b { TRUE } else { FALSE }),
            Edn::Long(n) => self.long(*n),
            Edn::BigInt(n) => self.bignum(*n < 0, &n.unsigned_abs().to_be_bytes()),
            Edn::Double(x) => self.float(*x),
            Edn::BigDec(d) => self.big_decimal(&d.to_string()),
            Edn::Ratio(r) => {
                self.tag(RATIONAL);
                self.head(ARRAY, 2);
                self.integer(r.numerator());
                self.integer(r.denominator());
            }
            Edn::String(s) => self.text(s),
            Edn::Char(c) => {
                self.tag(CHAR);
                self.text(c.encode_utf8(&mut [0; 4]));
            }
            Edn::Keyword(k) => self.named(IDENTIFIER, k),
            Edn::Symbol(s) => self.named(SYMBOL, s),
            Edn::List(items) => {
                self.tag(LIST);
                self.array(items);
            }
            Edn::Vector(items) => self.array(items),
            Edn::Set(items) => {
                self.tag(SET);
                self.array(items);
            }
            Edn::Map(pairs) => {
                self.map_head(pairs.len());
                for (k, v) in pairs {
                    self.value(k);
                    self.value(v);
                }
            }
            Edn::Inst(ms) => {
                self.tag(EPOCH_TIME);
                match ms % 1000 {
                    0 => self.long(ms / 1000),
                    _ => self.float(*ms as f64 / 1000.0),
                }
            }
            Edn::Uuid(u) => {
                self.tag(UUID);
                self.bytes(u);
            }
            Edn::Regex(source) => {
                self.tag(REGEX);
                self.text(source);
            }
            Edn::Tagged(t, v) => {
                self.tag(TAGGED);
                self.head(ARRAY, 2);
                self.text(&t.to_symbol_text());
                self.value(v);
            }
        }
    }

    fn array(&mut self, items: &[Edn]) {
        self.head(ARRAY, items.len() as u64);
        for item in items {
            self.value(item);
        }
    }

    /// A keyword's or symbol's text (without a keyword's colon) under `tag`.
    fn named(&mut self, tag: u64, k: &Keyword) {
        self.tag(tag);
        match k.namespace() {
            Some(ns) => {
                self.head(TEXT, (ns.len() + 1 + k.name().len()) as u64);
                self.0.extend_from_slice(ns.as_bytes());
                self.0.push(b'/');
                self.0.extend_from_slice(k.name().as_bytes());
            }
            None => self.text(k.name()),
        }
    }

    /// An integer of up to 128 bits: a CBOR integer when it fits 64 bits, else a bignum.
    fn integer(&mut self, n: i128) {
        match i64::try_from(n) {
            Ok(n) => self.long(n),
            Err(_) => self.bignum(n < 0, &n.unsigned_abs().to_be_bytes()),
        }
    }

    /// Tag 2 (the magnitude) or 3 (`-1 - n`: the magnitude less one), big-endian, without
    /// leading zero bytes.
    fn bignum(&mut self, negative: bool, magnitude: &[u8]) {
        let mut bytes = magnitude.to_vec();
        if negative {
            decrement(&mut bytes);
        }
        let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
        self.tag(match negative {
            true => NEGATIVE_BIGNUM,
            false => POSITIVE_BIGNUM,
        });
        self.bytes(&bytes[first..]);
    }

    /// Tag 4 `[exponent, mantissa]` of a big decimal, from its text `[-]0.DIGITSeEXP[M]`
    /// (`BigDec`'s own form: its value is 0.DIGITS x 10^EXP) or `0M`.
    fn big_decimal(&mut self, text: &str) {
        let text = text.strip_suffix('M').unwrap_or(text);
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (digits, exponent) = match text.strip_prefix("0.").and_then(|t| t.split_once('E')) {
            Some((digits, e)) => (digits, e.parse::<i64>().unwrap_or(0)),
            None => ("0", 0),
        };
        self.tag(DECIMAL_FRACTION);
        self.head(ARRAY, 2);
        self.long(exponent - digits.len() as i64);
        match digits.parse::<i64>() {
            Ok(m) => self.long(if negative { -m } else { m }),
            Err(_) => self.bignum(negative, &decimal_to_bytes(digits)),
        }
    }
}

/// Subtracts one from a big-endian magnitude that is not zero.
fn decrement(bytes: &mut [u8]) {
    for b in bytes.iter_mut().rev() {
        let (v, borrow) = b.overflowing_sub(1);
        *b = v;
        if !borrow {
            return;
        }
    }
}

/// Decimal digits as a big-endian magnitude (schoolbook: times ten, plus the digit).
pub(super) fn decimal_to_bytes(digits: &str) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(digits.len() / 2 + 1);
    for d in digits.bytes().filter(u8::is_ascii_digit) {
        let mut carry = u32::from(d - b'0');
        for b in out.iter_mut().rev() {
            let v = u32::from(*b) * 10 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            out.insert(0, carry as u8);
            carry >>= 8;
        }
    }
    out
}
