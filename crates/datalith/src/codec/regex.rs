//! `Regex`: a compiled regular expression with the text it was written as (Clojure's
//! `#"..."`, Java's `java.util.regex.Pattern`). A query value only, never stored.
//!
//! Datomic's patterns are Java's; ours run on the `regex` crate, which guarantees linear time
//! and so has no backtracking constructs. `Regex::parse` reads Java syntax and rewrites what
//! differs so that a pattern means what it means in Datomic:
//!
//! - `\d \w \s` (and `\D \W \S`) are ASCII-only in Java, Unicode in the `regex` crate: they
//!   become explicit ASCII classes; so do the POSIX classes `\p{Alpha}`, `\p{Digit}`, ...
//! - `\Q...\E` (quoted text) becomes escaped text; `\R` a line-break alternation.
//! - Constructs the `regex` crate lacks are refused with an error naming them:
//!   backreferences (`\1`, `\k<name>`), lookahead and lookbehind (`(?=`, `(?!`, `(?<=`,
//!   `(?<!`), atomic groups (`(?>`), possessive quantifiers (`a*+`), `\Z`, `\G`.
//!
//! Differences left as they are (documented in docs/guide/functions.md): `.` also matches `\r`
//! and other Unicode line terminators (Java excludes them), `$` matches only at the very end
//! (Java also before a final line terminator), `(?i)` folds Unicode case (Java ASCII only).
//!
//! Equality, order and hash follow the source text (Java's patterns compare by identity;
//! text is the closest stable stand-in, and it lets a pattern sit in a relation row).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Why a pattern cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegexError {
    /// A Java construct the `regex` crate has no equivalent of.
    #[error("{construct} ({example}) is not supported: the regex engine has no backtracking")]
    Unsupported {
        /// What it is, e.g. "a backreference".
        construct: &'static str,
        /// How it was written in the pattern.
        example: String,
    },
    /// Invalid syntax (the `regex` crate's message).
    #[error("{0}")]
    Syntax(String),
}

/// A regular expression: its source text (as written, Java syntax) and its compiled forms
/// (searching anywhere, and anchored at both ends for whole-string matches).
#[derive(Clone)]
pub struct Regex {
    source: Arc<str>,
    compiled: Arc<(regex::Regex, regex::Regex)>,
}

impl Regex {
    /// Compiles a Java-syntax pattern.
    pub fn parse(source: &str) -> Result<Regex, RegexError> {
        let rust = translate(source)?;
        let compile = |p: &str| regex::Regex::new(p).map_err(|e| RegexError::Syntax(e.to_string()));
        let anywhere = compile(&rust)?;
        let whole = compile(&format!(r"\A(?:{rust})\z"))?;
        Ok(Regex {
            source: Arc::from(source),
            compiled: Arc::new((anywhere, whole)),
        })
    }

    /// The text as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The expression, matching anywhere in a string.
    pub fn anywhere(&self) -> &regex::Regex {
        &self.compiled.0
    }

    /// The expression anchored at both ends (Java's `Matcher.matches`).
    pub fn whole(&self) -> &regex::Regex {
        &self.compiled.1
    }
}

fn unsupported(construct: &'static str, example: &str) -> RegexError {
    RegexError::Unsupported {
        construct,
        example: example.to_string(),
    }
}

/// Java's POSIX classes (`\p{Alpha}`), all ASCII-only, as class contents.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "a-z",
        "Upper" => "A-Z",
        "ASCII" => r"\x00-\x7F",
        "Alpha" => "a-zA-Z",
        "Digit" => "0-9",
        "Alnum" => "a-zA-Z0-9",
        "Punct" => r"!-/:-@\[-`{-~",
        "Graph" => r"!-~",
        "Print" => r" -~",
        "Blank" => r" \t",
        "Cntrl" => r"\x00-\x1F\x7F",
        "XDigit" => "0-9a-fA-F",
        "Space" => r"\t\n\x0B\x0C\r ",
        _ => return None,
    })
}

