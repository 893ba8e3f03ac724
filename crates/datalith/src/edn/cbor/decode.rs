//! Reading one EDN value from CBOR (the table in `mod.rs`); the bytes are not trusted.

use minicbor::data::Type;
use minicbor::Decoder;

use super::*;
use crate::codec::{BigDec, Keyword, Ratio, Reduced};
use crate::edn::Edn;
use crate::limits::MAX_EDN_DEPTH;

/// Why bytes are not one CBOR value Datalith reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CBOR at byte {at}: {message}")]
#[non_exhaustive]
pub struct CborError {
    /// The offset of the item refused.
    pub at: usize,
    /// What is wrong with it.
    pub message: String,
}

/// The one value `bytes` hold (nothing may follow it).
pub fn read_cbor(bytes: &[u8]) -> Result<Edn, CborError> {
    let mut reader = Reader {
        d: Decoder::new(bytes),
    };
    let value = reader.value(0)?;
    if reader.d.position() != bytes.len() {
        return Err(reader.error("bytes after the value"));
    }
    Ok(value)
}

struct Reader<'b> {
    d: Decoder<'b>,
}

type Result<T, E = CborError> = std::result::Result<T, E>;

impl<'b> Reader<'b> {
    fn error(&self, message: impl Into<String>) -> CborError {
        CborError {
            at: self.d.position(),
            message: message.into(),
        }
    }

    /// minicbor's error, at the position it names.
    fn failed(&self, e: minicbor::decode::Error) -> CborError {
        failure(e, self.d.position())
    }

