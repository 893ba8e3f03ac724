//! Writing EDN values as CBOR (the table in `mod.rs`).

use minicbor::Encoder;

use super::*;
use crate::codec::Keyword;
use crate::edn::Edn;

/// `value` as CBOR at the end of `out`.
pub fn write_cbor(value: &Edn, out: &mut Vec<u8>) {
    CborWriter(out).value(value);
}

/// CBOR items written at the end of a byte buffer: whole values, and the heads of
/// collections written item by item (an answer streamed as it is made).
pub struct CborWriter<'a>(pub &'a mut Vec<u8>);

impl CborWriter<'_> {
    fn encoder(&mut self) -> Encoder<&mut Vec<u8>> {
        Encoder::new(&mut *self.0)
    }

    /// The head of a map of `entries` entries (its keys and values follow).
    pub fn map_head(&mut self, entries: usize) {
        // Writing into a Vec cannot fail.
        let _ = self.encoder().map(entries as u64);
    }

    /// The head of an array whose items follow until [`Self::end`].
    pub fn begin_array(&mut self) {
        let _ = self.encoder().begin_array();
    }

    /// The end of an array begun with [`Self::begin_array`].
    pub fn end(&mut self) {
        let _ = self.encoder().end();
    }

    /// A tag, for the item that follows.
    pub fn tag(&mut self, tag: u64) {
        let _ = self.encoder().tag(minicbor::data::Tag::new(tag));
    }

    /// One whole value.
    pub fn value(&mut self, value: &Edn) {
        match value {
            Edn::Nil => drop(self.encoder().null()),
            Edn::Bool(b) => drop(self.encoder().bool(*b)),
            Edn::Long(n) => drop(self.encoder().i64(*n)),
            Edn::BigInt(n) => self.bignum(*n < 0, &n.unsigned_abs().to_be_bytes()),
            Edn::Double(x) => drop(self.encoder().f64(*x)),
            Edn::BigDec(d) => self.big_decimal(&d.to_string()),
            Edn::Ratio(r) => {
                self.tag(RATIONAL);
                let _ = self.encoder().array(2);
                self.integer(r.numerator());
                self.integer(r.denominator());
            }
            Edn::String(s) => drop(self.encoder().str(s)),
            Edn::Char(c) => {
                self.tag(CHAR);
                let _ = self.encoder().str(c.encode_utf8(&mut [0; 4]));
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
                    0 => drop(self.encoder().i64(ms / 1000)),
                    _ => drop(self.encoder().f64(*ms as f64 / 1000.0)),
                }
            }
            Edn::Uuid(u) => {
                self.tag(UUID);
                let _ = self.encoder().bytes(u);
            }
            Edn::Regex(source) => {
                self.tag(REGEX);
                let _ = self.encoder().str(source);
            }
            Edn::Tagged(t, v) => {
                self.tag(TAGGED);
                let _ = self.encoder().array(2);
                let _ = self.encoder().str(&t.to_symbol_text());
                self.value(v);
            }
        }
    }

    fn array(&mut self, items: &[Edn]) {
        let _ = self.encoder().array(items.len() as u64);
        for item in items {
            self.value(item);
        }
    }

    /// A keyword's or symbol's text (without a keyword's colon) under `tag`.
    fn named(&mut self, tag: u64, k: &Keyword) {
        self.tag(tag);
        let _ = self.encoder().str(&k.to_symbol_text());
    }

    /// An integer of up to 128 bits: a CBOR integer when it fits 64 bits, else a bignum.
    fn integer(&mut self, n: i128) {
        match i64::try_from(n) {
            Ok(n) => drop(self.encoder().i64(n)),
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
        let _ = self.encoder().bytes(&bytes[first..]);
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
        let _ = self.encoder().array(2);
        let _ = self.encoder().i64(exponent - digits.len() as i64);
        match digits.parse::<i64>() {
            Ok(m) => drop(self.encoder().i64(if negative { -m } else { m })),
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
