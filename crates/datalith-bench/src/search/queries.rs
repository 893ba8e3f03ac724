//! The queries: made from the corpus with a seeded SplitMix64, so a run can be repeated
//! exactly, and written to `queries.tsv` for the JVM peers.
//!
//! Every term is ASCII letters (at least 3) and "stable": it occurs in the same documents the
//! same number of times under both tokenizations of [`super::analyze`], so the answers do not
//! depend on which of them an engine uses, and every engine's full count must equal the
//! reference's. Phrases and prefixes are checked the same way, as whole queries.
//!
//! Kinds: single terms in three document-frequency bands (`term-hi`: in at least 1% of the
//! documents; `term-mid`: 0.05% to 1%; `term-lo`: fewer), `and` and `or` of 2-4 terms of one
//! document, `phrase` (2-3 consecutive words of a document) and `prefix` (the first 3-4
//! letters of a word of a document).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use datalith_testdata::SplitMix64;

use super::analyze::Tokenization;
use super::corpus::Doc;
use super::reference::Reference;
use crate::common::BenchError;

/// A kind of query (a row of the results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    TermHi,
    TermMid,
    TermLo,
    And,
    Or,
    Phrase,
    Prefix,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::TermHi,
        Kind::TermMid,
        Kind::TermLo,
        Kind::And,
        Kind::Or,
        Kind::Phrase,
        Kind::Prefix,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::TermHi => "term-hi",
            Kind::TermMid => "term-mid",
            Kind::TermLo => "term-lo",
            Kind::And => "and",
            Kind::Or => "or",
            Kind::Phrase => "phrase",
            Kind::Prefix => "prefix",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// One query: its kind and its terms (for `prefix`, the one prefix; for `phrase`, the words
/// in order).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub id: usize,
    pub kind: Kind,
    pub terms: Vec<String>,
}

impl Query {
    /// Lucene's classic query syntax, which Datalith's `SearchIndex::search` also reads.
    pub fn lucene(&self) -> String {
        match self.kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => self.terms[0].clone(),
            Kind::And => self
                .terms
                .iter()
                .map(|t| format!("+{t}"))
                .collect::<Vec<_>>()
                .join(" "),
            Kind::Or => self.terms.join(" "),
            Kind::Phrase => format!("\"{}\"", self.terms.join(" ")),
            Kind::Prefix => format!("{}*", self.terms[0]),
        }
    }

    /// SQLite FTS5's query syntax (every term quoted: `and` and `or` stay words).
    pub fn fts5(&self) -> String {
        let quoted = |sep: &str| {
            self.terms
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self.kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => quoted(""),
            Kind::And => quoted(" AND "),
            Kind::Or => quoted(" OR "),
            Kind::Phrase => format!("\"{}\"", self.terms.join(" ")),
            Kind::Prefix => format!("\"{}\"*", self.terms[0]),
        }
    }

    /// Datalevin's search expression, as EDN (`bench/peers/datalevin/search.clj` reads it).
    pub fn datalevin(&self) -> String {
        let strings = || {
            self.terms
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self.kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => format!("\"{}\"", self.terms[0]),
            Kind::And => format!("[:and {}]", strings()),
            Kind::Or => format!("[:or {}]", strings()),
            Kind::Phrase => format!("{{:phrase \"{}\"}}", self.terms.join(" ")),
            Kind::Prefix => format!("{{:prefix \"{}\"}}", self.terms[0]),
        }
    }
}

/// The terms that both tokenizations put in the same documents the same number of times.
fn stable_terms(words: &Reference, alnum: &Reference) -> HashMap<String, usize> {
    let tf = |p: &[(u32, u32)]| {
        let mut v: Vec<(u32, u32)> = Vec::new();
        for &(d, _) in p {
            match v.last_mut() {
                Some((ld, n)) if *ld == d => *n += 1,
                _ => v.push((d, 1)),
            }
        }
        v
    };
    words
        .terms()
        .filter(|(t, _)| t.len() >= 3 && t.bytes().all(|b| b.is_ascii_lowercase()))
        .filter_map(|(t, p)| {
            let counts = tf(p);
            (counts == tf(alnum.postings(t))).then(|| (t.to_string(), counts.len()))
        })
        .collect()
}