    fn value(&mut self, depth: usize) -> Result<Edn> {
        if depth >= MAX_EDN_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_EDN_DEPTH} levels")));
        }
        let ty = self.d.datatype().map_err(|e| self.failed(e))?;
        let d = &mut self.d;
        let value = match ty {
            Type::Null => d.null().map(|()| Edn::Nil),
            Type::Bool => d.bool().map(Edn::Bool),
            Type::U8
            | Type::U16
            | Type::U32
            | Type::U64
            | Type::I8
            | Type::I16
            | Type::I32
            | Type::I64
            | Type::Int => {
                let n = d.int().map_err(|e| self.failed(e))?;
                let n = i128::from(n);
                return Ok(match i64::try_from(n) {
                    Ok(n) => Edn::Long(n),
                    Err(_) => Edn::BigInt(n),
                });
            }
            Type::F16 => return self.half().map(Edn::Double),
            Type::F32 | Type::F64 => d.f64().map(Edn::Double),
            Type::String | Type::StringIndef => return self.text().map(Edn::String),
            Type::Array | Type::ArrayIndef => return self.items(depth).map(Edn::Vector),
            Type::Map | Type::MapIndef => return self.map(depth),
            Type::Tag => return self.tagged(depth),
            Type::Bytes | Type::BytesIndef => {
                return Err(self.error("a byte string outside a tag (tag 37 for a UUID)"))
            }
            other => return Err(self.error(format!("{other} is no EDN value"))),
        };
        value.map_err(|e| self.failed(e))
    }

    /// A float16 (minicbor reads them only with a feature of its own).
    fn half(&mut self) -> Result<f64> {
        let at = self.d.position();
        let bytes = self
            .d
            .input()
            .get(at + 1..at + 3)
            .ok_or_else(|| self.error("the bytes end inside a value"))?;
        let h = u16::from_be_bytes([bytes[0], bytes[1]]);
        self.d.set_position(at + 3);
        let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = i32::from((h >> 10) & 0x1f);
        let frac = f64::from(h & 0x3ff);
        Ok(sign
            * match exp {
                0 => frac * 2f64.powi(-24),
                31 if frac == 0.0 => f64::INFINITY,
                31 => f64::NAN,
                _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
            })
    }

    fn text(&mut self) -> Result<String> {
        match self.d.datatype().map_err(|e| self.failed(e))? {
            Type::String => self.d.str().map(str::to_string).map_err(|e| self.failed(e)),
            Type::StringIndef => {
                let mut s = String::new();
                let at = self.d.position();
                let parts = self.d.str_iter().map_err(|e| failure(e, at))?;
                for part in parts {
                    s.push_str(part.map_err(|e| failure(e, at))?);
                }
                Ok(s)
            }
            other => Err(self.error(format!("{other} where a text string belongs"))),
        }
    }

    fn byte_string(&mut self) -> Result<Vec<u8>> {
        match self.d.datatype().map_err(|e| self.failed(e))? {
            Type::Bytes => self
                .d
                .bytes()
                .map(<[u8]>::to_vec)
                .map_err(|e| self.failed(e)),
            Type::BytesIndef => {
                let mut out = Vec::new();
                let at = self.d.position();
                let parts = self.d.bytes_iter().map_err(|e| failure(e, at))?;
                for part in parts {
                    out.extend_from_slice(part.map_err(|e| failure(e, at))?);
                }
                Ok(out)
            }
            other => Err(self.error(format!("{other} where a byte string belongs"))),
        }
    }

    /// An array's items (definite or not).
    fn items(&mut self, depth: usize) -> Result<Vec<Edn>> {
        let len = self.d.array().map_err(|e| self.failed(e))?;
        let mut items = Vec::new();
        match len {
            Some(n) => {
                // Each item takes a byte at least: a length past the bytes left is a lie.
                self.fits(n)?;
                items.reserve(n as usize);
                for _ in 0..n {
                    items.push(self.value(depth + 1)?);
                }
            }
            None => {
                while !self.at_break()? {
                    items.push(self.value(depth + 1)?);
                }
            }
        }
        Ok(items)
    }

    fn map(&mut self, depth: usize) -> Result<Edn> {
        let at = self.d.position();
        let len = self.d.map().map_err(|e| self.failed(e))?;
        let mut pairs = Vec::new();
        let mut entry = |r: &mut Self| -> Result<()> {
            let k = r.value(depth + 1)?;
            let v = r.value(depth + 1)?;
            pairs.push((k, v));
            Ok(())
        };
        match len {
            Some(n) => {
                self.fits(n.saturating_mul(2))?;
                for _ in 0..n {
                    entry(self)?;
                }
            }
            None => {
                while !self.at_break()? {
                    entry(self)?;
                }
            }
        }
        if let Some(k) = crate::edn::duplicate::repeated_key(&pairs) {
            return Err(CborError {
                at,
                message: format!("a map repeats its key {}", crate::edn::to_edn_string(k)),
            });
        }
        Ok(Edn::Map(pairs))
    }

    /// Whether an indefinite collection ends here (its break, then consumed).
    fn at_break(&mut self) -> Result<bool> {
        if self.d.datatype().map_err(|e| self.failed(e))? == Type::Break {
            self.d.set_position(self.d.position() + 1);
            return Ok(true);
        }
        Ok(false)
    }

    /// Refuses a count of items larger than the bytes left could hold.
    fn fits(&self, n: u64) -> Result<()> {
        let left = self.d.input().len() - self.d.position();
        match n <= left as u64 {
            true => Ok(()),
            false => Err(self.error(format!("{n} items counted, {left} bytes left"))),
        }
    }

    fn tagged(&mut self, depth: usize) -> Result<Edn> {
        let at = self.d.position();
        let tag = self.d.tag().map_err(|e| self.failed(e))?.as_u64();
        let refused = |message: String| CborError { at, message };
        Ok(match tag {
            EPOCH_TIME => match self.value(depth + 1)? {
                Edn::Long(s) => Edn::Inst(
                    s.checked_mul(1000)
                        .ok_or_else(|| refused(format!("tag 1: {s} seconds is out of range")))?,
                ),
                Edn::Double(s) if s.is_finite() && (s * 1000.0).abs() < 9.0e15 => {
                    Edn::Inst((s * 1000.0).round() as i64)
                }
                other => return Err(refused(format!("tag 1 on {}", kind(&other)))),
            },
            POSITIVE_BIGNUM | NEGATIVE_BIGNUM => {
                let bytes = self.byte_string()?;
                let n = bignum_i128(&bytes, tag == NEGATIVE_BIGNUM).ok_or_else(|| {
                    refused("a big integer beyond 128 bits (Datalith's are at most that)".into())
                })?;
                Edn::BigInt(n)
            }
            DECIMAL_FRACTION => {
                if self.d.array().map_err(|e| self.failed(e))? != Some(2) {
                    return Err(refused("tag 4 holds [exponent, mantissa]".into()));
                }
                let Edn::Long(exponent) = self.value(depth + 1)? else {
                    return Err(refused("tag 4's exponent is not an integer".into()));
                };
                let mantissa = self.mantissa(at)?;
                BigDec::parse(&format!("{mantissa}E{exponent}"))
                    .map(Edn::BigDec)
                    .ok_or_else(|| refused("tag 4 out of a big decimal's range".into()))?
            }
            RATIONAL => {
                let parts = self.items(depth)?;
                let whole = |e: &Edn| match e {
                    Edn::Long(n) => Some(i128::from(*n)),
                    Edn::BigInt(n) => Some(*n),
                    _ => None,
                };
                match parts.as_slice() {
                    [n, d] => {
                        match (whole(n), whole(d)) {
                            (Some(n), Some(d)) if d > 0 => match Ratio::reduce(n, d) {
                                Some(Reduced::Fraction(r)) => Edn::Ratio(r),
                                Some(Reduced::Whole(w)) => match i64::try_from(w) {
                                    Ok(w) => Edn::Long(w),
                                    Err(_) => Edn::BigInt(w),
                                },
                                None => return Err(refused("tag 30 out of range".into())),
                            },
                            _ => return Err(refused(
                                "tag 30 holds [numerator, denominator], the denominator positive"
                                    .into(),
                            )),
                        }
                    }
                    _ => return Err(refused("tag 30 holds [numerator, denominator]".into())),
                }
            }
            REGEX => Edn::Regex(self.text()?),
            UUID => {
                let bytes = self.byte_string()?;
                Edn::Uuid(
                    <[u8; 16]>::try_from(bytes.as_slice())
                        .map_err(|_| refused(format!("tag 37 on {} bytes, not 16", bytes.len())))?,
                )
            }
            IDENTIFIER => Edn::Keyword(Keyword::parse(&self.name(at)?)),
            SYMBOL => Edn::Symbol(Keyword::parse(&self.name(at)?)),
            LIST => match self.value(depth + 1)? {
                Edn::Vector(items) => Edn::List(items),
                other => return Err(refused(format!("tag {LIST} on {}", kind(&other)))),
            },
            SET => match self.value(depth + 1)? {
                Edn::Vector(items) => Edn::Set(items),
                other => return Err(refused(format!("tag 258 on {}", kind(&other)))),
            },
            CHAR => {
                let text = self.text()?;
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Edn::Char(c),
                    _ => {
                        return Err(refused(format!(
                            "tag {CHAR} on {text:?}, not one character"
                        )))
                    }
                }
            }
            TAGGED => {
                let len = self.d.array().map_err(|e| self.failed(e))?;
                if len != Some(2) {
                    return Err(refused(format!("tag {TAGGED} holds [tag-text, value]")));
                }
                let name = self.name(at)?;
                let value = self.value(depth + 1)?;
                Edn::Tagged(Keyword::parse(&name), Box::new(value))
            }
            other => return Err(refused(format!("tag {other} is not one Datalith reads"))),
        })
    }

    /// A big decimal's mantissa as decimal text: an integer, or a bignum of any length up
    /// to [`MAX_BIGNUM_BYTES`] (a big decimal has as many digits as its text spelled).
    fn mantissa(&mut self, at: usize) -> Result<String> {
        if self.d.datatype().map_err(|e| self.failed(e))? != Type::Tag {
            return match self.value(0)? {
                Edn::Long(m) => Ok(m.to_string()),
                _ => Err(CborError {
                    at,
                    message: "tag 4's mantissa is not an integer".into(),
                }),
            };
        }
        let tag = self.d.tag().map_err(|e| self.failed(e))?.as_u64();
        if tag != POSITIVE_BIGNUM && tag != NEGATIVE_BIGNUM {
            return Err(CborError {
                at,
                message: format!("tag 4's mantissa is under tag {tag}, not a bignum"),
            });
        }
        let mut bytes = self.byte_string()?;
        if bytes.len() > MAX_BIGNUM_BYTES {
            return Err(CborError {
                at,
                message: format!(
                    "a bignum of {} bytes (at most {MAX_BIGNUM_BYTES} are read)",
                    bytes.len()
                ),
            });
        }
        Ok(match tag == NEGATIVE_BIGNUM {
            // -1 - m: the digits of m + 1.
            true => {
                increment(&mut bytes);
                format!("-{}", bytes_to_decimal(&bytes))
            }
            false => bytes_to_decimal(&bytes),
        })
    }

    /// A keyword's or symbol's text: not empty, no leading colon.
    fn name(&mut self, at: usize) -> Result<String> {
        let text = self.text()?;
        match text.is_empty() || text.starts_with(':') {
            true => Err(CborError {
                at,
                message: format!("{text:?} is not a name (written without a colon)"),
            }),
            false => Ok(text),
        }
    }
}

