//! Reading one EDN value from CBOR (the table in `mod.rs`); the bytes are not trusted. Each
//! item's head is read from its initial byte, and every length is checked against the bytes
//! left before anything is taken or reserved.

use super::encode::{
    ARRAY, BREAK, BYTES, FALSE, FLOAT64, INDEFINITE, MAP, NEGATIVE, NULL, SIMPLE, TAG, TEXT, TRUE,
    UNSIGNED,
};
use super::*;
use crate::codec::{BigDec, Keyword, Ratio, Reduced};
use crate::edn::{slot, Edn};
use crate::limits::MAX_EDN_DEPTH;
use std::borrow::Cow;

/// Why bytes are not one CBOR value Datalith reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CBOR at byte {at}: {message}")]
#[non_exhaustive]
pub struct CborError {
    /// The offset of the item refused, or where the bytes ended.
    pub at: usize,
    /// What is wrong with it.
    pub message: String,
}

/// The one value `bytes` hold (nothing may follow it).
pub fn read_cbor(bytes: &[u8]) -> Result<Edn, CborError> {
    let mut reader = Reader {
        b: bytes,
        at: 0,
        names: Vec::new(),
    };
    let value = reader.value(0)?;
    if reader.at != bytes.len() {
        return Err(reader.error_at(reader.at, "bytes after the value"));
    }
    Ok(value)
}

/// The map `bytes` hold, but for the value of its key `deferred` (a keyword, `:tx-data`),
/// which is only checked to be one whole item: its range in `bytes` comes back instead, for
/// [`read_cbor`] to read when it is wanted. A transaction's report is mostly its datoms,
/// which many callers never look at (W over the server at batch 100: reading them took
/// ~39 us of a ~570 us call). `bytes` that hold something other than a map are read whole.
pub fn read_cbor_map_deferring(
    bytes: &[u8],
    deferred: &str,
) -> Result<(Edn, Option<std::ops::Range<usize>>), CborError> {
    let mut reader = Reader {
        b: bytes,
        at: 0,
        names: Vec::new(),
    };
    let head = reader.head()?;
    if head.major != MAP {
        return read_cbor(bytes).map(|v| (v, None));
    }
    let key = Edn::kw(deferred);
    let mut pairs = Vec::new();
    let mut range = None;
    let mut entry = |r: &mut Reader<'_>| -> Res<()> {
        let at = r.at;
        let k = r.value(1)?;
        if k != key {
            pairs.push((k, r.value(1)?));
            return Ok(());
        }
        if range.is_some() {
            let k = crate::edn::to_edn_string(&k);
            return Err(r.error_at(at, format!("a map repeats its key {k}")));
        }
        let start = r.at;
        r.skip(1)?;
        range = Some(start..r.at);
        Ok(())
    };
    match head.arg {
        Some(n) => {
            let n = reader.count(0, n, 2)?;
            for _ in 0..n {
                entry(&mut reader)?;
            }
        }
        None => {
            while !reader.at_break()? {
                entry(&mut reader)?;
            }
        }
    }
    if let Some(k) = crate::edn::duplicate::repeated_key(&pairs) {
        let k = crate::edn::to_edn_string(k);
        return Err(reader.error_at(0, format!("a map repeats its key {k}")));
    }
    if reader.at != bytes.len() {
        return Err(reader.error_at(reader.at, "bytes after the value"));
    }
    Ok((Edn::Map(pairs), range))
}

struct Reader<'b> {
    b: &'b [u8],
    at: usize,
    /// The keywords and symbols read last, by their text: an answer repeats a few names many
    /// times (a report's datoms, a map's keys in every row), and a name made anew costs
    /// three allocations where a clone costs none.
    names: Vec<(Box<str>, Keyword)>,
}

/// Names kept in [`Reader::names`] (the EDN reader keeps as many).
const NAMES_KEPT: usize = 16;

