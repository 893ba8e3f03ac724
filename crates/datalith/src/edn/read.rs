//! The reader.

use super::value::Edn;
use crate::codec::{parse_uuid, BigDec, Keyword, Ratio, Reduced};

/// A syntax error, with where it happened (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
#[non_exhaustive]
pub struct ReadError {
    /// Line, from 1.
    pub line: usize,
    /// Column (in characters), from 1.
    pub column: usize,
    /// What went wrong, and what was expected.
    pub message: String,
}

/// A syntax error inside the reader: boxed, so that the `Result` of every form read is no
/// larger than the form (the unboxed error made each one a 48-byte move through the stack).
type Failed = Box<ReadError>;

/// Nesting deeper than this is refused (recursion on untrusted input must be bounded).
const MAX_DEPTH: usize = crate::limits::MAX_EDN_DEPTH;

struct Reader<'a> {
    s: &'a str,
    pos: usize,
    /// When asked for (`read_one_spanned`): the byte range of each form read, in preorder.
    spans: Option<Vec<(usize, usize)>>,
    /// The keywords read most recently, by their text: a text names few distinct keywords
    /// (the attributes of its maps and datoms), so most keywords are a clone of one of these
    /// rather than an allocation of their own.
    keywords: Vec<(&'a str, Keyword)>,
    /// The items of the collections being read, innermost last: a collection's items are
    /// moved from here into a vector of their exact number once it closes, so that each
    /// collection is one allocation of its size rather than a vector grown by doubling.
    stack: Vec<Edn>,
}

/// Keywords [`Reader::keywords`] remembers.
const KEYWORD_CACHE: usize = 16;

impl<'a> Reader<'a> {
    fn new(s: &'a str, spans: Option<Vec<(usize, usize)>>) -> Reader<'a> {
        Reader {
            s,
            pos: 0,
            spans,
            keywords: Vec::new(),
            stack: Vec::new(),
        }
    }
}

fn is_delim(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';')
}

/// ASCII bytes that end a token (whitespace and the delimiters of [`is_delim`]), by byte.
const ENDS_TOKEN: [bool; 128] = {
    let mut t = [false; 128];
    let mut b = 0;
    while b < 128 {
        // ASCII's share of `is_delim`: `char::is_whitespace` below 128 is tab to carriage
        // return, and the space.
        t[b] = matches!(
            b as u8,
            b'\t'
                | b'\n'
                | 0x0b
                | 0x0c
                | b'\r'
                | b' '
                | b','
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'"'
                | b';'
        );
        b += 1;
    }
    t
};

