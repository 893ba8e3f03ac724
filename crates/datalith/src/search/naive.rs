//! A query evaluated over texts in memory, one document at a time, with no index: the
//! `fulltext` function's way through a database value in time (as of, since, history), whose
//! values the current-state index does not hold, and the plain model the engine is tested
//! against. Matching follows the same rules as `exec`; scores are BM25 over the texts given
//! (document frequencies counted among them).

use rustc_hash::FxHashMap as HashMap;

use super::analyze::Analyzer;
use super::block::norm;
use super::exec::Hit;
use super::query::{similarity, wildcard_matches, Matcher, Occur, SearchQuery};
use super::score::Bm25;
use super::tables::SpaceStats;

/// One text analyzed: each term's positions, and its length.
struct Doc {
    terms: HashMap<String, Vec<u32>>,
    len: u32,
}

/// The texts that match `q`, each with its score, in the order given (`id` is the text's
/// index).
pub fn search_texts(q: &SearchQuery, analyzer: &Analyzer, texts: &[&str]) -> Vec<Hit> {
    let docs: Vec<Doc> = texts
        .iter()
        .map(|t| {
            let mut d = Doc {
                terms: HashMap::default(),
                len: 0,
            };
            analyzer.each_term(t, &mut String::new(), |term, p| {
                d.len += 1;
                d.terms.entry(term.to_string()).or_default().push(p);
            });
            d
        })
        .collect();
    let stats = SpaceStats {
        docs: docs.len() as u64,
        total_len: docs.iter().map(|d| u64::from(d.len)).sum(),
        ..SpaceStats::default()
    };
    let ctx = Ctx {
        bm: Bm25::new(&stats),
        docs: &docs,
    };
    docs.iter()
        .enumerate()
        .filter_map(|(i, d)| {
            ctx.score(q, d).map(|score| Hit {
                id: i as u64,
                score,
            })
        })
        .collect()
}

struct Ctx<'a> {
    bm: Bm25,
    docs: &'a [Doc],
}

impl Ctx<'_> {
    fn df(&self, term: &str) -> u32 {
        self.docs
            .iter()
            .filter(|d| d.terms.contains_key(term))
            .count() as u32
    }

    /// The document's score if it matches.
    fn score(&self, q: &SearchQuery, d: &Doc) -> Option<f32> {
        if q.matches_nothing() {
            return None;
        }
        let any_must = q.clauses.iter().any(|c| c.occur == Occur::Must);
        let mut total = 0.0;
        let mut matched_should = false;
        for c in &q.clauses {
            let s = self.clause(&c.matcher, d).map(|s| s * c.boost);
            match (c.occur, s) {
                (Occur::MustNot, Some(_)) => return None,
                (Occur::MustNot, None) => {}
                (Occur::Must, None) => return None,
                (Occur::Must, Some(s)) => total += s,
                (Occur::Should, Some(s)) => {
                    matched_should = true;
                    total += s;
                }
                (Occur::Should, None) => {}
            }
        }
        (any_must || matched_should).then_some(total)
    }

    fn clause(&self, m: &Matcher, d: &Doc) -> Option<f32> {
        let n = norm::encode(d.len);
        let any = |f: &dyn Fn(&str) -> bool| d.terms.keys().any(|t| f(t)).then_some(1.0);
        match m {
            Matcher::Term(t) => d
                .terms
                .get(t)
                .map(|ps| self.bm.score(self.bm.idf(self.df(t)), ps.len() as u32, n)),
            Matcher::Phrase(terms, slop) => {
                let lists: Option<Vec<Vec<u32>>> =
                    terms.iter().map(|(t, _)| d.terms.get(t).cloned()).collect();
                let lists = lists?;
                let offsets: Vec<u32> = terms.iter().map(|(_, o)| *o).collect();
                let freq = if *slop > 0 {
                    u32::from(super::exec::sloppy_match(&lists, &offsets, *slop))
                } else {
                    lists[0]
                        .iter()
                        .filter(|&&p| {
                            p.checked_sub(offsets[0]).is_some_and(|base| {
                                lists[1..]
                                    .iter()
                                    .zip(&offsets[1..])
                                    .all(|(ps, o)| ps.contains(&(base + o)))
                            })
                        })
                        .count() as u32
                };
                let idf: f32 = terms.iter().map(|(t, _)| self.bm.idf(self.df(t))).sum();
                (freq > 0).then(|| self.bm.score(idf, freq, n))
            }
            Matcher::Prefix(p) => any(&|t| t.starts_with(p.as_str())),
            Matcher::Wildcard(w) => any(&|t| wildcard_matches(w, t)),
            Matcher::Fuzzy {
                term,
                min_similarity,
            } => any(&|t| similarity(term, t) > *min_similarity),
            Matcher::Range {
                lo,
                hi,
                lo_included,
                hi_included,
            } => any(&|t| {
                (if *lo_included {
                    t >= lo.as_str()
                } else {
                    t > lo.as_str()
                }) && (if *hi_included {
                    t <= hi.as_str()
                } else {
                    t < hi.as_str()
                })
            }),
            Matcher::All => Some(1.0),
            Matcher::Group(g) => self.score(g, d),
        }
    }
}