/// Makes `per_kind` queries of each kind in `kinds` (fewer when the corpus has too few
/// candidates: the summary reports the real numbers).
pub fn generate(
    docs: &[Doc],
    words: &Reference,
    alnum: &Reference,
    kinds: &[Kind],
    per_kind: usize,
    seed: u64,
) -> Vec<Query> {
    let stable = stable_terms(words, alnum);
    let n = docs.len();
    let hi_min = (n / 100).max(3);
    let mid_min = (n / 2000).max(2);
    let mut rng = SplitMix64::new(seed);
    let mut out: Vec<Query> = Vec::new();
    for &kind in kinds {
        let mut seen: HashSet<Vec<String>> = HashSet::new();
        let mut push = |terms: Vec<String>, out: &mut Vec<Query>| {
            if seen.insert(terms.clone()) {
                out.push(Query {
                    id: out.len(),
                    kind,
                    terms,
                });
            }
        };
        let start = out.len();
        match kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => {
                let mut band: Vec<&String> = stable
                    .iter()
                    .filter(|(_, &df)| match kind {
                        Kind::TermHi => df >= hi_min,
                        Kind::TermMid => (mid_min..hi_min).contains(&df),
                        _ => df < mid_min,
                    })
                    .map(|(t, _)| t)
                    .collect();
                band.sort();
                // A partial Fisher-Yates shuffle: `per_kind` distinct terms of the band.
                for i in 0..per_kind.min(band.len()) {
                    let j = i + rng.below((band.len() - i) as u64) as usize;
                    band.swap(i, j);
                    push(vec![band[i].clone()], &mut out);
                }
            }
            _ => {
                let mut tries = 0;
                while out.len() - start < per_kind && tries < per_kind * 200 {
                    tries += 1;
                    let doc = &docs[rng.below(n as u64) as usize];
                    let toks = Tokenization::Words.terms(&doc.text);
                    if let Some(terms) = draw(kind, &toks, &stable, &mut rng) {
                        let q = Query {
                            id: 0,
                            kind,
                            terms: terms.clone(),
                        };
                        if words.matches(&q) == alnum.matches(&q) {
                            push(terms, &mut out);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Terms for one query of `kind` from one document's tokens, or `None` if it has none fit.
fn draw(
    kind: Kind,
    toks: &[String],
    stable: &HashMap<String, usize>,
    rng: &mut SplitMix64,
) -> Option<Vec<String>> {
    if toks.is_empty() {
        return None;
    }
    let is_stable = |t: &String| stable.contains_key(t);
    match kind {
        Kind::And | Kind::Or => {
            let mut distinct: Vec<&String> = toks.iter().filter(|t| is_stable(t)).collect();
            distinct.sort();
            distinct.dedup();
            let k = 2 + rng.below(3) as usize;
            if distinct.len() < k {
                return None;
            }
            let mut picked = Vec::new();
            for i in 0..k {
                let j = i + rng.below((distinct.len() - i) as u64) as usize;
                distinct.swap(i, j);
                picked.push(distinct[i].clone());
            }
            Some(picked)
        }
        Kind::Phrase => {
            let len = 2 + rng.below(2) as usize;
            if toks.len() < len {
                return None;
            }
            let at = rng.below((toks.len() - len + 1) as u64) as usize;
            let words = &toks[at..at + len];
            (words.iter().all(is_stable) && words.windows(2).all(|w| w[0] != w[1]))
                .then(|| words.to_vec())
        }
        Kind::Prefix => {
            let t = &toks[rng.below(toks.len() as u64) as usize];
            let len = 3 + rng.below(2) as usize;
            (is_stable(t) && t.len() > len).then(|| vec![t[..len].to_string()])
        }
        _ => None,
    }
}

/// Writes `queries.tsv`: `id TAB kind TAB lucene syntax TAB Datalevin EDN`.
pub fn write_tsv(path: &Path, queries: &[Query]) -> Result<(), BenchError> {
    let mut s = Vec::new();
    for q in queries {
        let _ = writeln!(
            s,
            "{}\t{}\t{}\t{}",
            q.id,
            q.kind.name(),
            q.lucene(),
            q.datalevin()
        );
    }
    std::fs::write(path, s).map_err(BenchError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(kind: Kind, terms: &[&str]) -> Query {
        Query {
            id: 0,
            kind,
            terms: terms.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn renderings() {
        let cases = [
            (q(Kind::TermHi, &["fox"]), "fox", "\"fox\"", "\"fox\""),
            (
                q(Kind::And, &["red", "fox"]),
                "+red +fox",
                "\"red\" AND \"fox\"",
                "[:and \"red\" \"fox\"]",
            ),
            (
                q(Kind::Or, &["red", "or"]),
                "red or",
                "\"red\" OR \"or\"",
                "[:or \"red\" \"or\"]",
            ),
            (
                q(Kind::Phrase, &["red", "fox"]),
                "\"red fox\"",
                "\"red fox\"",
                "{:phrase \"red fox\"}",
            ),
            (
                q(Kind::Prefix, &["abd"]),
                "abd*",
                "\"abd\"*",
                "{:prefix \"abd\"}",
            ),
        ];
        for (query, lucene, fts5, dl) in cases {
            assert_eq!(
                (
                    query.lucene().as_str(),
                    query.fts5().as_str(),
                    query.datalevin().as_str()
                ),
                (lucene, fts5, dl)
            );
        }
    }

    #[test]
    fn generation_is_reproducible_and_stable() {
        let docs: Vec<Doc> = (0..400)
            .map(|i| Doc {
                id: i + 1,
                text: format!(
                    "word{} alpha beta gamma delta o'clock {} epsilon {}",
                    i % 7,
                    ["red fox", "blue dog", "green cat"][i as usize % 3],
                    ["zeta", "theta", "iota", "kappa"][i as usize % 4]
                ),
            })
            .collect();
        let words = Reference::build(&docs, Tokenization::Words);
        let alnum = Reference::build(&docs, Tokenization::Alnum);
        let a = generate(&docs, &words, &alnum, &Kind::ALL, 3, 7);
        assert_eq!(a, generate(&docs, &words, &alnum, &Kind::ALL, 3, 7));
        assert!(
            a.iter()
                .all(|q| !q.terms.iter().any(|t| t.contains("clock"))),
            "{a:?}"
        );
        for q in &a {
            assert_eq!(words.matches(q), alnum.matches(q), "{q:?}");
        }
        for kind in [Kind::And, Kind::Or, Kind::Phrase, Kind::Prefix] {
            assert!(a.iter().any(|q| q.kind == kind), "{kind:?}");
        }
    }
}
