//! The bench's own answer to every query: a positional inverted index of the corpus under one
//! [`Tokenization`], kept in memory and evaluated naively (sorted lists merged). Every
//! engine's full count and every top-10 hit is checked against it.

use std::collections::BTreeMap;

use super::analyze::Tokenization;
use super::corpus::Doc;
use super::queries::{Kind, Query};

/// One occurrence: document id and word position.
type Posting = (u32, u32);

/// A positional index of a corpus.
pub struct Reference {
    /// Term to its occurrences, by document then position.
    postings: BTreeMap<String, Vec<Posting>>,
}

impl Reference {
    /// Indexes `docs` (ids below 2^32) under `tok`.
    pub fn build(docs: &[Doc], tok: Tokenization) -> Reference {
        let mut postings: BTreeMap<String, Vec<Posting>> = BTreeMap::new();
        for d in docs {
            let mut pos = 0u32;
            tok.each(&d.text, |t| {
                postings.entry(t).or_default().push((d.id as u32, pos));
                pos += 1;
            });
        }
        Reference { postings }
    }

    /// Every term with its occurrences.
    pub fn terms(&self) -> impl Iterator<Item = (&str, &[Posting])> {
        self.postings
            .iter()
            .map(|(t, p)| (t.as_str(), p.as_slice()))
    }

    /// The occurrences of `term` (none: empty).
    pub fn postings(&self, term: &str) -> &[Posting] {
        self.postings.get(term).map_or(&[], Vec::as_slice)
    }

    /// The documents holding `term`, ascending.
    pub fn docs_of(&self, term: &str) -> Vec<u32> {
        let mut v: Vec<u32> = self.postings(term).iter().map(|p| p.0).collect();
        v.dedup();
        v
    }

    /// The documents holding a term that starts with `prefix`, ascending.
    pub fn prefix_docs(&self, prefix: &str) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .postings
            .range(prefix.to_string()..)
            .take_while(|(t, _)| t.starts_with(prefix))
            .flat_map(|(_, p)| p.iter().map(|x| x.0))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The documents holding `terms` at consecutive positions, ascending.
    pub fn phrase_docs(&self, terms: &[String]) -> Vec<u32> {
        let Some(first) = terms.first() else {
            return Vec::new();
        };
        let lists: Vec<&[Posting]> = terms.iter().map(|t| self.postings(t)).collect();
        let mut candidates = self.docs_of(first);
        for t in &terms[1..] {
            candidates = intersect(&candidates, &self.docs_of(t));
        }
        candidates
            .into_iter()
            .filter(|&doc| {
                let at = |i: usize| positions(lists[i], doc);
                at(0).iter().any(|&p| {
                    (1..terms.len()).all(|i| at(i).binary_search(&(p + i as u32)).is_ok())
                })
            })
            .collect()
    }

    /// Every document `q` matches, ascending.
    pub fn matches(&self, q: &Query) -> Vec<u32> {
        match q.kind {
            Kind::TermHi | Kind::TermMid | Kind::TermLo => self.docs_of(&q.terms[0]),
            Kind::And => q
                .terms
                .iter()
                .map(|t| self.docs_of(t))
                .reduce(|a, b| intersect(&a, &b))
                .unwrap_or_default(),
            Kind::Or => {
                let mut v: Vec<u32> = q.terms.iter().flat_map(|t| self.docs_of(t)).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            Kind::Phrase => self.phrase_docs(&q.terms),
            Kind::Prefix => self.prefix_docs(&q.terms[0]),
        }
    }
}

/// The positions of `doc` in one term's occurrences.
fn positions(list: &[Posting], doc: u32) -> Vec<u32> {
    let lo = list.partition_point(|p| p.0 < doc);
    list[lo..]
        .iter()
        .take_while(|p| p.0 == doc)
        .map(|p| p.1)
        .collect()
}

/// Two ascending lists' common elements.
fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
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
    fn answers_each_kind() {
        let docs: Vec<Doc> = ["the red fox", "a fox, red", "red foxes run", "the dog"]
            .iter()
            .enumerate()
            .map(|(i, t)| Doc {
                id: i as u64 + 1,
                text: t.to_string(),
            })
            .collect();
        let r = Reference::build(&docs, Tokenization::Words);
        let cases: [(Query, &[u32]); 6] = [
            (q(Kind::TermMid, &["fox"]), &[1, 2]),
            (q(Kind::And, &["red", "fox"]), &[1, 2]),
            (q(Kind::Or, &["dog", "run"]), &[3, 4]),
            (q(Kind::Phrase, &["red", "fox"]), &[1]),
            (q(Kind::Prefix, &["fo"]), &[1, 2, 3]),
            (q(Kind::Phrase, &["fox", "red"]), &[2]),
        ];
        for (query, want) in cases {
            assert_eq!(r.matches(&query), want, "{query:?}");
        }
    }
}
