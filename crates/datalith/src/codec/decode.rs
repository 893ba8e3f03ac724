//! Decoding what `encode` wrote. Input is never trusted: truncated or malformed bytes give a
//! [`CodecError`], never a panic.

use std::sync::Arc;

use super::encode::tag;
use super::value::{BigDec, Keyword, Value, F32, F64};

/// Bytes that are not a valid encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// Input ended early.
    #[error("truncated value at byte {offset}: expected {expected}")]
    Truncated {
        offset: usize,
        expected: &'static str,
    },
    /// An unknown type tag.
    #[error("unknown type tag 0x{tag:02x} at byte {offset}")]
    UnknownTag { offset: usize, tag: u8 },
    /// Bytes that no encoder produces.
    #[error("malformed {what} at byte {offset}")]
    Malformed { offset: usize, what: &'static str },
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, expected: &'static str) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.b.len());
        match end {
            Some(end) => {
                let s = &self.b[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(CodecError::Truncated {
                offset: self.pos,
                expected,
            }),
        }
    }

    fn array<const N: usize>(&mut self, expected: &'static str) -> Result<[u8; N], CodecError> {
        let s = self.take(N, expected)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn byte(&mut self, expected: &'static str) -> Result<u8, CodecError> {
        Ok(self.take(1, expected)?[0])
    }

    fn unescape(&mut self) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        loop {
            let b = self.byte("an escaped byte string")?;
            if b != 0 {
                out.push(b);
                continue;
            }
            match self.byte("an escape or terminator")? {
                0x00 => return Ok(out),
                0xFF => out.push(0),
                _ => {
                    return Err(CodecError::Malformed {
                        offset: self.pos - 1,
                        what: "escape",
                    })
                }
            }
        }
    }

    fn text(&mut self) -> Result<String, CodecError> {
        let at = self.pos;
        String::from_utf8(self.unescape()?).map_err(|_| CodecError::Malformed {
            offset: at,
            what: "UTF-8 text",
        })
    }

    fn value(&mut self, depth: u32) -> Result<Value, CodecError> {
        let at = self.pos;
        let t = self.byte("a type tag")?;
        Ok(match t {
            tag::BOOLEAN => match self.byte("a boolean")? {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => {
                    return Err(CodecError::Malformed {
                        offset: at + 1,
                        what: "boolean",
                    })
                }
            },
            tag::LONG => Value::Long(decode_i64(self.array("8 bytes of long")?)),
            tag::BIGINT => {
                let u = u128::from_be_bytes(self.array("16 bytes of bigint")?);
                Value::BigInt((u ^ (1u128 << 127)) as i128)
            }
            tag::FLOAT => {
                let bits = u32::from_be_bytes(self.array("4 bytes of float")?);
                let bits = if bits >> 31 == 1 {
                    bits & !(1 << 31)
                } else {
                    !bits
                };
                let x = F32::new(f32::from_bits(bits)).ok_or(CodecError::Malformed {
                    offset: at,
                    what: "float (NaN)",
                })?;
                Value::Float(x)
            }
            tag::DOUBLE => {
                let x = decode_f64(self.array("8 bytes of double")?);
                Value::Double(F64::new(x).ok_or(CodecError::Malformed {
                    offset: at,
                    what: "double (NaN)",
                })?)
            }
            tag::BIGDEC => self.bigdec(at)?,
            tag::INSTANT => Value::Instant(decode_i64(self.array("8 bytes of instant")?)),
            tag::UUID => Value::Uuid(self.array("16 bytes of uuid")?),
            tag::STRING => Value::String(Arc::from(self.text()?)),
            tag::KEYWORD | tag::SYMBOL => {
                let ns = self.text()?;
                let name = self.text()?;
                let k = Keyword::new(if ns.is_empty() { None } else { Some(&ns) }, &name);
                if t == tag::KEYWORD {
                    Value::Keyword(k)
                } else {
                    Value::Symbol(k)
                }
            }
            tag::REF => Value::Ref(u64::from_be_bytes(self.array("8 bytes of ref")?)),
            tag::BYTES => Value::Bytes(Arc::from(self.unescape()?)),
            tag::TUPLE => {
                if depth > crate::limits::MAX_TUPLE_DEPTH {
                    return Err(CodecError::Malformed {
                        offset: at,
                        what: "tuple nested too deeply",
                    });
                }
                let mut items = Vec::new();
                loop {
                    match self.byte("a tuple element marker")? {
                        0x00 => break,
                        0x01 => items.push(None),
                        0x02 => items.push(Some(self.value(depth + 1)?)),
                        _ => {
                            return Err(CodecError::Malformed {
                                offset: self.pos - 1,
                                what: "tuple element marker",
                            })
                        }
                    }
                }
                Value::Tuple(items)
            }
            other => {
                return Err(CodecError::UnknownTag {
                    offset: at,
                    tag: other,
                })
            }
        })
    }

    fn bigdec(&mut self, at: usize) -> Result<Value, CodecError> {
        let bad = CodecError::Malformed {
            offset: at,
            what: "bigdec",
        };
        match self.byte("a bigdec sign")? {
            1 => Ok(Value::BigDec(BigDec::from_parts(false, "", 0))),
            s @ (0 | 2) => {
                let neg = s == 0;
                let mut exp = self.array::<4>("a bigdec exponent")?;
                if neg {
                    exp.iter_mut().for_each(|b| *b = !*b);
                }
                let exponent = (u32::from_be_bytes(exp) ^ (1 << 31)) as i32;
                let end = if neg { 0xFF } else { 0x00 };
                let mut digits = String::new();
                loop {
                    let b = self.byte("bigdec digits")?;
                    if b == end {
                        break;
                    }
                    let d = if neg { !b } else { b };
                    if !d.is_ascii_digit() {
                        return Err(bad);
                    }
                    digits.push(d as char);
                }
                if digits.is_empty() || digits.starts_with('0') || digits.ends_with('0') {
                    return Err(bad);
                }
                Ok(Value::BigDec(BigDec::from_parts(neg, &digits, exponent)))
            }
            _ => Err(bad),
        }
    }
}

/// Decodes one value from the start of `bytes`; returns it and the bytes used.
pub fn decode(bytes: &[u8]) -> Result<(Value, usize), CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

/// Inverse of `encode_i64`.
#[inline]
pub fn decode_i64(b: [u8; 8]) -> i64 {
    (u64::from_be_bytes(b) ^ (1 << 63)) as i64
}

/// Inverse of `encode_f64`.
#[inline]
pub fn decode_f64(b: [u8; 8]) -> f64 {
    let bits = u64::from_be_bytes(b);
    let bits = if bits >> 63 == 1 {
        bits & !(1 << 63)
    } else {
        !bits
    };
    f64::from_bits(bits)
}
