//! Decoding what `encode` wrote. Input is never trusted: truncated or malformed bytes give a
//! [`CodecError`], never a panic. Decoding is also strict: it accepts exactly the bytes that
//! `encode` produces (one canonical encoding per value), so a decoded value re-encodes to the
//! bytes it came from.

use std::borrow::Cow;
use std::sync::Arc;

use super::encode::tag;
use super::keyword::Keyword;
use super::number::{normalized_digits, BigDec, F32, F64};
use super::value::Value;
use super::value_type::ValueType;

/// Bytes that are not a valid encoding. Offsets count from the start of the decoded slice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// Input ended early.
    #[error("truncated value at byte {offset}: expected {expected}")]
    Truncated {
        /// Where the missing bytes should have started.
        offset: usize,
        /// What was being read.
        expected: &'static str,
    },
    /// An unknown type tag.
    #[error("unknown type tag 0x{tag:02x} at byte {offset}")]
    UnknownTag {
        /// Where the tag is.
        offset: usize,
        /// The byte found.
        tag: u8,
    },
    /// A valid tag, but not the type the caller asked for (typed helpers such as
    /// [`decode_long`]).
    #[error("expected a {} at byte {offset}, found tag 0x{tag:02x}", expected.ident())]
    WrongType {
        /// Where the tag is.
        offset: usize,
        /// The type asked for.
        expected: ValueType,
        /// The tag found.
        tag: u8,
    },
    /// Bytes that no encoder produces.
    #[error("malformed {what} at byte {offset}")]
    Malformed {
        /// Where the bad bytes start.
        offset: usize,
        /// What they should have been.
        what: &'static str,
    },
    /// Bytes left over after a value that should have filled its slice.
    #[error("{extra} trailing bytes after the value ending at byte {offset}")]
    TrailingBytes {
        /// Where the value ended.
        offset: usize,
        /// How many bytes follow it.
        extra: usize,
    },
}

impl CodecError {
    /// The error's stable category (see `crate::error`): decoding reads stored bytes, so bytes
    /// no encoder writes are corrupt data.
    pub fn category(&self) -> crate::error::Category {
        match self {
            CodecError::Truncated { .. }
            | CodecError::UnknownTag { .. }
            | CodecError::WrongType { .. }
            | CodecError::Malformed { .. }
            | CodecError::TrailingBytes { .. } => crate::error::CORRUPT,
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<crate::error::Field> {
        let offset = match self {
            CodecError::Truncated { offset, .. }
            | CodecError::UnknownTag { offset, .. }
            | CodecError::WrongType { offset, .. }
            | CodecError::Malformed { offset, .. }
            | CodecError::TrailingBytes { offset, .. } => *offset,
        };
        vec![("offset", crate::edn::Edn::Long(offset as i64))]
    }
}

/// Decodes one value from the start of `bytes`; returns it and the bytes used.
pub fn decode(bytes: &[u8]) -> Result<(Value, usize), CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

/// Decodes a value that must fill `bytes` exactly.
pub fn decode_exact(bytes: &[u8]) -> Result<Value, CodecError> {
    let (v, n) = decode(bytes)?;
    if n != bytes.len() {
        return Err(CodecError::TrailingBytes {
            offset: n,
            extra: bytes.len() - n,
        });
    }
    Ok(v)
}

/// The length of the encoded value at the start of `bytes`, checked as strictly as
/// [`decode`] but without building the value (so without allocating, unless a string holds a
/// NUL). For walking and validating raw index bytes.
pub fn skip(bytes: &[u8]) -> Result<usize, CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    r.skip_value(0)?;
    Ok(r.pos)
}

/// The raw encodings of a tuple's elements (`None` for nil), borrowed from `bytes`, and the
/// length of the whole tuple.
pub fn tuple_items(bytes: &[u8]) -> Result<(Vec<Option<&[u8]>>, usize), CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    r.expect_tag(ValueType::Tuple)?;
    let mut items = Vec::new();
    loop {
        match r.byte("a tuple element marker")? {
            tag::TUPLE_END => return Ok((items, r.pos)),
            tag::TUPLE_NIL => items.push(None),
            tag::TUPLE_ITEM => {
                let start = r.pos;
                r.skip_value(1)?;
                items.push(Some(&bytes[start..r.pos]));
            }
            _ => {
                return Err(CodecError::Malformed {
                    offset: r.pos - 1,
                    what: "tuple element marker",
                })
            }
        }
    }
}

/// The type of the encoded value at the start of `bytes` (its tag only; the rest is not
/// checked).
pub fn peek_type(bytes: &[u8]) -> Result<ValueType, CodecError> {
    let t = *bytes.first().ok_or(CodecError::Truncated {
        offset: 0,
        expected: "a type tag",
    })?;
    tag::value_type(t).ok_or(CodecError::UnknownTag { offset: 0, tag: t })
}

