//! The search query language, parsed into clauses: Lucene's classic syntax, which Datomic's
//! `fulltext` reads.
//!
//! - `red fox`: either word (the default operator is OR); `+fox` must match, `-fox`, `!fox`
//!   or `NOT fox` must not; `a AND b` (or `&&`) requires both; `OR` (or `||`) is the default.
//! - `"red fox"`: the words in a row; `"red fox"~2`: within two moves of it (sloppy phrase).
//! - `fox*`: any word starting so; `f?x`, `f*x`: wildcards inside a word; `fox~`,
//!   `fox~0.8`: words alike (Levenshtein similarity above 0.5, or the given one).
//! - `[a TO b]`, `{a TO b}`: the words between, bounds included or not.
//! - `(a b) AND c`: grouping; `fox^2`: a clause's score weighted.
//! - `v:fox` is `fox` (the value's field, as Datomic names it); any other field matches
//!   nothing; `*:*` matches every document.
//! - `\*`: a character taken literally.
//!
//! Words go through the index's analyzer, so a query word matches the forms the documents
//! were indexed with; a word that analyzes to several terms (`banana-fox`) is an OR of them,
//! as in Lucene; wildcard, fuzzy and range words are only lower-cased (they are not words).

use super::analyze::Analyzer;
use super::error::SearchError;
use crate::limits::MAX_SEARCH_QUERY_BYTES;

/// How a clause takes part in a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occur {
    /// Optional: a document matches if it matches some optional clause (when no clause is
    /// required), and each one it matches adds to its score.
    Should,
    /// Required.
    Must,
    /// Excluded: a document that matches it is not a match.
    MustNot,
}

/// What one clause matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// One term.
    Term(String),
    /// Terms at these positions relative to each other (gaps where a stop word was removed),
    /// within `slop` moves (0: exactly in a row).
    Phrase(Vec<(String, u32)>, u32),
    /// Every term that starts with this text.
    Prefix(String),
    /// Every term matching this pattern (`*`: any characters, `?`: one).
    Wildcard(String),
    /// Every term whose similarity to this one is above `min_similarity`.
    Fuzzy {
        /// The term.
        term: String,
        /// The similarity a term must exceed (Lucene's: 1 - edits / shorter length).
        min_similarity: f32,
    },
    /// Every term between `lo` and `hi` (by bytes), each bound included or not.
    Range {
        /// The lower bound.
        lo: String,
        /// The upper bound.
        hi: String,
        /// Whether `lo` itself matches.
        lo_included: bool,
        /// Whether `hi` itself matches.
        hi_included: bool,
    },
    /// Every document.
    All,
    /// A nested query (a parenthesized group, or the terms of one word); empty, it matches
    /// nothing.
    Group(SearchQuery),
}

/// One clause of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryClause {
    /// How it takes part.
    pub occur: Occur,
    /// What it matches.
    pub matcher: Matcher,
    /// Its score's weight (1 unless `^boost` says otherwise).
    pub boost: f32,
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchQuery {
    /// Its clauses, in the order written (duplicates kept: a repeated word counts twice, as
    /// in Lucene).
    pub clauses: Vec<QueryClause>,
}

impl SearchQuery {
    /// Whether no document can match (no clause that selects documents: every word was a
    /// stop word, or only exclusions were given).
    pub fn matches_nothing(&self) -> bool {
        !self.clauses.iter().any(|c| c.occur != Occur::MustNot)
    }
}

/// Parses `text` with `analyzer`'s analysis.
pub fn parse(text: &str, analyzer: &Analyzer) -> Result<SearchQuery, SearchError> {
    if text.len() > MAX_SEARCH_QUERY_BYTES {
        return Err(SearchError::BadQuery {
            query: text.chars().take(80).collect::<String>() + "...",
            reason: format!("longer than {MAX_SEARCH_QUERY_BYTES} bytes"),
        });
    }
    let bad = |reason: String| SearchError::BadQuery {
        query: text.to_string(),
        reason,
    };
    let tokens = lex(text).map_err(bad)?;
    if tokens.is_empty() {
        return Err(bad("the query is empty".into()));
    }
    let mut p = Parser {
        tokens,
        at: 0,
        analyzer,
    };
    let q = p.query(0).map_err(bad)?;
    if p.at < p.tokens.len() {
        return Err(bad("a ) with no ( before it".into()));
    }
    Ok(q)
}

