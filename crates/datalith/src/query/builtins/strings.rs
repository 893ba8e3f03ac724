//! Strings and names: `str`, `subs`, the `pr-str` family, `keyword`, `symbol`, `name`,
//! `namespace`, and `clojure.string`'s functions that take no regular expression (those are
//! in `regex`). Indexes count characters.

use std::sync::Arc;

use super::printing::{pr_text, print_text, str_text};
use super::{Call, Out};
use crate::codec::{Keyword, Value};
use crate::limits::MAX_BUILT_STRING_BYTES;
use crate::query::error::{BuiltinProblem, QueryError};

fn string(s: impl Into<Arc<str>>) -> Out {
    Ok(Some(Value::String(s.into())))
}

/// A string a function builds from pieces whose count or size its arguments multiply
/// (`join`'s separator between every item, `replace`'s replacement at every match): checked
/// against [`MAX_BUILT_STRING_BYTES`] as it grows, since one call runs to its end whatever
/// the query's timeout, so an answer of terabytes must stop before it is made.
pub struct Built<'c> {
    c: &'c Call<'c>,
    out: String,
}

impl<'c> Built<'c> {
    pub fn new(c: &'c Call<'c>) -> Built<'c> {
        Built {
            c,
            out: String::new(),
        }
    }

    /// Appends `piece`, or fails once the string would pass the limit.
    pub fn push(&mut self, piece: &str) -> Result<(), QueryError> {
        self.room(piece.len())?;
        self.out.push_str(piece);
        Ok(())
    }

    /// Fails when `bytes` more would pass the limit.
    pub fn room(&self, bytes: usize) -> Result<(), QueryError> {
        match self.out.len().checked_add(bytes) {
            Some(n) if n <= MAX_BUILT_STRING_BYTES => Ok(()),
            _ => Err(self.c.fail(BuiltinProblem::OutOfRange(format!(
                "its result would pass {MAX_BUILT_STRING_BYTES} bytes"
            )))),
        }
    }

    /// The string built so far, for a writer that appends on its own, after `room` for at
    /// most what it writes.
    pub fn buffer(&mut self) -> &mut String {
        &mut self.out
    }

    pub fn done(self) -> Out {
        self.room(0)?;
        string(self.out)
    }
}

/// The string argument at `i`.
pub fn text<'a>(c: &'a Call, i: usize) -> Result<&'a str, QueryError> {
    match &c.args[i] {
        Value::String(s) => Ok(s),
        _ => Err(c.wrong_type(i, "a string")),
    }
}

fn joined(c: &Call, show: fn(&Value) -> String, sep: &str, end: &str) -> Out {
    let parts: Vec<String> = c.args.iter().map(show).collect();
    string(format!("{}{end}", parts.join(sep)))
}

/// `str`
pub fn str(c: &Call) -> Out {
    joined(c, str_text, "", "")
}

/// `pr-str`
pub fn pr_str(c: &Call) -> Out {
    joined(c, pr_text, " ", "")
}

/// `prn-str`
pub fn prn_str(c: &Call) -> Out {
    joined(c, pr_text, " ", "\n")
}

/// `print-str`
pub fn print_str(c: &Call) -> Out {
    joined(c, print_text, " ", "")
}

/// `println-str`
pub fn println_str(c: &Call) -> Out {
    joined(c, print_text, " ", "\n")
}

/// A character index argument (any number, as Java's `int` parameters read it).
fn char_index(c: &Call, i: usize) -> Result<i64, QueryError> {
    c.java_int(i)
}

/// `subs`: UTF-16 units `start..end` (`end` defaults to the length), as Java's `substring`;
/// a position inside a character of two units is out of range (Java would split it).
pub fn subs(c: &Call) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let s = text(c, 0)?;
    let len = super::utf16::len(s) as i64;
    let start = char_index(c, 1)?;
    let end = if c.args.len() == 3 {
        char_index(c, 2)?
    } else {
        len
    };
    let range = || {
        c.fail(BuiltinProblem::OutOfRange(format!(
            "begin {start}, end {end}, length {len}"
        )))
    };
    if start < 0 || end < start || end > len {
        return Err(range());
    }
    let byte = |i: i64| {
        super::utf16::byte_at(s, i as usize).ok_or_else(|| {
            c.fail(BuiltinProblem::OutOfRange(format!(
                "position {i} falls inside a character of two UTF-16 units"
            )))
        })
    };
    string(&s[byte(start)?..byte(end)?])
}

/// A name-like argument: the namespace and name of a keyword or symbol, or a string's text
/// as a name.
fn parts(v: &Value) -> Option<(Option<&str>, &str)> {
    match v {
        Value::Keyword(k) | Value::Symbol(k) => Some((k.namespace(), k.name())),
        _ => None,
    }
}