/// minicbor's error, at the position it names (else `at`).
fn failure(e: minicbor::decode::Error, at: usize) -> CborError {
    let at = e.position().unwrap_or(at);
    let message = match e.is_end_of_input() {
        true => "the bytes end inside a value".to_string(),
        false => e.to_string(),
    };
    CborError { at, message }
}

/// A bignum's value: the magnitude (tag 2), or -1 minus it (tag 3); `None` past 128 bits.
fn bignum_i128(bytes: &[u8], negative: bool) -> Option<i128> {
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    let bytes = &bytes[first..];
    if bytes.len() > 16 {
        return None;
    }
    let mut m: u128 = 0;
    for b in bytes {
        m = (m << 8) | u128::from(*b);
    }
    match negative {
        false => i128::try_from(m).ok(),
        // -1 - m, at least i128::MIN.
        true => i128::try_from(m).ok().map(|m| -1 - m),
    }
}

/// Adds one to a big-endian magnitude (growing it by a byte when it carries out).
fn increment(bytes: &mut Vec<u8>) {
    for b in bytes.iter_mut().rev() {
        let (v, carry) = b.overflowing_add(1);
        *b = v;
        if !carry {
            return;
        }
    }
    bytes.insert(0, 1);
}

/// A big-endian magnitude's decimal digits (divided by 10^9 a pass: nine digits each).
pub(super) fn bytes_to_decimal(bytes: &[u8]) -> String {
    const BILLION: u64 = 1_000_000_000;
    let mut n: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut groups: Vec<u32> = Vec::new();
    while !n.is_empty() {
        let mut rem = 0u64;
        for b in n.iter_mut() {
            let cur = (rem << 8) | u64::from(*b);
            *b = (cur / BILLION) as u8;
            rem = cur % BILLION;
        }
        groups.push(rem as u32);
        let first = n.iter().position(|b| *b != 0).unwrap_or(n.len());
        n.drain(..first);
    }
    let mut out = groups
        .last()
        .map_or_else(|| "0".to_string(), u32::to_string);
    for g in groups.iter().rev().skip(1) {
        out.push_str(&format!("{g:09}"));
    }
    out
}

/// What kind of value `e` is, for an error.
fn kind(e: &Edn) -> &'static str {
    match e {
        Edn::Nil => "null",
        Edn::Bool(_) => "a boolean",
        Edn::Long(_) | Edn::BigInt(_) => "an integer",
        Edn::Double(_) => "a float",
        Edn::String(_) => "a text string",
        Edn::Vector(_) => "an array",
        Edn::Map(_) => "a map",
        _ => "a tagged value",
    }
}