/// What is left of an array, map or tag that [`Reader::skip`] is inside.
enum Open {
    /// This many items (a map's keys and values counted apart; a tag's one item).
    Items(usize),
    /// Items up to a break; in a map, a value follows each key.
    UntilBreak { pairs: bool, key_read: bool },
}

type Res<T> = Result<T, CborError>;

/// An item's head: its major type, and its argument (`None`: indefinite length).
struct Head {
    major: u8,
    info: u8,
    arg: Option<u64>,
}

impl<'b> Reader<'b> {
    fn error_at(&self, at: usize, message: impl Into<String>) -> CborError {
        CborError {
            at,
            message: message.into(),
        }
    }

    /// The next `n` bytes.
    #[inline(always)]
    fn take(&mut self, n: usize) -> Res<&'b [u8]> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.b.len());
        match end {
            Some(end) => {
                let s = &self.b[self.at..end];
                self.at = end;
                Ok(s)
            }
            None => Err(self.error_at(self.b.len(), "the bytes end inside a value")),
        }
    }

    /// Inlined: returned through memory, a head (or its error) cost a store-forwarding
    /// stall on every item.
    #[inline(always)]
    fn head(&mut self) -> Res<Head> {
        let first = self.take(1)?[0];
        let (major, info) = (first & 0xe0, first & 0x1f);
        let arg = match info {
            0..=23 => Some(u64::from(info)),
            24 => Some(u64::from(self.take(1)?[0])),
            25 => Some(u64::from(u16::from_be_bytes(self.fixed()?))),
            26 => Some(u64::from(u32::from_be_bytes(self.fixed()?))),
            27 => Some(u64::from_be_bytes(self.fixed()?)),
            INDEFINITE => None,
            _ => return Err(self.error_at(self.at - 1, format!("reserved byte 0x{first:02x}"))),
        };
        Ok(Head { major, info, arg })
    }

    #[inline(always)]
    fn fixed<const N: usize>(&mut self) -> Res<[u8; N]> {
        let s = self.take(N)?;
        let mut out = [0; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    /// Refuses a count of items larger than the bytes left could hold (each takes one at
    /// least), before anything is reserved for them.
    fn count(&self, at: usize, n: u64, per_item: u64) -> Res<usize> {
        let left = (self.b.len() - self.at) as u64;
        let what = match per_item {
            1 => "items",
            _ => "entries",
        };
        match n.checked_mul(per_item).is_some_and(|need| need <= left) {
            true => Ok(n as usize),
            false => Err(self.error_at(at, format!("{n} {what} counted, {left} bytes left"))),
        }
    }

    /// Refuses an item nested `MAX_EDN_DEPTH` deep (each level costs stack to read).
    fn within_depth(&self, depth: usize) -> Res<()> {
        match depth < MAX_EDN_DEPTH {
            true => Ok(()),
            false => Err(self.error_at(
                self.at,
                format!("nested deeper than {MAX_EDN_DEPTH} levels"),
            )),
        }
    }

    /// Passes over the next item, checking only its shape: heads, lengths, nesting (what it
    /// holds is checked when it is read).
    ///
    /// A loop over a list of the open arrays, maps and tags rather than a call per level: it
    /// runs on every datom of a deferred report, where a call and a stack check per item cost
    /// as much as reading the items.
    fn skip(&mut self, depth: usize) -> Res<()> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            self.within_depth(depth + open.len())?;
            let at = self.at;
            let head = self.head()?;
            match (head.major, head.arg) {
                (UNSIGNED | NEGATIVE | TAG, None) => {
                    return Err(self.error_at(at, "an indefinite-length integer or tag"))
                }
                (BYTES | TEXT, Some(n)) => {
                    let n =
                        usize::try_from(n).map_err(|_| self.error_at(at, "a string too long"))?;
                    self.take(n)?;
                }
                // Chunks of the same kind, each of a definite length, up to a break.
                (BYTES | TEXT, None) => {
                    while !self.at_break()? {
                        let chunk_at = self.at;
                        let chunk = self.head()?;
                        match (chunk.major == head.major, chunk.arg) {
                            (true, Some(n)) => {
                                let n = usize::try_from(n)
                                    .map_err(|_| self.error_at(chunk_at, "a string too long"))?;
                                self.take(n)?;
                            }
                            _ => {
                                return Err(
                                    self.error_at(chunk_at, "a string's chunk of another kind")
                                )
                            }
                        }
                    }
                }
                (ARRAY | MAP, Some(n)) => {
                    let per_item = if head.major == MAP { 2 } else { 1 };
                    let items = self.count(at, n, per_item)? * per_item as usize;
                    if items > 0 {
                        open.push(Open::Items(items));
                        continue;
                    }
                }
                (ARRAY | MAP, None) => {
                    let empty = self.at_break()?;
                    if !empty {
                        open.push(Open::UntilBreak {
                            pairs: head.major == MAP,
                            key_read: false,
                        });
                        continue;
                    }
                }
                (TAG, Some(_)) => {
                    open.push(Open::Items(1));
                    continue;
                }
                (SIMPLE, None) => return Err(self.error_at(at, "a break where an item belongs")),
                // Integers and simple values: the head was all of it.
                _ => {}
            }
            // An item is whole: close each open item it completes.
            loop {
                match open.last_mut() {
                    None => return Ok(()),
                    Some(Open::Items(left)) => {
                        *left -= 1;
                        if *left > 0 {
                            break;
                        }
                    }
                    // A map's value follows its key whatever the next byte is.
                    Some(Open::UntilBreak {
                        pairs: true,
                        key_read: key_read @ false,
                    }) => {
                        *key_read = true;
                        break;
                    }
                    Some(Open::UntilBreak { key_read, .. }) => {
                        *key_read = false;
                        if !self.at_break()? {
                            break;
                        }
                    }
                }
                open.pop();
            }
        }
    }

    fn value(&mut self, depth: usize) -> Res<Edn> {
        let mut one = Vec::with_capacity(1);
        self.value_into(&mut one, depth)?;
        one.pop()
            .ok_or_else(|| self.error_at(self.at, "no value was read"))
    }

    /// The next value, pushed onto `out`: made where it is stored, not returned by value
    /// through a `Result` and moved again (a store-forwarding stall on every item of a
    /// large answer, as the EDN reader found).
    fn value_into(&mut self, out: &mut Vec<Edn>, depth: usize) -> Res<()> {
        self.within_depth(depth)?;
        let at = self.at;
        let head = self.head()?;
        let definite = |head: &Head, what: &str| {
            head.arg
                .ok_or_else(|| self.error_at(at, format!("an indefinite-length {what}")))
        };
        match head.major {
            UNSIGNED => {
                let n = definite(&head, "integer")?;
                match i64::try_from(n) {
                    Ok(n) => slot::push_long(out, n),
                    Err(_) => out.push(Edn::BigInt(i128::from(n))),
                }
            }
            NEGATIVE => {
                let n = definite(&head, "integer")?;
                // -1 - n.
                match i64::try_from(n) {
                    Ok(n) => slot::push_long(out, -1 - n),
                    Err(_) => out.push(Edn::BigInt(-1 - i128::from(n))),
                }
            }
            BYTES => {
                return Err(self.error_at(at, "a byte string outside a tag (tag 37 for a UUID)"))
            }
            TEXT => slot::push_string(out, self.text_of(at, head)?),
            // Collections and tags recurse, each on enough stack (`stack::deep`): nesting
            // is the sender's to choose, up to `MAX_EDN_DEPTH`.
            ARRAY => {
                let items = crate::stack::deep(|| self.items_of(at, head, depth))?;
                slot::push_vector(out, items);
            }
            MAP => out.push(crate::stack::deep(|| self.map_of(at, head, depth))?),
            TAG => {
                let tag = definite(&head, "tag")?;
                crate::stack::deep(|| self.tag_into(out, at, tag, depth))?;
            }
            _ => out.push(self.simple(at, head)?),
        }
        Ok(())
    }

    /// A value under `tag`, pushed onto `out`.
    fn tag_into(&mut self, out: &mut Vec<Edn>, at: usize, tag: u64, depth: usize) -> Res<()> {
        if tag != SET {
            out.push(self.tagged(at, tag, depth)?);
            return Ok(());
        }
        // A set's items read straight into it (a query's answer is one).
        let items_at = self.at;
        let items = self.head()?;
        if items.major != ARRAY {
            return Err(self.error_at(at, "tag 258 on something other than an array"));
        }
        let items = self.items_of(items_at, items, depth + 1)?;
        out.push(Edn::Set(items));
        Ok(())
    }

    /// Major type 7: booleans, null, floats.
    fn simple(&mut self, at: usize, head: Head) -> Res<Edn> {
        let first = self.b[at];
        Ok(match first {
            FALSE => Edn::Bool(false),
            TRUE => Edn::Bool(true),
            NULL => Edn::Nil,
            FLOAT64 => Edn::Double(f64::from_bits(head.arg.unwrap_or_default())),
            0xfa => Edn::Double(f64::from(f32::from_bits(
                head.arg.unwrap_or_default() as u32
            ))),
            0xf9 => Edn::Double(half(head.arg.unwrap_or_default() as u16)),
            BREAK => return Err(self.error_at(at, "a break outside an indefinite-length item")),
            _ => {
                return Err(self.error_at(at, format!("simple value {} is no EDN value", head.info)))
            }
        })
    }

    /// A text string's content (definite, or indefinite: definite chunks up to a break).
    fn text_of(&mut self, at: usize, head: Head) -> Res<String> {
        self.text_in_place(at, head).map(Cow::into_owned)
    }

    /// A text string's text, borrowed from the bytes when it is in one piece.
    fn text_in_place(&mut self, at: usize, head: Head) -> Res<Cow<'b, str>> {
        let not_utf8 = |e: &dyn std::fmt::Display| CborError {
            at,
            message: format!("a text string that is not UTF-8 ({e})"),
        };
        match self.string_bytes(at, head, TEXT)? {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes)
                .map(Cow::Borrowed)
                .map_err(|e| not_utf8(&e)),
            Cow::Owned(bytes) => String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|e| not_utf8(&e)),
        }
    }

    fn string_bytes(&mut self, at: usize, head: Head, major: u8) -> Res<Cow<'b, [u8]>> {
        match head.arg {
            Some(n) => {
                let left = self.b.len() - self.at;
                match usize::try_from(n).ok().filter(|n| *n <= left) {
                    Some(n) => Ok(Cow::Borrowed(self.take(n)?)),
                    None => {
                        Err(self.error_at(at, format!("a string of {n} bytes, {left} bytes left")))
                    }
                }
            }
            None => {
                let mut out = Vec::new();
                loop {
                    let chunk_at = self.at;
                    if self.take(1).map(|b| b[0])? == BREAK {
                        return Ok(Cow::Owned(out));
                    }
                    self.at = chunk_at;
                    let chunk = self.head()?;
                    match (chunk.major == major, chunk.arg) {
                        (true, Some(n)) => {
                            let n = self.count(chunk_at, n, 1)?;
                            out.extend_from_slice(self.take(n)?);
                        }
                        _ => {
                            return Err(self.error_at(
                                chunk_at,
                                "an indefinite-length string's chunk is not a definite string of its kind",
                            ))
                        }
                    }
                }
            }
        }
    }

    /// The next item, which must be a text string.
    fn text(&mut self) -> Res<String> {
        let at = self.at;
        let head = self.head()?;
        match head.major {
            TEXT => self.text_of(at, head),
            _ => Err(self.error_at(at, "a text string belongs here")),
        }
    }

    /// The next item, which must be a byte string.
    fn byte_string(&mut self) -> Res<Vec<u8>> {
        let at = self.at;
        let head = self.head()?;
        match head.major {
            BYTES => self.string_bytes(at, head, BYTES).map(Cow::into_owned),
            _ => Err(self.error_at(at, "a byte string belongs here")),
        }
    }

    fn items_of(&mut self, at: usize, head: Head, depth: usize) -> Res<Vec<Edn>> {
        match head.arg {
            Some(n) => {
                let n = self.count(at, n, 1)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    self.value_into(&mut items, depth + 1)?;
                }
                Ok(items)
            }
            None => {
                let mut items = Vec::new();
                while !self.at_break()? {
                    self.value_into(&mut items, depth + 1)?;
                }
                Ok(items)
            }
        }
    }

    fn map_of(&mut self, at: usize, head: Head, depth: usize) -> Res<Edn> {
        let mut pairs = Vec::new();
        match head.arg {
            Some(n) => {
                let n = self.count(at, n, 2)?;
                pairs.reserve(n);
                for _ in 0..n {
                    let k = self.value(depth + 1)?;
                    pairs.push((k, self.value(depth + 1)?));
                }
            }
            None => {
                while !self.at_break()? {
                    let k = self.value(depth + 1)?;
                    pairs.push((k, self.value(depth + 1)?));
                }
            }
        }
        if let Some(k) = crate::edn::duplicate::repeated_key(&pairs) {
            let k = crate::edn::to_edn_string(k);
            return Err(self.error_at(at, format!("a map repeats its key {k}")));
        }
        Ok(Edn::Map(pairs))
    }

    /// Whether an indefinite collection ends here (its break, then consumed).
    fn at_break(&mut self) -> Res<bool> {
        match self.b.get(self.at) {
            Some(&BREAK) => {
                self.at += 1;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(self.error_at(self.at, "the bytes end inside a value")),
        }
    }

    /// The head of an array of exactly two items, after a tag that `holds` them.
    fn pair_head(&mut self, tag: u64, holds: &str) -> Res<()> {
        let at = self.at;
        let head = self.head()?;
        match head.major == ARRAY && head.arg == Some(2) {
            true => Ok(()),
            false => Err(self.error_at(at, format!("tag {tag} holds {holds}"))),
        }
    }

    /// An array of exactly two items, after a tag that `holds` them.
    fn pair(&mut self, tag: u64, holds: &str, depth: usize) -> Res<(Edn, Edn)> {
        self.pair_head(tag, holds)?;
        let a = self.value(depth + 1)?;
        Ok((a, self.value(depth + 1)?))
    }

    fn tagged(&mut self, at: usize, tag: u64, depth: usize) -> Res<Edn> {
        let refused = |message: String| CborError { at, message };
        Ok(match tag {
            DATE_TIME_TEXT => {
                let text = self.text()?;
                Edn::Inst(crate::edn::parse_inst(&text).ok_or_else(|| {
                    refused(format!("tag 0 on {text:?}, not an RFC 3339 date and time"))
                })?)
            }
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
                self.pair_head(tag, "[exponent, mantissa]")?;
                let Edn::Long(exponent) = self.value(depth + 1)? else {
                    return Err(refused("tag 4's exponent is not an integer".into()));
                };
                let mantissa = self.mantissa(at)?;
                BigDec::parse(&format!("{mantissa}E{exponent}"))
                    .map(Edn::BigDec)
                    .ok_or_else(|| refused("tag 4 out of a big decimal's range".into()))?
            }
            RATIONAL => {
                let holds = "[numerator, denominator], the denominator positive";
                let whole = |e: &Edn| match e {
                    Edn::Long(n) => Some(i128::from(*n)),
                    Edn::BigInt(n) => Some(*n),
                    _ => None,
                };
                let (n, d) = self.pair(tag, holds, depth)?;
                match (whole(&n), whole(&d)) {
                    (Some(n), Some(d)) if d > 0 => match Ratio::reduce(n, d) {
                        Some(Reduced::Fraction(r)) => Edn::Ratio(r),
                        Some(Reduced::Whole(w)) => match i64::try_from(w) {
                            Ok(w) => Edn::Long(w),
                            Err(_) => Edn::BigInt(w),
                        },
                        None => return Err(refused("tag 30 out of range".into())),
                    },
                    _ => return Err(refused(format!("tag 30 holds {holds}"))),
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
            IDENTIFIER => Edn::Keyword(self.name(at)?),
            SYMBOL => Edn::Symbol(self.name(at)?),
            LIST => match self.value(depth + 1)? {
                Edn::Vector(items) => Edn::List(items),
                other => return Err(refused(format!("tag {LIST} on {}", kind(&other)))),
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
                self.pair_head(tag, "[tag-text, value]")?;
                let name = self.name(at)?;
                let value = self.value(depth + 1)?;
                Edn::Tagged(name, Box::new(value))
            }
            other => return Err(refused(format!("tag {other} is not one Datalith reads"))),
        })
    }

    /// A big decimal's mantissa as decimal text: an integer, or a bignum of any length up
    /// to [`MAX_BIGNUM_BYTES`] (a big decimal has as many digits as its text spelled).
    fn mantissa(&mut self, at: usize) -> Res<String> {
        let item_at = self.at;
        let head = self.head()?;
        let not_integer = || CborError {
            at,
            message: "tag 4's mantissa is not an integer".into(),
        };
        let negative = match (head.major, head.arg) {
            (UNSIGNED, Some(n)) => return Ok(n.to_string()),
            (NEGATIVE, Some(n)) => return Ok((-1 - i128::from(n)).to_string()),
            (TAG, Some(POSITIVE_BIGNUM)) => false,
            (TAG, Some(NEGATIVE_BIGNUM)) => true,
            _ => return Err(not_integer()),
        };
        let mut bytes = self.byte_string()?;
        if bytes.len() > MAX_BIGNUM_BYTES {
            return Err(self.error_at(
                item_at,
                format!(
                    "a bignum of {} bytes (at most {MAX_BIGNUM_BYTES} are read)",
                    bytes.len()
                ),
            ));
        }
        Ok(match negative {
            // -1 - m: the digits of m + 1.
            true => {
                increment(&mut bytes);
                format!("-{}", bytes_to_decimal(&bytes))
            }
            false => bytes_to_decimal(&bytes),
        })
    }

    /// A keyword's or symbol's text: not empty, no leading colon.
    /// A keyword's or symbol's name (text without the colon), one of [`Self::names`] when
    /// it was read lately.
    fn name(&mut self, at: usize) -> Res<Keyword> {
        let head_at = self.at;
        let head = self.head()?;
        if head.major != TEXT {
            return Err(self.error_at(head_at, "a text string belongs here"));
        }
        let text = self.text_in_place(head_at, head)?;
        if text.is_empty() || text.starts_with(':') {
            return Err(self.error_at(
                at,
                format!("{text:?} is not a name (written without a colon)"),
            ));
        }
        if let Some((_, name)) = self.names.iter().find(|(t, _)| **t == *text) {
            return Ok(name.clone());
        }
        let name = Keyword::parse(&text);
        if self.names.len() == NAMES_KEPT {
            self.names.remove(0);
        }
        self.names.push((text.into(), name.clone()));
        Ok(name)
    }
}

/// A float16's value (RFC 8949, appendix D).
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
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
    let m = i128::try_from(m).ok()?;
    Some(match negative {
        true => -1 - m,
        false => m,
    })
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
