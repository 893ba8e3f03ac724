//! Printing EDN (reads back to the same value) and JSON.

use super::read::civil_from_days;
use super::value::Edn;
use crate::codec::uuid_text;

/// EDN text of `v`.
pub fn to_edn_string(v: &Edn) -> String {
    let mut s = String::new();
    edn(v, &mut s);
    s
}

/// EDN text of `v`, appended to `out` (what [`to_edn_string`] returns, without a string of
/// its own: a long answer written item by item into one buffer).
pub fn write_edn(v: &Edn, out: &mut impl TextOut) {
    edn(v, out);
}

/// Where text is printed: a `String`, or the bytes of an answer that may hold other formats
/// too (a `Vec<u8>`, written as UTF-8). `write!` works on either.
pub trait TextOut {
    /// Appends a character.
    fn push(&mut self, c: char);
    /// Appends text.
    fn push_str(&mut self, s: &str);
    /// Appends ASCII bytes (digits): a byte buffer takes them without a UTF-8 check.
    fn push_ascii(&mut self, ascii: &[u8]);
    /// What `write!` calls.
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::fmt::Result;
}

impl TextOut for String {
    fn push(&mut self, c: char) {
        String::push(self, c);
    }

    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    fn push_ascii(&mut self, ascii: &[u8]) {
        debug_assert!(ascii.is_ascii());
        String::push_str(self, std::str::from_utf8(ascii).unwrap_or_default());
    }

    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::fmt::Result {
        std::fmt::Write::write_fmt(self, args)
    }
}

impl TextOut for Vec<u8> {
    #[inline]
    fn push(&mut self, c: char) {
        match c.is_ascii() {
            // Brackets, spaces and quotes: most of what is pushed.
            true => Vec::push(self, c as u8),
            false => self.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }

    fn push_str(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }

    fn push_ascii(&mut self, ascii: &[u8]) {
        debug_assert!(ascii.is_ascii());
        self.extend_from_slice(ascii);
    }

    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::fmt::Result {
        std::io::Write::write_fmt(self, args).map_err(|_| std::fmt::Error)
    }
}

/// The decimal digits of `n`, appended to `out` (what `write!(out, "{n}")` writes, without
/// the formatting machinery: integers are most of a large query answer). Two digits a step,
/// from a table: an entity id has 14 digits, and each step waits for the division before it.
fn long(n: i64, out: &mut impl TextOut) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut m = n.unsigned_abs();
    while m >= 100 {
        let pair = (m % 100) as usize * 2;
        m /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if m >= 10 {
        let pair = m as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + m as u8;
    }
    if n < 0 {
        out.push('-');
    }
    out.push_ascii(&buf[at..]);
}

/// "00" to "99", each number's two digits at twice its place.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

fn join(items: &[Edn], out: &mut impl TextOut) {
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        edn(it, out);
    }
}

fn string_lit(s: &str, out: &mut impl TextOut) {
    out.push('"');
    write_escaped(s, out);
    out.push('"');
}

/// The inside of a string literal for `s`, appended to `out`: the quote, the backslash and
/// the control characters escaped (`\n \t \r`, the others `\uXXXX`). The same text is a
/// JSON string's inside too (RFC 8259), which the server's JSON writes with it.
pub fn write_escaped(s: &str, out: &mut impl TextOut) {
    // The runs between characters that need an escape are copied whole (a string holding
    // EDN text, such as a transaction sent as text, escapes every quote in it).
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        if b != b'"' && b != b'\\' && b >= 0x20 {
            continue;
        }
        // `b` is ASCII, so `i` is a character boundary.
        out.push_str(&s[run..i]);
        run = i + 1;
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            _ => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
    }
    out.push_str(&s[run..]);
}

/// `#"..."`: the source as written, except that a bare `"` is escaped (`\"` means the same
/// character to the pattern, and keeps the literal readable).
fn regex_lit(source: &str, out: &mut impl TextOut) {
    out.push_str("#\"");
    let mut escaped = false;
    for c in source.chars() {
        if c == '"' && !escaped {
            out.push('\\');
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    out.push('"');
}

/// RFC 3339 text of epoch milliseconds.
pub fn inst_text(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}-00:00")
}

fn edn(v: &Edn, out: &mut impl TextOut) {
    match v {
        Edn::Nil => out.push_str("nil"),
        Edn::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Edn::Long(n) => long(*n, out),
        Edn::BigInt(n) => {
            let _ = write!(out, "{n}N");
        }
        Edn::Double(x) => {
            if x.is_finite() {
                let t = format!("{x:?}");
                out.push_str(&t);
            } else if x.is_nan() {
                out.push_str("##NaN");
            } else if *x > 0.0 {
                out.push_str("##Inf");
            } else {
                out.push_str("##-Inf");
            }
        }
        // Plain like Clojure (`3.5M`) where that is short; else `0.35E1M`, also readable.
        Edn::BigDec(d) => match d.plain_text() {
            Some(plain) => {
                let _ = write!(out, "{plain}M");
            }
            None => {
                let _ = write!(out, "{d}");
            }
        },
        Edn::Ratio(r) => {
            let _ = write!(out, "{r}");
        }
        Edn::Regex(source) => regex_lit(source, out),
        Edn::String(s) => string_lit(s, out),
        Edn::Char(c) => match c {
            '\n' => out.push_str("\\newline"),
            ' ' => out.push_str("\\space"),
            '\t' => out.push_str("\\tab"),
            '\r' => out.push_str("\\return"),
            c => {
                out.push('\\');
                out.push(*c)
            }
        },
        // Pushed piece by piece (what `Display` writes, without the formatting machinery).
        Edn::Keyword(k) => {
            out.push(':');
            if let Some(ns) = k.namespace() {
                out.push_str(ns);
                out.push('/');
            }
            out.push_str(k.name());
        }
        Edn::Symbol(s) => out.push_str(&s.to_symbol_text()),
        Edn::List(items) => {
            out.push('(');
            join(items, out);
            out.push(')');
        }
        Edn::Vector(items) => {
            out.push('[');
            join(items, out);
            out.push(']');
        }
        Edn::Set(items) => {
            out.push_str("#{");
            join(items, out);
            out.push('}');
        }
        Edn::Map(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                edn(k, out);
                out.push(' ');
                edn(v, out);
            }
            out.push('}');
        }
        Edn::Inst(ms) => {
            out.push_str("#inst ");
            string_lit(&inst_text(*ms), out);
        }
        Edn::Uuid(u) => {
            out.push_str("#uuid ");
            string_lit(&uuid_text(u), out);
        }
        Edn::Tagged(t, v) => {
            out.push('#');
            out.push_str(&t.to_symbol_text());
            out.push(' ');
            edn(v, out);
        }
    }
}

