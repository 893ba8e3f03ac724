//! The search query language, parsed into clauses. Lucene's basic syntax, which Datomic's
//! `fulltext` also reads: bare words match any (`red fox`: either), `+word` must match,
//! `-word` (or `NOT word`) must not, `"a phrase"` matches those words in a row, `pre*` matches
//! any word starting so, `a AND b` requires both. Words go through the index's analyzer, so a
//! query word matches the same forms the documents were indexed with.

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// One term.
    Term(String),
    /// Terms at these positions relative to each other (gaps where a stop word was removed).
    Phrase(Vec<(String, u32)>),
    /// Every term that starts with this text.
    Prefix(String),
}

/// One clause of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryClause {
    /// How it takes part.
    pub occur: Occur,
    /// What it matches.
    pub matcher: Matcher,
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
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

/// One lexical item of the query text.
#[derive(Debug, PartialEq)]
enum Item<'a> {
    Word(&'a str),
    /// A quoted phrase, with the sign before its quote (`+"a b"`, `-"a b"`).
    Quoted(Option<Occur>, &'a str),
    And,
    Or,
    Not,
}

/// Parses `text` with `analyzer`'s analysis.
pub fn parse(text: &str, analyzer: &Analyzer) -> Result<SearchQuery, SearchError> {
    if text.len() > MAX_SEARCH_QUERY_BYTES {
        return Err(SearchError::BadQuery {
            query: text.chars().take(80).collect::<String>() + "...",
            reason: format!("longer than {MAX_SEARCH_QUERY_BYTES} bytes"),
        });
    }
    let bad = |reason: &str| SearchError::BadQuery {
        query: text.to_string(),
        reason: reason.to_string(),
    };
    check_syntax(text).map_err(|r| bad(&r))?;
    let items = lex(text).map_err(|r| bad(&r))?;
    if items.is_empty() {
        return Err(bad("the query is empty"));
    }
    if matches!(items.last(), Some(Item::And | Item::Or | Item::Not)) {
        return Err(bad("an operator with no clause after it"));
    }
    if matches!(items.first(), Some(Item::And | Item::Or)) {
        return Err(bad("an operator with no clause before it"));
    }
    let mut out = SearchQuery::default();
    let mut pending_occur: Option<Occur> = None;
    // `a AND b`: the clause before the AND becomes required too.
    let mut last_positive: Option<usize> = None;
    let mut and_next = false;
    for item in items {
        let (sign, body) = match item {
            Item::And => {
                if last_positive.is_none() {
                    return Err(bad("AND needs a clause on each side"));
                }
                and_next = true;
                continue;
            }
            Item::Or => continue,
            Item::Not => {
                pending_occur = Some(Occur::MustNot);
                continue;
            }
            Item::Word(w) => match w.as_bytes()[0] {
                b'+' => (Some(Occur::Must), Item::Word(&w[1..])),
                b'-' => (Some(Occur::MustNot), Item::Word(&w[1..])),
                _ => (None, Item::Word(w)),
            },
            Item::Quoted(sign, q) => (sign, Item::Quoted(None, q)),
        };
        let mut occur = sign.or(pending_occur.take()).unwrap_or(Occur::Should);
        if and_next {
            and_next = false;
            if occur == Occur::Should {
                occur = Occur::Must;
            }
            if let Some(i) = last_positive {
                if out.clauses[i].occur == Occur::Should {
                    out.clauses[i].occur = Occur::Must;
                }
            }
        }
        let matcher = match body {
            Item::Quoted(_, q) => phrase(analyzer, q),
            Item::Word("") => return Err(bad("a + or - with no word after it")),
            Item::Word(w) if w.ends_with('*') => {
                let stem = w.trim_end_matches('*');
                if stem.is_empty() || stem.contains('*') {
                    return Err(bad("a prefix query needs a word before its *"));
                }
                let p = analyzer.prefix_term(stem);
                if p.chars().all(|c| !c.is_alphanumeric()) {
                    return Err(bad("a prefix query needs a word before its *"));
                }
                Some(Matcher::Prefix(p))
            }
            Item::Word(w) => phrase(analyzer, w),
            _ => None,
        };
        if let Some(matcher) = matcher {
            if occur != Occur::MustNot {
                last_positive = Some(out.clauses.len());
            }
            out.clauses.push(QueryClause { occur, matcher });
        }
    }
    if and_next {
        return Err(bad("AND needs a clause on each side"));
    }
    Ok(out)
}

/// The terms of `text`: one term, a phrase of several, or none (all stop words or
/// punctuation).
fn phrase(analyzer: &Analyzer, text: &str) -> Option<Matcher> {
    let tokens = analyzer.tokens(text);
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
            ))
        }
    }
}

/// Splits the text into words, quoted phrases and the operator words.
fn lex(text: &str) -> Result<Vec<Item<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(out);
        }
        let quote_at = match rest.as_bytes()[0] {
            b'"' => Some(0),
            b'+' | b'-' if rest.as_bytes().get(1) == Some(&b'"') => Some(1),
            _ => None,
        };
        if let Some(q) = quote_at {
            let body = &rest[q + 1..];
            let Some(end) = body.find('"') else {
                return Err("a phrase's quote is not closed".into());
            };
            let sign = match &rest[..q] {
                "+" => Some(Occur::Must),
                "-" => Some(Occur::MustNot),
                _ => None,
            };
            out.push(Item::Quoted(sign, &body[..end]));
            rest = &body[end + 1..];
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '"')
            .unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        out.push(match word {
            "AND" | "&&" => Item::And,
            "OR" | "||" => Item::Or,
            "NOT" | "!" => Item::Not,
            w => Item::Word(w),
        });
    }
}

/// What Lucene's query parser refuses and this one would otherwise read loosely: unbalanced
/// parentheses, a trailing escape, a word starting with a wildcard, a fuzzy similarity of 1
/// or more.
fn check_syntax(text: &str) -> Result<(), String> {
    let mut depth = 0i32;
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth < 0 {
                    return Err("a ) with no ( before it".into());
                }
            }
            _ => {}
        }
    }
    if depth != 0 && !quoted {
        return Err("a ( is not closed".into());
    }
    if text.trim_end().ends_with('\\') {
        return Err("the query ends in an escape (\\)".into());
    }
    for word in text.split_whitespace() {
        let w = word.trim_start_matches(['+', '-', '(']);
        if w.starts_with('*') || w.starts_with('?') {
            return Err("a word cannot start with * or ?".into());
        }
        if let Some((_, sim)) = w.rsplit_once('~') {
            if let Ok(x) = sim.trim_end_matches(')').parse::<f64>() {
                if !(0.0..1.0).contains(&x) {
                    return Err("a fuzzy similarity (word~x) is between 0 and 1".into());
                }
            }
        }
    }
    Ok(())
}