fn make_name(c: &Call) -> Result<Option<Keyword>, QueryError> {
    c.arity(1, Some(2), "1 or 2")?;
    if c.args.len() == 2 {
        return Ok(Some(Keyword::new(Some(text(c, 0)?), text(c, 1)?)));
    }
    Ok(match &c.args[0] {
        Value::String(s) => Some(Keyword::parse(s)),
        v => parts(v).map(|(ns, name)| Keyword::new(ns, name)),
    })
}

/// `keyword`: of a string, keyword or symbol (`(keyword 1)` is nil, as in Clojure).
pub fn keyword(c: &Call) -> Out {
    Ok(make_name(c)?.map(Value::Keyword))
}

/// `symbol`
pub fn symbol(c: &Call) -> Out {
    match make_name(c)? {
        Some(k) => Ok(Some(Value::Symbol(k))),
        None => Err(c.wrong_type(0, "a string, keyword or symbol")),
    }
}

/// `name`
pub fn name(c: &Call) -> Out {
    c.exactly(1)?;
    match &c.args[0] {
        Value::String(s) => Ok(Some(Value::String(s.clone()))),
        v => match parts(v) {
            Some((_, name)) => string(name),
            None => Err(c.wrong_type(0, "a keyword, symbol or string")),
        },
    }
}

/// `namespace`: nil for a name without one.
pub fn namespace(c: &Call) -> Out {
    c.exactly(1)?;
    match parts(&c.args[0]) {
        Some((ns, _)) => Ok(ns.map(Value::string)),
        None => Err(c.wrong_type(0, "a keyword or symbol")),
    }
}

fn test2(c: &Call, f: fn(&str, &str) -> bool) -> Out {
    c.exactly(2)?;
    Ok(Some(Value::Boolean(f(text(c, 0)?, text(c, 1)?))))
}

/// `clojure.string/blank?`
pub fn blank(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(Some(Value::Boolean(text(c, 0)?.trim().is_empty())))
}

/// `clojure.string/starts-with?`
pub fn starts_with(c: &Call) -> Out {
    test2(c, |s, p| s.starts_with(p))
}

/// `clojure.string/ends-with?`
pub fn ends_with(c: &Call) -> Out {
    test2(c, |s, p| s.ends_with(p))
}

/// `clojure.string/includes?`
pub fn includes(c: &Call) -> Out {
    test2(c, |s, p| s.contains(p))
}

/// A one-argument string function of the argument's `str` text (Clojure's
/// `lower-case` and friends take any value: `(lower-case :A)` is `":a"`).
fn map1(c: &Call, f: fn(&str) -> String) -> Out {
    c.exactly(1)?;
    string(f(&str_text(&c.args[0])))
}

/// A one-argument function of a string argument.
fn map_text(c: &Call, f: fn(&str) -> String) -> Out {
    c.exactly(1)?;
    string(f(text(c, 0)?))
}

/// `clojure.string/lower-case`
pub fn lower_case(c: &Call) -> Out {
    map1(c, str::to_lowercase)
}

/// `clojure.string/upper-case`
pub fn upper_case(c: &Call) -> Out {
    map1(c, str::to_uppercase)
}

/// `clojure.string/capitalize`: the first character upper case, the rest lower case.
pub fn capitalize(c: &Call) -> Out {
    map1(c, |s| {
        let mut chars = s.chars();
        match chars.next() {
            Some(first) => first
                .to_uppercase()
                .chain(chars.as_str().to_lowercase().chars())
                .collect(),
            None => String::new(),
        }
    })
}

/// `clojure.string/trim`
pub fn trim(c: &Call) -> Out {
    map_text(c, |s| s.trim().to_string())
}

/// `clojure.string/triml`
pub fn triml(c: &Call) -> Out {
    map_text(c, |s| s.trim_start().to_string())
}

/// `clojure.string/trimr`
pub fn trimr(c: &Call) -> Out {
    map_text(c, |s| s.trim_end().to_string())
}

/// `clojure.string/trim-newline`: without trailing `\n` and `\r`.
pub fn trim_newline(c: &Call) -> Out {
    map_text(c, |s| s.trim_end_matches(['\n', '\r']).to_string())
}

/// `clojure.string/reverse`
pub fn reverse(c: &Call) -> Out {
    map_text(c, |s| s.chars().rev().collect())
}

