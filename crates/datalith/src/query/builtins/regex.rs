//! Regular expressions: `re-pattern`, `re-find`, `re-matches`, `re-seq`, and
//! `clojure.string`'s `split`, `replace`, `replace-first`. Patterns are Java syntax, compiled
//! by `codec::Regex` (which refuses backtracking constructs by name).
//!
//! A match of a pattern without groups is the matched string; with groups it is a vector of
//! the whole match and each group (nil for a group that did not take part), as in Clojure.
//! No match is nil.

use super::strings::{text, Built};
use super::{Call, Out};
use crate::codec::{Regex, Value};
use crate::query::error::QueryError;

fn pattern<'a>(c: &'a Call, i: usize) -> Result<&'a Regex, QueryError> {
    match &c.args[i] {
        Value::Regex(r) => Ok(r),
        _ => Err(c.wrong_type(i, "a regular expression (re-pattern)")),
    }
}

/// `re-pattern`: a pattern from its text (a pattern is returned as it is).
pub fn re_pattern(c: &Call) -> Out {
    c.exactly(1)?;
    match &c.args[0] {
        Value::Regex(r) => Ok(Some(Value::Regex(r.clone()))),
        Value::String(s) => Regex::parse(s)
            .map(|r| Some(Value::Regex(r)))
            .map_err(|e| c.fail(e.into())),
        _ => Err(c.wrong_type(0, "a string")),
    }
}

/// One match as Clojure returns it: the string, or `[whole g1 g2 ...]` when there are groups.
fn found(caps: &regex::Captures<'_>) -> Value {
    if caps.len() == 1 {
        return Value::string(caps.get(0).map_or("", |m| m.as_str()));
    }
    Value::Tuple(
        caps.iter()
            .map(|g| g.map(|m| Value::string(m.as_str())))
            .collect(),
    )
}

/// `re-find`: the first match anywhere.
pub fn re_find(c: &Call) -> Out {
    c.exactly(2)?;
    let (re, s) = (pattern(c, 0)?, text(c, 1)?);
    let re = re.anywhere();
    // Without groups the match is all there is to return: `find` runs the fast engines,
    // `captures` the slower one that tracks groups.
    if re.captures_len() == 1 {
        return Ok(re.find(s).map(|m| Value::string(m.as_str())));
    }
    Ok(re.captures(s).map(|caps| found(&caps)))
}

/// `re-matches`: a match of the whole string.
pub fn re_matches(c: &Call) -> Out {
    c.exactly(2)?;
    let (re, s) = (pattern(c, 0)?, text(c, 1)?);
    let re = re.whole();
    if re.captures_len() == 1 {
        return Ok(re.find(s).map(|m| Value::string(m.as_str())));
    }
    Ok(re.captures(s).map(|caps| found(&caps)))
}

/// `re-seq`: every match, in order; nil when there is none.
pub fn re_seq(c: &Call) -> Out {
    c.exactly(2)?;
    let (re, s) = (pattern(c, 0)?, text(c, 1)?);
    let all: Vec<Option<Value>> = re
        .anywhere()
        .captures_iter(s)
        .map(|caps| Some(found(&caps)))
        .collect();
    Ok((!all.is_empty()).then_some(Value::Tuple(all)))
}

/// `clojure.string/split`: Java's `String.split`: a limit above 0 caps the number of parts,
/// 0 (the default) drops trailing empty parts, below 0 keeps them; a zero-width match at
/// the start makes no leading empty part.
pub fn split(c: &Call) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let (s, re) = (text(c, 0)?, pattern(c, 1)?);
    let limit = match c.args.get(2) {
        Some(Value::Long(n)) => *n,
        Some(_) => return Err(c.wrong_type(2, "a long")),
        None => 0,
    };
    let mut parts: Vec<&str> = Vec::new();
    let mut start = 0;
    for m in re.anywhere().find_iter(s) {
        if limit > 0 && parts.len() as i64 == limit - 1 {
            break;
        }
        if m.end() == 0 {
            continue;
        }
        parts.push(&s[start..m.start()]);
        start = m.end();
    }
    parts.push(&s[start..]);
    if limit == 0 {
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        if parts == [""] && !s.is_empty() {
            parts.clear();
        }
    }
    Ok(Some(Value::Tuple(
        parts.into_iter().map(|p| Some(Value::string(p))).collect(),
    )))
}

/// A Java replacement string (`$1`, `${name}`, `\$` for a dollar) in the `regex` crate's
/// syntax (`${1}`, `${name}`, `$$`).
fn replacement(java: &str) -> String {
    let mut out = String::with_capacity(java.len());
    let mut chars = java.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push_str("${");
                while let Some(d) = chars.next_if(char::is_ascii_digit) {
                    out.push(d);
                }
                out.push('}');
            }
            ch => out.push(ch),
        }
    }
    out
}

/// Replaces the first `limit` matches (every one for 0), building the result through
/// [`Built`]: a replacement at every position of a long string multiplies its length.
fn replace_n(c: &Call, limit: usize) -> Out {
    c.exactly(3)?;
    let s = text(c, 0)?;
    let limit = if limit == 0 { usize::MAX } else { limit };
    let mut out = Built::new(c);
    let mut last = 0;
    match (&c.args[1], &c.args[2]) {
        (Value::String(from), Value::String(to)) => {
            for (at, found) in s.match_indices(from.as_ref()).take(limit) {
                out.push(&s[last..at])?;
                out.push(to)?;
                last = at + found.len();
            }
        }
        (Value::Regex(re), Value::String(to)) => {
            let to = replacement(to);
            let references = to.matches('$').count();
            for caps in re.anywhere().captures_iter(s).take(limit) {
                let Some(whole) = caps.get(0) else { continue };
                out.push(&s[last..whole.start()])?;
                // One expansion is at most the template and, for each reference, the
                // whole match: room for that before it is made.
                out.room(to.len() + references.saturating_mul(whole.len()))?;
                caps.expand(&to, out.buffer());
                last = whole.end();
            }
        }
        (Value::String(_) | Value::Regex(_), _) => return Err(c.wrong_type(2, "a string")),
        _ => return Err(c.wrong_type(1, "a string or regular expression")),
    }
    out.push(&s[last..])?;
    out.done()
}

/// `clojure.string/replace`: every match (a string matches literally).
pub fn replace(c: &Call) -> Out {
    replace_n(c, 0)
}

/// `clojure.string/replace-first`
pub fn replace_first(c: &Call) -> Out {
    replace_n(c, 1)
}
