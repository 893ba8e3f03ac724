//! Where a query matches in a text: the byte ranges of the words its positive clauses match
//! (terms, prefixes, and phrases where the whole phrase occurs). Found by analyzing the text
//! again with the index's analyzer, so the index need not keep offsets.

use super::analyze::Analyzer;
use super::query::{Matcher, Occur, SearchQuery};

/// The matched byte ranges of `text`, in order, without overlaps.
pub fn match_offsets(q: &SearchQuery, analyzer: &Analyzer, text: &str) -> Vec<(usize, usize)> {
    let tokens = analyzer.tokens(text);
    let mut hit = vec![false; tokens.len()];
    for c in q.clauses.iter().filter(|c| c.occur != Occur::MustNot) {
        match &c.matcher {
            Matcher::Term(t) => {
                for (i, tok) in tokens.iter().enumerate() {
                    hit[i] |= tok.term == *t;
                }
            }
            Matcher::Prefix(p) => {
                for (i, tok) in tokens.iter().enumerate() {
                    hit[i] |= tok.term.starts_with(p.as_str());
                }
            }
            Matcher::Wildcard(w) => {
                for (i, tok) in tokens.iter().enumerate() {
                    hit[i] |= super::query::wildcard_matches(w, &tok.term);
                }
            }
            Matcher::Fuzzy {
                term,
                min_similarity,
            } => {
                for (i, tok) in tokens.iter().enumerate() {
                    hit[i] |= super::query::similarity(term, &tok.term) > *min_similarity;
                }
            }
            Matcher::Range {
                lo,
                hi,
                lo_included,
                hi_included,
            } => {
                for (i, tok) in tokens.iter().enumerate() {
                    let t = tok.term.as_str();
                    let above = if *lo_included {
                        t >= lo.as_str()
                    } else {
                        t > lo.as_str()
                    };
                    let below = if *hi_included {
                        t <= hi.as_str()
                    } else {
                        t < hi.as_str()
                    };
                    hit[i] |= above && below;
                }
            }
            Matcher::All => {}
            Matcher::Group(g) => {
                let inner = match_offsets(g, analyzer, text);
                for (i, tok) in tokens.iter().enumerate() {
                    hit[i] |= inner.iter().any(|r| r.0 == tok.start);
                }
            }
            Matcher::Phrase(terms, _) => {
                for start in 0..tokens.len() {
                    let base = tokens[start].position;
                    let mut found = Vec::with_capacity(terms.len());
                    for (term, off) in terms {
                        let want = base + off;
                        match tokens[start..]
                            .iter()
                            .position(|t| t.position == want && t.term == *term)
                        {
                            Some(j) => found.push(start + j),
                            None => break,
                        }
                    }
                    if found.len() == terms.len() {
                        for j in found {
                            hit[j] = true;
                        }
                    }
                }
            }
        }
    }
    tokens
        .iter()
        .zip(hit)
        .filter(|(_, h)| *h)
        .map(|(t, _)| (t.start, t.end))
        .collect()
}

/// `text` with each match wrapped in `open` and `close` (a snippet for display).
pub fn highlight(text: &str, ranges: &[(usize, usize)], open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len() + ranges.len() * (open.len() + close.len()));
    let mut at = 0;
    for &(s, e) in ranges {
        if s < at || e > text.len() {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(open);
        out.push_str(&text[s..e]);
        out.push_str(close);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::analyze::AnalyzerConfig;
    use crate::search::query::parse;

    #[test]
    fn matches_are_found_and_marked() {
        let a = Analyzer::new(AnalyzerConfig::default());
        let cases: &[(&str, &str, &str)] = &[
            ("fox", "The Fox and the fox", "The [Fox] and the [fox]"),
            (
                "\"red fox\" -dog",
                "a red fox, a red hen",
                "a [red] [fox], a red hen",
            ),
            ("hik*", "hiking and hikers", "[hiking] and [hikers]"),
            ("absent", "nothing here", "nothing here"),
        ];
        for (q, text, want) in cases {
            let q = parse(q, &a).unwrap();
            let r = match_offsets(&q, &a, text);
            assert_eq!(highlight(text, &r, "[", "]"), *want);
        }
    }
}