/// `index-of` / `last-index-of`: the character index of `value` in `s`, from an optional
/// character index, or nil.
fn find_index(c: &Call, last: bool) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let s = text(c, 0)?;
    let needle = text(c, 1)?;
    // A position argument as a byte offset: past the end is the end, and inside a character
    // of two units its start (Java would match neither half).
    let to_byte = |unit: i64| -> usize {
        let unit = usize::try_from(unit).unwrap_or(0).min(super::utf16::len(s));
        (0..=unit)
            .rev()
            .find_map(|u| super::utf16::byte_at(s, u))
            .unwrap_or(s.len())
            .min(s.len())
    };
    let found = if last {
        let end = match c.args.get(2) {
            Some(_) => {
                let from = char_index(c, 2)?;
                if from < 0 {
                    return Ok(None);
                }
                (to_byte(from) + needle.len()).min(s.len())
            }
            None => s.len(),
        };
        // `end` may fall inside a character: back to its start.
        let end = (0..=end)
            .rev()
            .find(|b| s.is_char_boundary(*b))
            .unwrap_or(0);
        s.get(..end).and_then(|h| h.rfind(needle))
    } else {
        let start = match c.args.get(2) {
            Some(_) => to_byte(char_index(c, 2)?.max(0)),
            None => 0,
        };
        s[start..].find(needle).map(|i| i + start)
    };
    Ok(found.map(|b| Value::Long(super::utf16::unit_of(s, b) as i64)))
}

/// A Java method of `String` (`(.toUpperCase s)`): on a string only; Java finds no such
/// method on another value, where the `clojure.string` function would print it first.
pub fn on_string(c: &Call, method: super::Builtin) -> Out {
    if !matches!(c.args.first(), Some(Value::String(_))) {
        return Err(c.wrong_type(0, "a string (the method's object)"));
    }
    method(c)
}

/// `(.indexOf s x)` and `(.indexOf s x from)`: Java's `String.indexOf` of a string, a character
/// or a code point, -1 when it is absent (`clojure.string/index-of` answers nil).
pub fn java_index_of(c: &Call) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let s = text(c, 0)?;
    let needle: String = match &c.args[1] {
        Value::String(n) => n.to_string(),
        Value::Char(ch) => ch.to_string(),
        // `indexOf(int ch)`: a code point, no match for one that is not a character.
        _ => match char::from_u32(c.java_int(1)? as u32) {
            Some(ch) => ch.to_string(),
            None => return Ok(Some(Value::Long(-1))),
        },
    };
    let from = match c.args.get(2) {
        Some(_) => c.java_int(2)?.max(0),
        None => 0,
    };
    let len = super::utf16::len(s) as i64;
    if from > len {
        return Ok(Some(Value::Long(-1)));
    }
    // The first unit at or after `from` that begins a character (Java would match neither
    // half of a pair).
    let start = (from as usize..=len as usize)
        .find_map(|u| super::utf16::byte_at(s, u))
        .unwrap_or(s.len());
    let found = s[start..].find(&needle).map(|b| b + start);
    Ok(Some(Value::Long(
        found.map_or(-1, |b| super::utf16::unit_of(s, b) as i64),
    )))
}

/// `clojure.string/index-of`
pub fn index_of(c: &Call) -> Out {
    find_index(c, false)
}

/// `clojure.string/last-index-of`
pub fn last_index_of(c: &Call) -> Out {
    find_index(c, true)
}

/// `clojure.string/join`: `(join coll)` or `(join separator coll)`, items as `str` shows them.
pub fn join(c: &Call) -> Out {
    c.arity(1, Some(2), "1 or 2")?;
    let (sep, coll) = match c.args {
        [coll] => (String::new(), coll),
        [sep, coll] => (str_text(sep), coll),
        _ => unreachable!("arity checked"),
    };
    let at = c.args.len() - 1;
    let items: Vec<String> = match coll {
        Value::Tuple(t) => t
            .iter()
            .map(|i| i.as_ref().map_or_else(String::new, str_text))
            .collect(),
        Value::Set(s) => s.iter().map(str_text).collect(),
        Value::String(s) => s.chars().map(String::from).collect(),
        // A map's items are its entries, each shown as the vector `[k v]`.
        Value::Map(m) => m
            .iter()
            .map(|(k, v)| str_text(&Value::Tuple(vec![Some(k.clone()), Some(v.clone())])))
            .collect(),
        _ => return Err(c.wrong_type(at, "a collection")),
    };
    let mut out = Built::new(c);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(&sep)?;
        }
        out.push(item)?;
    }
    out.done()
}

/// `clojure.string/split-lines`
pub fn split_lines(c: &Call) -> Out {
    c.exactly(1)?;
    // Clojure's `(split s #"\r?\n")`: Java's `split`, whose trailing empty parts go, and
    // whose text without a break is itself (`""` is `[""]`, `"\n"` is `[]`).
    let s = text(c, 0)?;
    if !s.contains('\n') {
        return Ok(Some(Value::Tuple(vec![Some(Value::string(s))])));
    }
    let mut lines: Vec<&str> = s.split('\n').collect();
    let last = lines.len() - 1;
    for line in &mut lines[..last] {
        *line = line.strip_suffix('\r').unwrap_or(line);
    }
    while lines.last() == Some(&"") {
        lines.pop();
    }
    Ok(Some(Value::Tuple(
        lines.into_iter().map(|l| Some(Value::string(l))).collect(),
    )))
}
