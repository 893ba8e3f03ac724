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
use crate::query::error::{BuiltinProblem, QueryError};

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

/// Where the search after a match of `start..end` begins, as Java's `Matcher.find` goes on:
/// where the match ended, so an empty match right after a non-empty one counts (the `regex`
/// crate's iterators skip it: `(clojure.string/replace "xy" #"x*" "_")` is `"__y_"` in
/// Java); past the next character after an empty match; `None` past the end.
fn next_search(s: &str, start: usize, end: usize) -> Option<usize> {
    if start < end {
        return Some(end);
    }
    s[end..].chars().next().map(|ch| end + ch.len_utf8())
}

/// The matches of `re` in `s`, one after another as Java finds them (see [`next_search`]).
fn java_finds<'s>(re: &'s regex::Regex, s: &'s str) -> impl Iterator<Item = regex::Match<'s>> {
    let mut at = Some(0);
    std::iter::from_fn(move || {
        let m = re.find_at(s, at?)?;
        at = next_search(s, m.start(), m.end());
        Some(m)
    })
}

/// [`java_finds`] with each match's groups.
fn java_captures<'s>(
    re: &'s regex::Regex,
    s: &'s str,
) -> impl Iterator<Item = regex::Captures<'s>> {
    let mut at = Some(0);
    std::iter::from_fn(move || {
        let caps = re.captures_at(s, at?)?;
        let whole = caps.get(0)?;
        at = next_search(s, whole.start(), whole.end());
        Some(caps)
    })
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
    let all: Vec<Option<Value>> = java_captures(re.anywhere(), s)
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
        Some(_) => c.java_int(2)?,
        None => 0,
    };
    let mut parts: Vec<&str> = Vec::new();
    let mut start = 0;
    for m in java_finds(re.anywhere(), s) {
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
/// syntax (`${1}`, `${name}`, `$$`), read as Java's `Matcher.appendReplacement` reads it
/// against a pattern of `groups` numbered groups and the named ones `names`: after `$` the
/// first digit is the group, and each further digit joins it while the number stays a group
/// of the pattern (`$10` with one group is group 1 and a `0`). A reference to no group, or a
/// `$` that starts none, is Java's error, given as its message.
fn replacement(java: &str, groups: usize, names: &[&str]) -> Result<String, String> {
    let mut out = String::with_capacity(java.len());
    let mut chars = java.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => return Err("character to be escaped is missing".into()),
            },
            '$' => match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    let mut group = d.to_digit(10).unwrap_or(0) as usize;
                    if group > groups {
                        return Err(format!("No group {group}"));
                    }
                    while let Some(next) = chars.peek().and_then(|c| c.to_digit(10)) {
                        let longer = group * 10 + next as usize;
                        if longer > groups {
                            break;
                        }
                        group = longer;
                        chars.next();
                    }
                    out.push_str(&format!("${{{group}}}"));
                }
                Some('{') => {
                    let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    if !names.contains(&name.as_str()) {
                        return Err(format!("No group with name {{{name}}}"));
                    }
                    out.push_str(&format!("${{{name}}}"));
                }
                _ => return Err("Illegal group reference".into()),
            },
            ch => out.push(ch),
        }
    }
    Ok(out)
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
            let pattern = re.anywhere();
            let names: Vec<&str> = pattern.capture_names().flatten().collect();
            // Java reads the replacement at the first match: a bad one fails only then.
            let to = match replacement(to, pattern.captures_len() - 1, &names) {
                Ok(to) => to,
                Err(_) if !pattern.is_match(s) => String::new(),
                Err(problem) => return Err(c.fail(BuiltinProblem::OutOfRange(problem))),
            };
            let references = to.matches('$').count();
            for caps in java_captures(pattern, s).take(limit) {
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