/// Java's ASCII shorthand classes, as class contents.
fn shorthand_class(c: char) -> Option<(&'static str, bool)> {
    Some(match c {
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        'w' => ("0-9A-Za-z_", false),
        'W' => ("0-9A-Za-z_", true),
        's' => (r"\t\n\x0B\x0C\r ", false),
        'S' => (r"\t\n\x0B\x0C\r ", true),
        _ => return None,
    })
}

/// A class with `contents`, negated or not; inside another class it nests (the `regex` crate
/// and Java both allow `[a[^0-9]]`).
fn class(contents: &str, negated: bool) -> String {
    format!("[{}{contents}]", if negated { "^" } else { "" })
}

/// Rewrites a Java pattern into the `regex` crate's syntax (see the module comment).
fn translate(p: &str) -> Result<String, RegexError> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut class_depth = 0usize;
    // Whether the last thing emitted was a quantifier (to spot possessive `*+`).
    let mut after_quantifier = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let quantifier_before = after_quantifier;
        after_quantifier = false;
        match c {
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return Err(RegexError::Syntax("a pattern cannot end with \\".into()));
                };
                i += 2;
                match e {
                    '1'..='9' if class_depth == 0 => {
                        return Err(unsupported("a backreference", &format!("\\{e}")))
                    }
                    'k' if chars.get(i) == Some(&'<') => {
                        return Err(unsupported("a named backreference", "\\k<name>"))
                    }
                    'Z' => return Err(unsupported("\\Z (end before a final line break)", "\\Z")),
                    'G' => return Err(unsupported("\\G (end of the previous match)", "\\G")),
                    'Q' => {
                        let rest: String = chars[i..].iter().collect();
                        let (quoted, after) = match rest.find("\\E") {
                            Some(end) => (&rest[..end], end + 2),
                            None => (rest.as_str(), rest.len()),
                        };
                        out.push_str(&regex::escape(quoted));
                        i += rest[..after].chars().count();
                    }
                    'R' if class_depth == 0 => {
                        out.push_str(r"(?:\r\n|[\n\x0B\x0C\r\x{85}\x{2028}\x{2029}])")
                    }
                    'p' | 'P' if chars.get(i) == Some(&'{') => {
                        let close = chars[i..].iter().position(|&x| x == '}');
                        let name: String = match close {
                            Some(n) => chars[i + 1..i + n].iter().collect(),
                            None => String::new(),
                        };
                        match (posix_class(&name), close) {
                            (Some(contents), Some(n)) => {
                                let negated = e == 'P';
                                if class_depth > 0 && !negated {
                                    out.push_str(contents);
                                } else {
                                    out.push_str(&class(contents, negated));
                                }
                                i += n + 1;
                            }
                            // A Unicode class (`\p{L}`), the `regex` crate's syntax too: copied
                            // whole, so that its `}` is not taken for a quantifier's end (which
                            // made `\p{L}+` look possessive).
                            (None, Some(n)) => {
                                out.push('\\');
                                out.push(e);
                                out.extend(&chars[i..=i + n]);
                                i += n + 1;
                            }
                            (_, None) => {
                                out.push('\\');
                                out.push(e);
                            }
                        }
                    }
                    'x' if chars.get(i) == Some(&'{') => {
                        // `\x{263A}`: a code point, the same in both syntaxes; copied whole for
                        // the same reason.
                        out.push_str("\\x");
                        let close = chars[i..].iter().position(|&x| x == '}');
                        let end = close.map_or(i, |n| i + n + 1);
                        out.extend(&chars[i..end]);
                        i = end;
                    }
                    _ => match shorthand_class(e) {
                        Some((contents, negated)) => {
                            if class_depth > 0 && !negated {
                                out.push_str(contents);
                            } else {
                                out.push_str(&class(contents, negated));
                            }
                        }
                        None => {
                            out.push('\\');
                            out.push(e);
                        }
                    },
                }
                continue;
            }
            '[' => {
                class_depth += 1;
                out.push(c);
                // A `]` or `^]` right after the opening bracket is literal in both syntaxes.
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(c);
            }
            '(' if class_depth == 0 => {
                let ahead: String = chars[i..chars.len().min(i + 4)].iter().collect();
                for (prefix, what) in [
                    ("(?<=", "a lookbehind"),
                    ("(?<!", "a negative lookbehind"),
                    ("(?=", "a lookahead"),
                    ("(?!", "a negative lookahead"),
                    ("(?>", "an atomic group"),
                ] {
                    if ahead.starts_with(prefix) {
                        return Err(unsupported(what, prefix));
                    }
                }
                out.push(c);
            }
            '*' | '+' | '?' if class_depth == 0 => {
                if c == '+' && quantifier_before {
                    return Err(unsupported(
                        "a possessive quantifier",
                        &format!("{}+", chars[i - 1]),
                    ));
                }
                out.push(c);
                // `a*?` (lazy) is fine; `a*+` (possessive) is refused above.
                after_quantifier = c != '?' || !quantifier_before;
            }
            '}' if class_depth == 0 => {
                out.push(c);
                after_quantifier = true;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

impl PartialEq for Regex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Regex {}

impl Hash for Regex {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.source.hash(state)
    }
}