/// JSON text of `v`: keywords and symbols become strings (`":a/b"`), sets and lists arrays,
/// maps objects with string keys, instants RFC 3339 strings, bigdecs and ratios strings
/// (`"1.5M"`, `"31/5"`: exact), regular expressions their source text.
pub fn to_json(v: &Edn) -> String {
    let mut s = String::new();
    json(v, &mut s);
    s
}

fn json_key(k: &Edn) -> String {
    match k {
        Edn::String(s) => s.clone(),
        Edn::Keyword(k) => k.to_string(),
        other => to_edn_string(other),
    }
}

fn json(v: &Edn, out: &mut impl TextOut) {
    match v {
        Edn::Nil => out.push_str("null"),
        Edn::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Edn::Long(n) => {
            let _ = write!(out, "{n}");
        }
        Edn::BigInt(n) => {
            let _ = write!(out, "{n}");
        }
        Edn::Double(x) if x.is_finite() => {
            let _ = write!(out, "{x:?}");
        }
        Edn::Double(_) => out.push_str("null"),
        Edn::BigDec(_) => string_lit(&to_edn_string(v), out),
        // Exact, like a bigdec: as the string "31/5" (a double would round).
        Edn::Ratio(r) => string_lit(&r.to_string(), out),
        Edn::Regex(source) => string_lit(source, out),
        Edn::String(s) => string_lit(s, out),
        Edn::Char(c) => string_lit(&c.to_string(), out),
        Edn::Keyword(k) => string_lit(&k.to_string(), out),
        Edn::Symbol(s) => string_lit(&s.to_symbol_text(), out),
        Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(it, out);
            }
            out.push(']');
        }
        Edn::Map(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string_lit(&json_key(k), out);
                out.push(':');
                json(v, out);
            }
            out.push('}');
        }
        Edn::Inst(ms) => string_lit(&inst_text(*ms), out),
        Edn::Uuid(u) => string_lit(&uuid_text(u), out),
        Edn::Tagged(_, v) => json(v, out),
    }
}

/// Values print as EDN (refs as their entity id), so messages can show them with `{}`.
impl std::fmt::Display for crate::codec::Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_edn_string(&super::edn_from_value(self)))
    }
}

/// EDN prints as EDN text.
///
/// ```
/// let v: datalith::Edn = r#"{:name "Ann", :age 30}"#.parse().unwrap();
/// assert_eq!(v.to_string(), r#"{:name "Ann", :age 30}"#);
/// ```
impl std::fmt::Display for Edn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_edn_string(self))
    }
}

/// EDN text reads as the one form it holds (see [`super::read_one`]).
impl std::str::FromStr for Edn {
    type Err = super::ReadError;

    fn from_str(text: &str) -> Result<Edn, super::ReadError> {
        super::read_one(text)
    }
}

#[cfg(test)]
mod long_tests {
    use super::*;

    #[test]
    fn longs_print_as_display_does() {
        let mut cases = vec![0, 1, -1, 9, 10, -10, 99, 100, 123_456, i64::MAX, i64::MIN];
        cases.extend(
            (0..64)
                .map(|b| 1i64 << b)
                .flat_map(|n: i64| [n, n.wrapping_sub(1), n.wrapping_neg(), 1i64.wrapping_sub(n)]),
        );
        // Each count of digits, odd and even, at both of its ends.
        cases.extend((0..19).flat_map(|k| {
            let p = 10i64.pow(k);
            [p, p - 1, -p, 1 - p, p + 1, 17_592_186_045_418 % p.max(1)]
        }));
        for n in cases {
            assert_eq!(to_edn_string(&Edn::Long(n)), n.to_string());
            let mut out = String::from("x");
            write_edn(&Edn::Long(n), &mut out);
            assert_eq!(out, format!("x{n}"));
            assert_eq!(crate::edn::read_one(&n.to_string()), Ok(Edn::Long(n)));
        }
        for (text, n) in [("-0", 0), ("007", 7), ("-007", -7), ("+5", 5)] {
            assert_eq!(crate::edn::read_one(text), Ok(Edn::Long(n)), "{text}");
        }
        let big = "123456789012345678901";
        assert!(matches!(crate::edn::read_one(big), Ok(Edn::BigInt(_))));
    }
}