/// One lexical item.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A word as written, escapes resolved, with which of its characters were wildcards.
    Word {
        text: String,
        wild: Vec<bool>,
    },
    /// A quoted phrase's text.
    Quoted(String),
    /// `[lo TO hi]` or `{lo TO hi}`.
    Range {
        lo: String,
        hi: String,
        lo_included: bool,
        hi_included: bool,
    },
    /// `field:` before an atom.
    Field(String),
    /// `~` with its number, if any.
    Tilde(Option<f32>),
    /// `^` with its number.
    Caret(f32),
    Plus,
    Minus,
    Not,
    And,
    Or,
    Open,
    Close,
}

/// Characters that end a word (unless escaped).
fn special(c: char) -> bool {
    matches!(c, '(' | ')' | '"' | '[' | ']' | '{' | '}' | '^' | '~' | ':')
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let number = |chars: &[char], i: &mut usize| -> Option<f32> {
        let start = *i;
        while *i < chars.len() && (chars[*i].is_ascii_digit() || chars[*i] == '.') {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>().parse().ok()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match c {
            '(' => {
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            // A sign where a token begins is a modifier, after a field too (`title:+fox`,
            // which the parser then refuses, as Lucene's does).
            '+' => {
                out.push(Tok::Plus);
                i += 1;
            }
            '-' => {
                out.push(Tok::Minus);
                i += 1;
            }
            '!' => {
                out.push(Tok::Not);
                i += 1;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("a phrase's quote is not closed".into()),
                        Some('"') => break,
                        Some('\\') => {
                            s.extend(chars.get(i + 1));
                            i += 2;
                        }
                        Some(ch) => {
                            s.push(*ch);
                            i += 1;
                        }
                    }
                }
                i += 1;
                out.push(Tok::Quoted(s));
            }
            '[' | '{' => {
                let end = chars[i..]
                    .iter()
                    .position(|&x| x == ']' || x == '}')
                    .map(|p| i + p)
                    .ok_or("a range's bracket is not closed")?;
                let inner: String = chars[i + 1..end].iter().collect();
                let parts: Vec<&str> = inner.split_whitespace().collect();
                let [lo, "TO", hi] = parts[..] else {
                    return Err("a range is written [low TO high] or {low TO high}".into());
                };
                out.push(Tok::Range {
                    lo: lo.trim_matches('"').to_lowercase(),
                    hi: hi.trim_matches('"').to_lowercase(),
                    lo_included: c == '[',
                    hi_included: chars[end] == ']',
                });
                i = end + 1;
            }
            '~' => {
                i += 1;
                out.push(Tok::Tilde(number(&chars, &mut i)));
            }
            '^' => {
                i += 1;
                let n = number(&chars, &mut i).ok_or("a ^ needs a number after it")?;
                out.push(Tok::Caret(n));
            }
            ':' | ']' | '}' => return Err(format!("a {c} out of place")),
            _ => {
                let mut s = String::new();
                let mut wild = Vec::new();
                while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
                    if chars[i] == '\\' {
                        let Some(&next) = chars.get(i + 1) else {
                            return Err("the query ends in an escape (\\)".into());
                        };
                        s.push(next);
                        wild.push(false);
                        i += 2;
                        continue;
                    }
                    s.push(chars[i]);
                    wild.push(matches!(chars[i], '*' | '?'));
                    i += 1;
                }
                if chars.get(i) == Some(&':') {
                    i += 1;
                    out.push(Tok::Field(s));
                    continue;
                }
                out.push(match s.as_str() {
                    "AND" | "&&" => Tok::And,
                    "OR" | "||" => Tok::Or,
                    "NOT" => Tok::Not,
                    _ => Tok::Word { text: s, wild },
                });
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<Tok>,
    at: usize,
    analyzer: &'a Analyzer,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    /// Clauses up to the end or a `)` (at depth > 0).
    fn query(&mut self, depth: usize) -> Result<SearchQuery, String> {
        let mut out = SearchQuery::default();
        // Which parsed clause each written clause became (`None`: it analyzed to nothing).
        let mut last: Option<Option<usize>> = None;
        let mut conj: Option<Tok> = None;
        loop {
            match self.peek() {
                None if depth > 0 => return Err("a ( is not closed".into()),
                None => break,
                Some(Tok::Close) if depth > 0 => {
                    self.at += 1;
                    break;
                }
                Some(Tok::Close) => return Err("a ) with no ( before it".into()),
                Some(Tok::And) | Some(Tok::Or) => {
                    if last.is_none() || conj.is_some() {
                        return Err("an operator with no clause before it".into());
                    }
                    conj = self.next();
                    continue;
                }
                _ => {}
            }
            // One modifier at most (Lucene's grammar: `NOT +fox` and `+-fox` are refused).
            let occur = match self.peek() {
                Some(Tok::Plus) => Some(Occur::Must),
                Some(Tok::Minus) | Some(Tok::Not) => Some(Occur::MustNot),
                _ => None,
            };
            if occur.is_some() {
                self.at += 1;
            }
            let parsed = self.clause()?;
            let mut occur = occur.unwrap_or(Occur::Should);
            if conj == Some(Tok::And) {
                if occur == Occur::Should {
                    occur = Occur::Must;
                }
                if let Some(Some(i)) = last {
                    let c: &mut QueryClause = &mut out.clauses[i];
                    if c.occur == Occur::Should {
                        c.occur = Occur::Must;
                    }
                }
            }
            conj = None;
            last = Some(parsed.map(|(matcher, boost)| {
                out.clauses.push(QueryClause {
                    occur,
                    matcher,
                    boost,
                });
                out.clauses.len() - 1
            }));
        }
        if conj.is_some() {
            return Err("an operator with no clause after it".into());
        }
        // An optional group of optional clauses is those clauses (the same matches and
        // scores, and a flat disjunction can be pruned).
        let mut flat = Vec::with_capacity(out.clauses.len());
        for c in out.clauses {
            match c.matcher {
                Matcher::Group(g)
                    if c.occur == Occur::Should
                        && c.boost == 1.0
                        && !g.clauses.is_empty()
                        && g.clauses.iter().all(|x| x.occur == Occur::Should) =>
                {
                    flat.extend(g.clauses)
                }
                matcher => flat.push(QueryClause { matcher, ..c }),
            }
        }
        Ok(SearchQuery { clauses: flat })
    }

    /// One clause's atom and boost; `None` when it analyzes to nothing.
    fn clause(&mut self) -> Result<Option<(Matcher, f32)>, String> {
        let mut field_ok = true;
        let mut all = false;
        if let Some(Tok::Field(f)) = self.peek() {
            // Datomic indexes a value as the field `v`; `*:*` is every document.
            all = f == "*";
            field_ok = f == "v" || all;
            self.at += 1;
        }
        let matcher = match self.next() {
            None => return Err("an operator with no clause after it".into()),
            Some(Tok::Open) => Some(Matcher::Group(self.query(1)?)),
            Some(Tok::Quoted(s)) => {
                let slop = match self.peek() {
                    Some(Tok::Tilde(n)) => {
                        let n = n.unwrap_or(0.0);
                        self.at += 1;
                        n.max(0.0) as u32
                    }
                    _ => 0,
                };
                self.words(&s, slop)
            }
            Some(Tok::Range {
                lo,
                hi,
                lo_included,
                hi_included,
            }) => Some(Matcher::Range {
                lo,
                hi,
                lo_included,
                hi_included,
            }),
            Some(Tok::Word { text, wild }) => {
                if all && text == "*" {
                    Some(Matcher::All)
                } else {
                    self.word(&text, &wild)?
                }
            }
            Some(t) => return Err(format!("{} out of place", show(&t))),
        };
        let mut boost = 1.0;
        if let Some(Tok::Caret(b)) = self.peek() {
            boost = *b;
            self.at += 1;
        }
        Ok(match (matcher, field_ok) {
            (Some(m), true) => Some((m, boost)),
            // Another field: a clause that matches nothing (Datomic's index has no such field).
            (Some(_), false) => Some((Matcher::Group(SearchQuery::default()), boost)),
            (None, _) => None,
        })
    }

    /// A bare word: a wildcard or prefix pattern, a fuzzy word, or words.
    fn word(&mut self, text: &str, wild: &[bool]) -> Result<Option<Matcher>, String> {
        if wild.first() == Some(&true) {
            return Err("a word cannot start with * or ?".into());
        }
        if let Some(Tok::Tilde(n)) = self.peek() {
            let n = *n;
            self.at += 1;
            let min_similarity = n.unwrap_or(0.5);
            if !(0.0..1.0).contains(&min_similarity) {
                return Err("a fuzzy similarity (word~x) is between 0 and 1".into());
            }
            return Ok(Some(Matcher::Fuzzy {
                term: text.to_lowercase(),
                min_similarity,
            }));
        }
        if wild.iter().any(|w| *w) {
            let chars: Vec<char> = text.chars().collect();
            let only_last = wild[..wild.len() - 1].iter().all(|w| !w) && chars.last() == Some(&'*');
            return Ok(Some(if only_last {
                Matcher::Prefix(self.analyzer.prefix_term(&text[..text.len() - 1]))
            } else {
                // Escaped wildcard characters cannot be told apart from the pattern's once
                // in a string: an escaped * or ? inside a pattern is rare enough to refuse.
                Matcher::Wildcard(text.to_lowercase())
            }));
        }
        // A bare word that analyzes to several terms is an OR of them (Lucene's parser).
        Ok(match self.words(text, 0) {
            Some(Matcher::Phrase(terms, _)) => Some(Matcher::Group(SearchQuery {
                clauses: terms
                    .into_iter()
                    .map(|(t, _)| QueryClause {
                        occur: Occur::Should,
                        matcher: Matcher::Term(t),
                        boost: 1.0,
                    })
                    .collect(),
            })),
            other => other,
        })
    }

    /// The terms of `text`: one term, a phrase (quoted) or an OR of terms (a bare word that
    /// analyzes to several), or nothing.
    fn words(&self, text: &str, slop: u32) -> Option<Matcher> {
        let tokens = self.analyzer.tokens(text);
        match tokens.len() {
            0 => None,
            1 => tokens.into_iter().next().map(|t| Matcher::Term(t.term)),
            _ => {
                let first = tokens[0].position;
                Some(Matcher::Phrase(
                    tokens
                        .into_iter()
                        .map(|t| (t.term, t.position - first))
                        .collect(),
                    slop,
                ))
            }
        }
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Close => ")".into(),
        Tok::And => "AND".into(),
        Tok::Or => "OR".into(),
        Tok::Not => "NOT".into(),
        Tok::Plus => "+".into(),
        Tok::Minus => "-".into(),
        Tok::Tilde(_) => "~".into(),
        Tok::Caret(_) => "^".into(),
        Tok::Field(f) => format!("{f}:"),
        _ => "a clause".into(),
    }
}

/// Whether `term` matches the wildcard `pattern` (`*`: any characters, `?`: one).
pub fn wildcard_matches(pattern: &str, term: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = term.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Lucene's fuzzy similarity of two terms: 1 - edit distance / the shorter length.
pub fn similarity(a: &str, b: &str) -> f32 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let shorter = a.len().min(b.len());
    if shorter == 0 {
        return if a.len() == b.len() { 1.0 } else { 0.0 };
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    1.0 - prev[b.len()] as f32 / shorter as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::analyze::{AnalyzerConfig, StopWords};

    fn shape(text: &str) -> String {
        let a = Analyzer::new(AnalyzerConfig {
            stop_words: StopWords::Classic,
            stemmer: None,
        });
        match parse(text, &a) {
            Err(_) => "error".into(),
            Ok(q) => show_query(&q),
        }
    }

    fn show_query(q: &SearchQuery) -> String {
        q.clauses
            .iter()
            .map(|c| {
                let sign = match c.occur {
                    Occur::Should => "",
                    Occur::Must => "+",
                    Occur::MustNot => "-",
                };
                let m = match &c.matcher {
                    Matcher::Term(t) => t.clone(),
                    Matcher::Phrase(ts, slop) => format!(
                        "\"{}\"~{slop}",
                        ts.iter()
                            .map(|(t, p)| format!("{t}@{p}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    Matcher::Prefix(p) => format!("{p}*"),
                    Matcher::Wildcard(w) => format!("w:{w}"),
                    Matcher::Fuzzy {
                        term,
                        min_similarity,
                    } => format!("{term}~{min_similarity}"),
                    Matcher::Range {
                        lo,
                        hi,
                        lo_included,
                        hi_included,
                    } => {
                        format!(
                            "{}{lo},{hi}{}",
                            if *lo_included { "[" } else { "{" },
                            if *hi_included { "]" } else { "}" }
                        )
                    }
                    Matcher::All => "ALL".into(),
                    Matcher::Group(g) => format!("({})", show_query(g)),
                };
                let boost = if c.boost == 1.0 {
                    String::new()
                } else {
                    format!("^{}", c.boost)
                };
                format!("{sign}{m}{boost}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn queries_parse_to_clauses() {
        let cases: &[(&str, &str)] = &[
            ("red fox", "red fox"),
            ("+red -fox", "+red -fox"),
            ("NOT fox !dog", "-fox -dog"),
            ("quick AND dog", "+quick +dog"),
            ("quick && dog || cat", "+quick +dog cat"),
            ("\"House of the Rising\"", "\"house@0 rising@3\"~0"),
            ("\"quick fox\"~2", "\"quick@0 fox@1\"~2"),
            ("\"the quick\"", "quick"),
            ("banana-fox", "banana fox"),
            ("+banana-fox", "+(banana fox)"),
            ("qui*", "qui*"),
            ("f?x w*e", "w:f?x w:w*e"),
            ("fox~ fix~0.9", "fox~0.5 fix~0.9"),
            ("[sun TO sunset] {a TO b}", "[sun,sunset] {a,b}"),
            ("v:banana body:banana", "banana ()"),
            ("*:*", "ALL"),
            ("fox^2", "fox^2"),
            ("(x y) AND z", "+(x y) +z"),
            ("(x y) z", "x y z"),
            ("+the", ""),
            ("\\*", ""),
            ("\"\"", ""),
            ("", "error"),
            ("\"unclosed", "error"),
            ("(fox", "error"),
            ("fox)", "error"),
            ("*ox", "error"),
            ("fox OR", "error"),
            ("AND fox", "error"),
            ("fox~2", "error"),
            ("fox\\", "error"),
        ];
        for (text, want) in cases {
            assert_eq!(shape(text), *want, "{text:?}");
        }
    }

    #[test]
    fn wildcards_and_similarity() {
        for (p, t, want) in [
            ("f*x", "fox", true),
            ("f*x", "fx", true),
            ("f?x", "fox", true),
            ("f?x", "fx", false),
            ("hike?", "hikes", true),
            ("hike?", "hike", false),
            ("w*e", "wine", true),
            ("w*e", "winery", false),
        ] {
            assert_eq!(wildcard_matches(p, t), want, "{p} {t}");
        }
        assert_eq!(similarity("hikr", "hike"), 0.75);
        assert!(similarity("fix", "fox") < 0.9);
    }
}