/// Decodes a long from the start of `bytes` (the 9 bytes of `encode_long`).
#[inline]
pub fn decode_long(bytes: &[u8]) -> Result<i64, CodecError> {
    fixed9(bytes, ValueType::Long).map(decode_i64)
}

/// Decodes an instant (epoch milliseconds) from the start of `bytes`.
#[inline]
pub fn decode_instant(bytes: &[u8]) -> Result<i64, CodecError> {
    fixed9(bytes, ValueType::Instant).map(decode_i64)
}

/// Decodes a ref (entity id) from the start of `bytes`.
#[inline]
pub fn decode_ref(bytes: &[u8]) -> Result<u64, CodecError> {
    fixed9(bytes, ValueType::Ref).map(u64::from_be_bytes)
}

/// Decodes a string from the start of `bytes` without allocating unless it contains a NUL;
/// returns it and the bytes used.
pub fn decode_str(bytes: &[u8]) -> Result<(Cow<'_, str>, usize), CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    r.expect_tag(ValueType::String)?;
    let s = r.text()?;
    Ok((s, r.pos))
}

fn fixed9(bytes: &[u8], t: ValueType) -> Result<[u8; 8], CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    r.expect_tag(t)?;
    r.array("8 bytes")
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

    fn expect_tag(&mut self, t: ValueType) -> Result<(), CodecError> {
        let at = self.pos;
        let found = self.byte("a type tag")?;
        if found == tag::of(t) {
            Ok(())
        } else if tag::value_type(found).is_some() {
            Err(CodecError::WrongType {
                offset: at,
                expected: t,
                tag: found,
            })
        } else {
            Err(CodecError::UnknownTag {
                offset: at,
                tag: found,
            })
        }
    }

    /// An escaped byte string (see `encode::escaped`), borrowed when it has no escapes.
    fn unescape(&mut self) -> Result<Cow<'a, [u8]>, CodecError> {
        let start = self.pos;
        let rest = &self.b[start..];
        let mut owned: Option<Vec<u8>> = None;
        let mut i = 0;
        loop {
            let Some(z) = rest[i..].iter().position(|b| *b == 0) else {
                return Err(CodecError::Truncated {
                    offset: self.b.len(),
                    expected: "a 0x00 0x00 terminator",
                });
            };
            let zero = i + z;
            match rest.get(zero + 1) {
                Some(0x00) => {
                    self.pos = start + zero + 2;
                    return Ok(match owned {
                        Some(mut v) => {
                            v.extend_from_slice(&rest[i..zero]);
                            Cow::Owned(v)
                        }
                        None => Cow::Borrowed(&rest[..zero]),
                    });
                }
                Some(0xFF) => {
                    let v = owned.get_or_insert_with(|| Vec::with_capacity(rest.len()));
                    v.extend_from_slice(&rest[i..=zero]);
                    i = zero + 2;
                }
                Some(_) => {
                    return Err(CodecError::Malformed {
                        offset: start + zero + 1,
                        what: "escape (0x00 must be followed by 0x00 or 0xFF)",
                    })
                }
                None => {
                    return Err(CodecError::Truncated {
                        offset: self.b.len(),
                        expected: "an escape or terminator",
                    })
                }
            }
        }
    }

    fn text(&mut self) -> Result<Cow<'a, str>, CodecError> {
        let at = self.pos;
        let bad = |_| CodecError::Malformed {
            offset: at,
            what: "UTF-8 text",
        };
        Ok(match self.unescape()? {
            Cow::Borrowed(b) => Cow::Borrowed(std::str::from_utf8(b).map_err(bad)?),
            Cow::Owned(v) => Cow::Owned(String::from_utf8(v).map_err(|e| bad(e.utf8_error()))?),
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
                        what: "boolean (0 or 1)",
                    })
                }
            },
            tag::LONG => Value::Long(decode_i64(self.array("8 bytes of long")?)),
            tag::BIGINT => Value::BigInt(Box::new(decode_i128(self.array("16 bytes of bigint")?))),
            tag::FLOAT => {
                let bytes = self.array("4 bytes of float")?;
                let x = F32::new(decode_f32(bytes))
                    .filter(|x| super::encode::encode_f32(x.get()) == bytes)
                    .ok_or(CodecError::Malformed {
                        offset: at + 1,
                        what: "float (NaN or -0.0)",
                    })?;
                Value::Float(x)
            }
            tag::DOUBLE => {
                let bytes = self.array("8 bytes of double")?;
                let x = F64::new(decode_f64(bytes))
                    .filter(|x| super::encode::encode_f64(x.get()) == bytes)
                    .ok_or(CodecError::Malformed {
                        offset: at + 1,
                        what: "double (NaN or -0.0)",
                    })?;
                Value::Double(x)
            }
            tag::BIGDEC => self.bigdec()?,
            tag::INSTANT => Value::Instant(decode_i64(self.array("8 bytes of instant")?)),
            tag::UUID => Value::Uuid(self.array("16 bytes of uuid")?),
            tag::STRING => Value::String(Arc::from(self.text()?.as_ref())),
            tag::KEYWORD | tag::SYMBOL => {
                let ns = self.text()?;
                let name = self.text()?;
                let k = Keyword::new(Some(&ns), &name);
                if t == tag::KEYWORD {
                    Value::Keyword(k)
                } else {
                    Value::Symbol(k)
                }
            }
            tag::REF => Value::Ref(u64::from_be_bytes(self.array("8 bytes of ref")?)),
            tag::BYTES => Value::Bytes(Arc::from(self.unescape()?.as_ref())),
            tag::TUPLE => {
                // Bounded recursion on untrusted input.
                if depth >= crate::limits::MAX_TUPLE_DEPTH {
                    return Err(CodecError::Malformed {
                        offset: at,
                        what: "tuple nested too deeply",
                    });
                }
                let mut items = Vec::new();
                loop {
                    match self.byte("a tuple element marker")? {
                        tag::TUPLE_END => break,
                        tag::TUPLE_NIL => items.push(None),
                        tag::TUPLE_ITEM => items.push(Some(self.value(depth + 1)?)),
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

    /// Checks one value like `value` does, without building it.
    fn skip_value(&mut self, depth: u32) -> Result<(), CodecError> {
        let at = self.pos;
        match self.b.get(at) {
            Some(&tag::STRING) => {
                self.pos += 1;
                self.text().map(|_| ())
            }
            Some(&tag::BYTES) => {
                self.pos += 1;
                self.unescape().map(|_| ())
            }
            Some(&(tag::KEYWORD | tag::SYMBOL)) => {
                self.pos += 1;
                self.text()?;
                self.text().map(|_| ())
            }
            Some(&tag::TUPLE) => {
                if depth >= crate::limits::MAX_TUPLE_DEPTH {
                    return Err(CodecError::Malformed {
                        offset: at,
                        what: "tuple nested too deeply",
                    });
                }
                self.pos += 1;
                loop {
                    match self.byte("a tuple element marker")? {
                        tag::TUPLE_END => return Ok(()),
                        tag::TUPLE_NIL => {}
                        tag::TUPLE_ITEM => self.skip_value(depth + 1)?,
                        _ => {
                            return Err(CodecError::Malformed {
                                offset: self.pos - 1,
                                what: "tuple element marker",
                            })
                        }
                    }
                }
            }
            // Fixed width (nothing to allocate) or rare: decode and drop.
            _ => self.value(depth).map(|_| ()),
        }
    }

    fn bigdec(&mut self) -> Result<Value, CodecError> {
        let at = self.pos;
        let bad = |offset, what| CodecError::Malformed { offset, what };
        match self.byte("a bigdec sign")? {
            1 => Ok(Value::BigDec(BigDec::zero())),
            s @ (0 | 2) => {
                let neg = s == 0;
                let mut exp = self.array::<4>("a bigdec exponent")?;
                if neg {
                    exp.iter_mut().for_each(|b| *b = !*b);
                }
                let exponent = (u32::from_be_bytes(exp) ^ (1 << 31)) as i32;
                let end = if neg { 0xFF } else { 0x00 };
                let start = self.pos;
                let Some(len) = self.b[start..].iter().position(|b| *b == end) else {
                    return Err(CodecError::Truncated {
                        offset: self.b.len(),
                        expected: "bigdec digits and terminator",
                    });
                };
                let raw = self.take(len, "bigdec digits")?;
                self.pos += 1; // the terminator, found above
                let digits: String = raw
                    .iter()
                    .map(|b| char::from(if neg { !b } else { *b }))
                    .collect();
                if digits.is_empty() || !normalized_digits(&digits) {
                    return Err(bad(start, "bigdec digits"));
                }
                Ok(Value::BigDec(BigDec::from_parts(neg, &digits, exponent)))
            }
            _ => Err(bad(at, "bigdec sign (0, 1 or 2)")),
        }
    }
}

/// Inverse of `encode_i64`.
#[inline]
pub fn decode_i64(b: [u8; 8]) -> i64 {
    (u64::from_be_bytes(b) ^ (1 << 63)) as i64
}

/// Inverse of `encode_i128`.
#[inline]
pub fn decode_i128(b: [u8; 16]) -> i128 {
    (u128::from_be_bytes(b) ^ (1 << 127)) as i128
}

/// Inverse of `encode_f64` (may return NaN or -0.0 for bytes no encoder writes).
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

/// Inverse of `encode_f32` (may return NaN or -0.0 for bytes no encoder writes).
#[inline]
pub fn decode_f32(b: [u8; 4]) -> f32 {
    let bits = u32::from_be_bytes(b);
    let bits = if bits >> 31 == 1 {
        bits & !(1 << 31)
    } else {
        !bits
    };
    f32::from_bits(bits)
}