impl PartialOrd for Regex {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Regex {
    fn cmp(&self, other: &Self) -> Ordering {
        self.source.cmp(&other.source)
    }
}

impl fmt::Debug for Regex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#\"{}\"", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_syntax_is_rewritten_or_refused_by_name() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            (r"a(b)c", Ok(r"a(b)c")),
            (r"\d+", Ok(r"[0-9]+")),
            (r"[\w-]", Ok(r"[0-9A-Za-z_-]")),
            (r"[^\s]", Ok(r"[^\t\n\x0B\x0C\r ]")),
            (r"\S", Ok(r"[^\t\n\x0B\x0C\r ]")),
            (r"\p{Alpha}+", Ok(r"[a-zA-Z]+")),
            (r"\P{Digit}", Ok(r"[^0-9]")),
            (r"\p{L}", Ok(r"\p{L}")),
            (r"\p{L}+", Ok(r"\p{L}+")),
            (r"\P{Lu}*\d", Ok(r"\P{Lu}*[0-9]")),
            (r"\x{263A}+", Ok(r"\x{263A}+")),
            (r"\p{L}++", Err("a possessive quantifier")),
            (r"\Qa.b\E.", Ok(r"a\.b.")),
            (r"a+?", Ok(r"a+?")),
            (r"a{2}?", Ok(r"a{2}?")),
            (r"(?<y>\d{4})", Ok(r"(?<y>[0-9]{4})")),
            (r"(a)\1", Err("a backreference")),
            (r"(?<n>a)\k<n>", Err("a named backreference")),
            (r"a(?=b)", Err("a lookahead")),
            (r"a(?!b)", Err("a negative lookahead")),
            (r"(?<=a)b", Err("a lookbehind")),
            (r"(?<!a)b", Err("a negative lookbehind")),
            (r"(?>a)", Err("an atomic group")),
            (r"a*+", Err("a possessive quantifier")),
            (r"a{2}+", Err("a possessive quantifier")),
            (r"a\Z", Err(r"\Z (end before a final line break)")),
        ];
        for (java, want) in cases {
            let got = translate(java);
            match (want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(g, w, "{java}"),
                (Err(w), Err(RegexError::Unsupported { construct, .. })) => {
                    assert_eq!(construct, w, "{java}")
                }
                _ => panic!("{java}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn matches_like_java() {
        // (pattern, text, first match): checked against Datomic 1.0.7075 (Java 21 regexes).
        let cases: &[(&str, &str, Option<&str>)] = &[
            (r"\w+", "héllo", Some("h")),
            (r"\p{Alpha}+", "12ab3", Some("ab")),
            (r"(?i)ABC", "xabcx", Some("abc")),
            (r"a.c", "a\nc", None),
        ];
        for (p, text, want) in cases {
            let re = Regex::parse(p).unwrap();
            assert_eq!(re.anywhere().find(text).map(|m| m.as_str()), *want, "{p}");
        }
        assert!(Regex::parse("a|ab").unwrap().whole().is_match("ab"));
        assert!(matches!(Regex::parse("("), Err(RegexError::Syntax(_))));
    }
}
