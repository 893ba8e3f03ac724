//! Where a form was written: byte spans in the query text, and the line and column they
//! print as. A form read from EDN data (not text) has no span.

use crate::edn::Edn;

/// A byte range `start..end` of the query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Span {
    /// The first byte of the form.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// A line and column (both from 1; the column counts characters), for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

impl Span {
    /// Where the span starts in `text` (the text it was read from).
    pub fn position(&self, text: &str) -> Position {
        let before = text.get(..self.start.min(text.len())).unwrap_or(text);
        Position {
            line: before.matches('\n').count() + 1,
            column: before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
        }
    }
}

/// A form as written and its span (`None` for a query given as data).
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// The form.
    pub edn: Edn,
    /// Where it was written.
    pub span: Option<Span>,
}

/// The spans of a form's subtree, walked in the reader's preorder (the form, then each
/// child's subtree in order; a map's key before its value).
pub(super) struct Spans<'a> {
    spans: Option<&'a [(usize, usize)]>,
}

impl<'a> Spans<'a> {
    /// For a form read from text with `read_one_spanned`.
    pub(super) fn of(spans: &'a [(usize, usize)]) -> Spans<'a> {
        Spans { spans: Some(spans) }
    }

    /// For a form given as data.
    pub(super) fn none() -> Spans<'a> {
        Spans { spans: None }
    }

    /// The span of the form this walker stands at.
    pub(super) fn span(&self) -> Option<Span> {
        self.spans
            .and_then(|s| s.first())
            .map(|&(start, end)| Span { start, end })
    }

    /// The walkers of `form`'s children (a map's keys and values alternate), each with its
    /// subtree's spans.
    pub(super) fn children(&self, form: &Edn) -> Vec<Spans<'a>> {
        let children: Vec<&Edn> = match form {
            Edn::List(v) | Edn::Vector(v) | Edn::Set(v) => v.iter().collect(),
            Edn::Map(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
            Edn::Tagged(_, v) => vec![&**v],
            _ => Vec::new(),
        };
        let Some(spans) = self.spans else {
            return children.iter().map(|_| Spans::none()).collect();
        };
        let mut at = 1;
        let mut out = Vec::with_capacity(children.len());
        for child in children {
            let n = nodes(child);
            // Spans that do not match the tree (never, for the reader's own output) are
            // dropped rather than misplaced.
            out.push(Spans {
                spans: spans.get(at..at + n),
            });
            at += n;
        }
        out
    }
}

/// How many forms a form's subtree holds (the length of its preorder span list).
fn nodes(form: &Edn) -> usize {
    1 + match form {
        Edn::List(v) | Edn::Vector(v) | Edn::Set(v) => v.iter().map(nodes).sum(),
        Edn::Map(pairs) => pairs.iter().map(|(k, v)| nodes(k) + nodes(v)).sum(),
        Edn::Tagged(_, v) => nodes(v),
        _ => 0,
    }
}