impl<'a> Reader<'a> {
    fn err(&self, at: usize, message: impl Into<String>) -> Failed {
        let before = &self.s[..at.min(self.s.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Box::new(ReadError {
            line,
            column,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        // ASCII (most of any text read) without decoding; `pos` is always on a boundary.
        match self.s.as_bytes().get(self.pos) {
            Some(&b) if b < 0x80 => Some(b as char),
            Some(_) => self.s[self.pos..].chars().next(),
            None => None,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) -> Result<(), Failed> {
        // Spaces, commas and line ends (nearly all the spacing of any text) byte by byte;
        // comments, discards and Unicode whitespace on the general path.
        let bytes = self.s.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b' ' | b',' | b'\n' | b'\t' | b'\r' => self.pos += 1,
                b';' | b'#' | 0x80.. | 0x0b | 0x0c => return self.skip_ws_general(),
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    fn skip_ws_general(&mut self) -> Result<(), Failed> {
        while let Some(c) = self.peek() {
            if c == ' ' || c == ',' || c == '\n' {
                self.pos += 1;
            } else if c.is_whitespace() {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else if c == '#' && self.s.as_bytes().get(self.pos + 1) == Some(&b'_') {
                let at = self.pos;
                self.pos += 2;
                self.skip_ws()?;
                if matches!(self.peek(), None | Some(')' | ']' | '}')) {
                    return Err(self.err(at, "expected a form after #_"));
                }
                let recorded = self.spans.as_ref().map(Vec::len);
                self.value(0)?;
                // A discarded form has no place in the tree, nor its span in the list.
                if let (Some(spans), Some(n)) = (self.spans.as_mut(), recorded) {
                    spans.truncate(n);
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    fn token(&mut self) -> &'a str {
        let start = self.pos;
        let bytes = self.s.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if b < 0x80 {
                if ENDS_TOKEN[b as usize] {
                    break;
                }
                self.pos += 1;
            } else {
                // Outside ASCII only Unicode whitespace ends a token.
                match self.peek() {
                    Some(c) if is_delim(c) => break,
                    Some(c) => self.pos += c.len_utf8(),
                    None => break,
                }
            }
        }
        &self.s[start..self.pos]
    }

    /// The keyword `text` names (without its colon): a clone of a recent one when it is
    /// the same text.
    fn keyword(&mut self, text: &'a str) -> Keyword {
        if let Some((_, k)) = self.keywords.iter().find(|(t, _)| *t == text) {
            return k.clone();
        }
        let k = Keyword::parse(text);
        if self.keywords.len() == KEYWORD_CACHE {
            self.keywords.remove(0);
        }
        self.keywords.push((text, k.clone()));
        k
    }

    /// Reads the next form; `None` at end of input.
    fn next(&mut self) -> Result<Option<Edn>, Failed> {
        self.skip_ws()?;
        if self.peek().is_none() {
            return Ok(None);
        }
        self.value(0).map(Some)
    }

    /// Reads one form, recording its span (and its children's, in preorder) when asked.
    fn value(&mut self, depth: usize) -> Result<Edn, Failed> {
        self.push(depth)?;
        self.stack
            .pop()
            .ok_or_else(|| self.err(self.pos, "internal: a form read left nothing"))
    }

    /// Reads one form onto the stack (its span recorded when asked). A form is pushed by the
    /// function that reads it rather than returned through each caller: every return copied
    /// the 48-byte form once more, written field by field and read back 16 bytes at a time,
    /// a load that waits for the stores before it (`perf annotate`: most of the reader's time
    /// on a large answer went to those copies).
    fn push(&mut self, depth: usize) -> Result<(), Failed> {
        if self.spans.is_none() {
            return self.form(depth);
        }
        self.skip_ws()?;
        let (at, index) = (self.pos, self.spans.as_ref().map_or(0, Vec::len));
        self.spans.get_or_insert_with(Vec::new).push((at, at));
        self.form(depth)?;
        let spans = self.spans.get_or_insert_with(Vec::new);
        // A leaf read through a nested form (`#inst "..."`) is still one node.
        if !matches!(
            self.stack.last(),
            Some(Edn::List(_) | Edn::Vector(_) | Edn::Map(_) | Edn::Set(_) | Edn::Tagged(..))
        ) {
            spans.truncate(index + 1);
        }
        spans[index].1 = self.pos;
        Ok(())
    }

    /// Reads one form onto the stack; the spacing before it is already skipped (by every
    /// caller: a form is most often an item, after its collection's loop skipped).
    fn form(&mut self, depth: usize) -> Result<(), Failed> {
        if depth > MAX_DEPTH {
            return Err(self.err(self.pos, format!("forms nested deeper than {MAX_DEPTH}")));
        }
        let at = self.pos;
        let Some(&b) = self.s.as_bytes().get(at) else {
            return Err(self.err(at, "expected a form, found end of input"));
        };
        // The commonest forms are pushed in their own arm, made in their slot (`slot`).
        let v = match b {
            b'0'..=b'9' | b'-' => match self.plain_long() {
                Some(n) => {
                    super::slot::push_long(&mut self.stack, n);
                    return Ok(());
                }
                None => self.atom_token(at)?,
            },
            b'(' => {
                self.pos += 1;
                Edn::List(self.seq(b')', at, depth)?)
            }
            b'[' => {
                self.pos += 1;
                let items = self.seq(b']', at, depth)?;
                super::slot::push_vector(&mut self.stack, items);
                return Ok(());
            }
            b'{' => {
                self.pos += 1;
                let base = self.items(b'}', at, depth)?;
                let n = self.stack.len() - base;
                if n % 2 != 0 {
                    return Err(self.err(at, "a map needs an even number of forms"));
                }
                let mut pairs = Vec::with_capacity(n / 2);
                let mut it = self.stack.drain(base..);
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                drop(it);
                if let Some(k) = super::duplicate::repeated_key(&pairs) {
                    return Err(self.err(
                        at,
                        format!("a map repeats its key {}", super::print::to_edn_string(k)),
                    ));
                }
                Edn::Map(pairs)
            }
            b')' | b']' | b'}' => return Err(self.err(at, format!("unbalanced {}", b as char))),
            b'"' => {
                let s = self.string()?;
                super::slot::push_string(&mut self.stack, s);
                return Ok(());
            }
            b'\\' => self.char_lit()?,
            b'#' => self.dispatch(depth)?,
            b':' => {
                self.pos += 1;
                let t = self.token();
                if t.is_empty() || t.starts_with(':') {
                    return Err(self.err(at, "expected a keyword name after :"));
                }
                let k = self.keyword(t);
                super::slot::push_keyword(&mut self.stack, k);
                return Ok(());
            }
            _ => self.atom_token(at)?,
        };
        self.stack.push(v);
        Ok(())
    }

    /// A symbol, number or literal word: the token at `at`, read by [`Self::atom`].
    fn atom_token(&mut self, at: usize) -> Result<Edn, Failed> {
        let t = self.token();
        if t.is_empty() {
            let c = self.peek().unwrap_or(' ');
            return Err(self.err(at, format!("unexpected character {c:?}")));
        }
        self.atom(t, at)
    }

    /// A plain integer of at most 18 digits that ends where its token ends (most numbers of
    /// an answer), read without taking the token first; `None`, the position unmoved, for
    /// anything else, which [`Self::atom`] reads.
    fn plain_long(&mut self) -> Option<i64> {
        let bytes = self.s.as_bytes();
        let negative = bytes.get(self.pos) == Some(&b'-');
        let start = self.pos + usize::from(negative);
        let mut end = start;
        let mut n: i64 = 0;
        while let Some(&b) = bytes.get(end) {
            if !b.is_ascii_digit() {
                break;
            }
            if end - start == 18 {
                return None;
            }
            n = n * 10 + i64::from(b - b'0');
            end += 1;
        }
        if end == start {
            return None;
        }
        match bytes.get(end) {
            None => {}
            Some(&b) if b < 0x80 && ENDS_TOKEN[b as usize] => {}
            Some(_) => return None,
        }
        self.pos = end;
        Some(if negative { -n } else { n })
    }

    /// The items of a collection up to `close`, as one vector.
    fn seq(&mut self, close: u8, open_at: usize, depth: usize) -> Result<Vec<Edn>, Failed> {
        let base = self.items(close, open_at, depth)?;
        // One allocation of the exact size, filled by one copy.
        Ok(self.stack.split_off(base))
    }

    /// Reads a collection's items up to `close` onto the stack; answers where they start.
    fn items(&mut self, close: u8, open_at: usize, depth: usize) -> Result<usize, Failed> {
        let base = self.stack.len();
        loop {
            self.skip_ws()?;
            match self.s.as_bytes().get(self.pos) {
                None => {
                    return Err(self.err(
                        open_at,
                        format!("unclosed collection: expected {}", close as char),
                    ))
                }
                Some(&b) if b == close => {
                    self.pos += 1;
                    return Ok(base);
                }
                Some(&b @ (b')' | b']' | b'}')) => {
                    return Err(self.err(
                        self.pos,
                        format!("unbalanced {}: expected {}", b as char, close as char),
                    ))
                }
                Some(_) => self.push(depth + 1)?,
            }
        }
    }

    fn string(&mut self) -> Result<String, Failed> {
        let at = self.pos;
        self.bump();
        let mut out = String::new();
        loop {
            // The run up to the next quote or backslash, copied at once (both are ASCII, so
            // the run ends on a character boundary).
            let rest = &self.s.as_bytes()[self.pos..];
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .unwrap_or(rest.len());
            out.push_str(&self.s[self.pos..self.pos + run]);
            self.pos += run;
            match self.bump() {
                None => return Err(self.err(at, "unterminated string")),
                Some('"') => return Ok(out),
                Some('\\') => {
                    let esc_at = self.pos - 1;
                    match self.bump() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('b') => out.push('\u{8}'),
                        Some('f') => out.push('\u{c}'),
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        Some('u') => {
                            let hex = self.s.get(self.pos..self.pos + 4).unwrap_or("");
                            let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                            match ch {
                                Some(ch) if hex.len() == 4 => {
                                    self.pos += 4;
                                    out.push(ch)
                                }
                                _ => {
                                    return Err(
                                        self.err(esc_at, "bad \\u escape: expected 4 hex digits")
                                    )
                                }
                            }
                        }
                        _ => return Err(self.err(esc_at, "unknown escape in string")),
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn char_lit(&mut self) -> Result<Edn, Failed> {
        let at = self.pos;
        self.bump();
        let Some(first) = self.bump() else {
            return Err(self.err(at, "expected a character after \\"));
        };
        let rest = self.token();
        let name = format!("{first}{rest}");
        let c = match name.as_str() {
            "newline" => '\n',
            "space" => ' ',
            "tab" => '\t',
            "return" => '\r',
            "backspace" => '\u{8}',
            "formfeed" => '\u{c}',
            n if n.chars().count() == 1 => first,
            n if n.starts_with('u') && n.len() == 5 => u32::from_str_radix(&n[1..], 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| self.err(at, "bad unicode character"))?,
            _ => return Err(self.err(at, format!("unknown character name \\{name}"))),
        };
        Ok(Edn::Char(c))
    }

    fn dispatch(&mut self, depth: usize) -> Result<Edn, Failed> {
        let at = self.pos;
        self.bump();
        match self.peek() {
            Some('{') => {
                self.bump();
                Ok(Edn::Set(self.seq(b'}', at, depth)?))
            }
            Some('"') => self.regex_lit(at),
            Some('#') => {
                self.bump();
                match self.token() {
                    "Inf" => Ok(Edn::Double(f64::INFINITY)),
                    "-Inf" => Ok(Edn::Double(f64::NEG_INFINITY)),
                    "NaN" => Ok(Edn::Double(f64::NAN)),
                    other => Err(self.err(at, format!("unknown symbolic value ##{other}"))),
                }
            }
            // EDN: a tag is a symbol starting with a letter (`#:ns{}` and `#::{}` are
            // Clojure's namespaced maps, not EDN; read as tags they would print back as maps).
            Some(c) if c.is_alphabetic() => {
                let tag = self.token();
                self.skip_ws()?;
                let value = self.value(depth + 1)?;
                match (tag, &value) {
                    ("inst", Edn::String(s)) => parse_inst(s)
                        .map(Edn::Inst)
                        .ok_or_else(|| self.err(at, format!("bad #inst {s:?}: expected RFC 3339"))),
                    ("uuid", Edn::String(s)) => parse_uuid(s)
                        .map(Edn::Uuid)
                        .ok_or_else(|| self.err(at, format!("bad #uuid {s:?}"))),
                    ("inst" | "uuid", _) => Err(self.err(at, format!("#{tag} needs a string"))),
                    _ => Ok(Edn::Tagged(Keyword::parse(tag), Box::new(value))),
                }
            }
            _ => Err(self.err(
                at,
                "expected a tag (a symbol starting with a letter), {, ## or _ after #",
            )),
        }
    }

    /// `#"..."` (Clojure's regex literal): the text up to the closing quote, as written
    /// (backslashes belong to the pattern; `\"` is a quote inside it).
    fn regex_lit(&mut self, at: usize) -> Result<Edn, Failed> {
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(at, "unterminated regex literal")),
                Some('"') => return Ok(Edn::Regex(out)),
                Some('\\') => {
                    out.push('\\');
                    match self.bump() {
                        Some(c) => out.push(c),
                        None => return Err(self.err(at, "unterminated regex literal")),
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    /// A ratio `31/5` (Clojure's rule: read in lowest terms, a whole result as an integer).
    fn ratio(&self, t: &str, at: usize) -> Result<Edn, Failed> {
        let bad = |why: &str| self.err(at, format!("bad ratio {t:?}: {why}"));
        let (n, d) = t.split_once('/').ok_or_else(|| bad("expected n/d"))?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let n_digits = n.strip_prefix(['-', '+']).unwrap_or(n);
        if !digits(n_digits) || !digits(d) {
            return Err(bad("expected integer digits on both sides of /"));
        }
        let parse = |s: &str| s.parse::<i128>().map_err(|_| bad("beyond 128 bits"));
        match Ratio::reduce(parse(n)?, parse(d)?) {
            None => Err(bad("divide by zero")),
            Some(Reduced::Fraction(r)) => Ok(Edn::Ratio(r)),
            Some(Reduced::Whole(w)) => Ok(match i64::try_from(w) {
                Ok(l) => Edn::Long(l),
                Err(_) => Edn::BigInt(w),
            }),
        }
    }

    fn atom(&self, t: &str, at: usize) -> Result<Edn, Failed> {
        match t {
            "nil" => return Ok(Edn::Nil),
            "true" => return Ok(Edn::Bool(true)),
            "false" => return Ok(Edn::Bool(false)),
            _ => {}
        }
        // A plain integer short enough for an i64 (most numbers an answer holds): read
        // without the checks for the other kinds of number below.
        let digits = t.strip_prefix('-').unwrap_or(t);
        if !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) {
            let n = digits
                .bytes()
                .fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
            return Ok(Edn::Long(if digits.len() < t.len() { -n } else { n }));
        }
        let first = t.chars().next().unwrap_or(' ');
        let numeric = first.is_ascii_digit()
            || ((first == '-' || first == '+') && t[1..].starts_with(|c: char| c.is_ascii_digit()));
        if !numeric {
            return Ok(Edn::Symbol(Keyword::parse(t)));
        }
        let bad = || self.err(at, format!("bad number {t:?}"));
        if t.contains('/') {
            return self.ratio(t, at);
        }
        if let Some(body) = t.strip_suffix('N') {
            return body.parse::<i128>().map(Edn::BigInt).map_err(|_| bad());
        }
        if t.ends_with('M') {
            return BigDec::parse(t).map(Edn::BigDec).ok_or_else(bad);
        }
        if t.contains(['.', 'e', 'E']) {
            return t.parse::<f64>().map(Edn::Double).map_err(|_| bad());
        }
        match t.parse::<i64>() {
            Ok(n) => Ok(Edn::Long(n)),
            Err(_) => t.parse::<i128>().map(Edn::BigInt).map_err(|_| bad()),
        }
    }
}

/// Reads exactly one form (trailing whitespace and comments allowed).
pub fn read_one(s: &str) -> Result<Edn, ReadError> {
    read_one_inner(&mut Reader::new(s, None)).map_err(|e| *e)
}

/// Reads exactly one form and the byte range (`start..end` in `s`) of each form in it, in
/// preorder: the form itself first, then each child's subtree in order (a map's key before
/// its value, a tagged value's form after the tag).
pub(crate) fn read_one_spanned(s: &str) -> Result<(Edn, Vec<(usize, usize)>), ReadError> {
    let mut r = Reader::new(s, Some(Vec::new()));
    let v = read_one_inner(&mut r).map_err(|e| *e)?;
    Ok((v, r.spans.unwrap_or_default()))
}

fn read_one_inner(r: &mut Reader<'_>) -> Result<Edn, Failed> {
    let s = r.s;
    let v = r
        .next()?
        .ok_or_else(|| r.err(0, "expected a form, found nothing"))?;
    r.skip_ws()?;
    if r.pos < s.len() {
        return Err(r.err(r.pos, "unexpected text after the form"));
    }
    Ok(v)
}

/// Reads every form of `s`.
pub fn read_all(s: &str) -> Result<Vec<Edn>, ReadError> {
    let mut r = Reader::new(s, None);
    let mut out = Vec::new();
    while let Some(v) = r.next().map_err(|e| *e)? {
        out.push(v);
    }
    Ok(out)
}

/// Whether `s` holds complete forms (no collection or string left open), for multi-line
/// input: the shell keeps reading lines while this is false.
pub fn is_complete(s: &str) -> bool {
    match read_all(s) {
        Ok(_) => true,
        Err(e) => !runs_out(&e),
    }
}

/// The first form of `s` and the bytes it took (the spacing before it included), or `None`
/// when `s` ends before the form does (a collection or string left open, or nothing but
/// spacing): for text read as it arrives, such as a server's answer. A token at the very end
/// of `s` counts as whole (`12` may be the start of `123`): give text that ends with spacing
/// or a closing delimiter, or the whole of it.
pub fn read_prefix(s: &str) -> Result<Option<(Edn, usize)>, ReadError> {
    let mut r = Reader::new(s, None);
    match r.next() {
        Ok(Some(v)) => Ok(Some((v, r.pos))),
        Ok(None) => Ok(None),
        Err(e) if runs_out(&e) => Ok(None),
        Err(e) => Err(*e),
    }
}

/// Whether the error is the text ending before its form did.
fn runs_out(e: &ReadError) -> bool {
    e.message.starts_with("unclosed")
        || e.message.starts_with("unterminated")
        || e.message.contains("end of input")
}

/// Parses an RFC 3339 timestamp (`2024-01-02T03:04:05.678Z`, offsets, or a bare date) to
/// epoch milliseconds.
pub fn parse_inst(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let t = s.get(from..from + len)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let year = num(0, 4)?;
    let (month, day) = if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        (num(5, 2)?, num(8, 2)?)
    } else if b.len() == 4 {
        (1, 1)
    } else {
        return None;
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    if b.len() == 10 || b.len() == 4 {
        return Some(ms);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' '))
        || b.get(13) != Some(&b':')
        || b.get(16) != Some(&b':')
    {
        return None;
    }
    let (h, m, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if h > 23 || m > 59 || sec > 60 {
        return None;
    }
    ms += (h * 3600 + m * 60 + sec) * 1000;
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = s.get(start..i)?;
        if frac.is_empty() {
            return None;
        }
        let ms_part: String = frac.chars().chain("000".chars()).take(3).collect();
        ms += ms_part.parse::<i64>().ok()?;
    }
    match b.get(i) {
        None => Some(ms),
        Some(b'Z' | b'z') if i + 1 == b.len() => Some(ms),
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let off = (num(i + 1, 2)? * 60 + num(i + 4, 2)?) * 60_000;
            Some(if *sign == b'+' { ms - off } else { ms + off })
        }
        _ => None,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of `days_from_civil`.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod table_tests {
    use super::{is_delim, ENDS_TOKEN};

    #[test]
    fn the_token_table_is_is_delim_on_ascii() {
        for b in 0u8..128 {
            assert_eq!(ENDS_TOKEN[b as usize], is_delim(b as char), "byte {b}");
        }
    }
}
