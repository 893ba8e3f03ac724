//! Each peer's passes merged into its figures, with the checks: every full count against the
//! reference's, every top-10 list against the documents the query matches, and the top-10
//! agreement with Lucene's BM25.
//!
//! Agreement (overlap) of one query: of Lucene's top-10 (`min(10, count)` documents), the
//! share the peer's top-10 holds, where a document tied with Lucene's 10th score also counts
//! (ties are ordered arbitrarily, by internal document number in Lucene); queries with no
//! match are left out. Lucene's prefix queries score every match the same (a constant-score
//! rewrite), so for them any matching document agrees.

use std::collections::{BTreeMap, HashSet};

use super::engine::{Mode, PeerPass, QueryRun};
use super::measure::TOP_K;
use super::queries::{Kind, Query};
use crate::common::passes::Spread;

/// The figures of one query kind for one peer.
#[derive(Debug, Clone, Default)]
pub struct KindStats {
    pub queries: usize,
    /// Per pass, over every timed call of the kind: p50 and p99 in ms.
    pub top_p50: Option<Spread>,
    pub top_p99: Option<Spread>,
    pub count_p50: Option<Spread>,
    pub count_p99: Option<Spread>,
    /// Mean top-10 agreement with Lucene (first pass).
    pub overlap: Option<f64>,
    /// Queries whose count differs from the reference (any pass).
    pub wrong_counts: usize,
    /// Queries whose top-10 is not `min(10, count)` distinct matching documents (any pass).
    pub wrong_tops: usize,
}

/// One peer over every pass.
#[derive(Debug, Clone)]
pub struct PeerSummary {
    pub peer: String,
    /// Why it has no figures (skipped) or why a pass failed.
    pub skipped: Option<String>,
    pub failed: Option<String>,
    pub passes: usize,
    /// Documents per second, durable and not.
    pub index_rate: BTreeMap<&'static str, Spread>,
    /// Bytes of the durable index.
    pub bytes: Option<Spread>,
    pub kinds: BTreeMap<Kind, KindStats>,
    /// The mean agreement over every query with a match.
    pub overlap_all: Option<f64>,
    /// Documents an indexing run reported other than the corpus's.
    pub wrong_docs: Vec<String>,
    /// The largest files of the first durable index.
    pub files: Vec<(String, u64)>,
    /// The first disagreements, for the summary.
    pub examples: Vec<String>,
}

impl PeerSummary {
    pub fn wrong(&self) -> usize {
        self.kinds
            .values()
            .map(|k| k.wrong_counts + k.wrong_tops)
            .sum::<usize>()
            + self.wrong_docs.len()
    }
}

/// The nearest-rank percentile `p` (0..1] of `xs` (sorted here), in ms from ns.
fn pct_ms(xs: &mut [u64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_unstable();
    let rank = ((p * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    Some(xs[rank - 1] as f64 / 1e6)
}

/// What the checks and the agreement measure need of the reference.
pub struct Expected<'a> {
    pub queries: &'a [Query],
    /// The matching documents of each query, ascending.
    pub matches: &'a [Vec<u32>],
    pub docs: u64,
}

/// Merges one peer's passes. `lucene`: Lucene's first pass that ran, the agreement's anchor.
pub fn merge(
    peer: &str,
    passes: &[PeerPass],
    exp: &Expected<'_>,
    lucene: Option<&[QueryRun]>,
) -> PeerSummary {
    let mut s = PeerSummary {
        peer: peer.to_string(),
        skipped: None,
        failed: None,
        passes: 0,
        index_rate: BTreeMap::new(),
        bytes: None,
        kinds: BTreeMap::new(),
        overlap_all: None,
        wrong_docs: Vec::new(),
        files: Vec::new(),
        examples: Vec::new(),
    };
    let mut rates: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let mut bytes = Vec::new();
    let mut pcts: BTreeMap<(Kind, usize), Vec<f64>> = BTreeMap::new();
    let mut wrong_count: HashSet<usize> = HashSet::new();
    let mut wrong_top: HashSet<usize> = HashSet::new();
    let mut first: Option<&[QueryRun]> = None;
    for (pass, p) in passes.iter().enumerate() {
        let (index, queries) = match p {
            PeerPass::Ran { index, queries } => (index, queries),
            PeerPass::Skipped(why) => {
                s.skipped.get_or_insert_with(|| why.clone());
                continue;
            }
            PeerPass::Failed(why) => {
                s.failed
                    .get_or_insert_with(|| format!("pass {}: {why}", pass + 1));
                continue;
            }
        };
        s.passes += 1;
        first.get_or_insert(queries.as_slice());
        for r in index {
            if r.docs != exp.docs {
                s.wrong_docs.push(format!(
                    "pass {} {}: {} documents indexed, want {}",
                    pass + 1,
                    r.mode.name(),
                    r.docs,
                    exp.docs
                ));
            }
            if r.seconds > 0.0 {
                rates
                    .entry(r.mode.name())
                    .or_default()
                    .push(r.docs as f64 / r.seconds);
            }
            if r.mode == Mode::Durable {
                if s.files.is_empty() {
                    s.files = r.files.clone();
                }
                bytes.push(r.bytes as f64);
            }
        }
        let mut by_kind: BTreeMap<Kind, [Vec<u64>; 2]> = BTreeMap::new();
        for (q, run) in exp.queries.iter().zip(queries) {
            let calls = by_kind.entry(q.kind).or_default();
            calls[0].extend(&run.top_ns);
            calls[1].extend(&run.count_ns);
            let want = &exp.matches[q.id];
            if run.count != want.len() as u64 && wrong_count.insert(q.id) && s.examples.len() < 8 {
                s.examples.push(format!(
                    "query {} `{}`: count {}, reference {}",
                    q.id,
                    q.lucene(),
                    run.count,
                    want.len()
                ));
            }
            let distinct: HashSet<&u64> = run.top.iter().collect();
            let top_ok = run.top.len() == want.len().min(TOP_K)
                && distinct.len() == run.top.len()
                && run
                    .top
                    .iter()
                    .all(|id| u32::try_from(*id).is_ok_and(|d| want.binary_search(&d).is_ok()));
            if !top_ok && wrong_top.insert(q.id) && s.examples.len() < 8 {
                s.examples.push(format!(
                    "query {} `{}`: top-10 {:?} is not {} matching documents",
                    q.id,
                    q.lucene(),
                    run.top,
                    want.len().min(TOP_K)
                ));
            }
        }
        for (kind, [mut top, mut count]) in by_kind {
            for (slot, xs) in [(0, &mut top), (1, &mut count)] {
                for (j, p) in [0.5, 0.99].into_iter().enumerate() {
                    if let Some(v) = pct_ms(xs, p) {
                        pcts.entry((kind, slot * 2 + j)).or_default().push(v);
                    }
                }
            }
        }
    }
    s.index_rate = rates
        .into_iter()
        .filter_map(|(k, v)| Some((k, Spread::of(&v)?)))
        .collect();
    s.bytes = Spread::of(&bytes);
    let mut all_overlap = Vec::new();
    for q in exp.queries {
        let k = s.kinds.entry(q.kind).or_default();
        k.queries += 1;
        k.wrong_counts += usize::from(wrong_count.contains(&q.id));
        k.wrong_tops += usize::from(wrong_top.contains(&q.id));
    }
    for (&kind, k) in s.kinds.iter_mut() {
        let get = |i: usize| pcts.get(&(kind, i)).and_then(|v| Spread::of(v));
        (k.top_p50, k.top_p99, k.count_p50, k.count_p99) = (get(0), get(1), get(2), get(3));
        if let (Some(mine), Some(anchor)) = (first, lucene) {
            let v: Vec<f64> = exp
                .queries
                .iter()
                .filter(|q| q.kind == kind)
                .filter_map(|q| agreement(&mine[q.id].top, &anchor[q.id]))
                .collect();
            all_overlap.extend(&v);
            k.overlap = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        }
    }
    s.overlap_all = (!all_overlap.is_empty())
        .then(|| all_overlap.iter().sum::<f64>() / all_overlap.len() as f64);
    s
}

/// One query's agreement of `top` with Lucene's answer (`None`: Lucene found nothing).
pub fn agreement(top: &[u64], lucene: &QueryRun) -> Option<f64> {
    if lucene.top.is_empty() {
        return None;
    }
    let anchor: HashSet<u64> = lucene.top.iter().chain(&lucene.ties).copied().collect();
    let shared = top.iter().filter(|id| anchor.contains(id)).count();
    Some((shared as f64 / lucene.top.len() as f64).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::engine::IndexRun;

    fn run(count: u64, top: &[u64], ns: u64) -> QueryRun {
        QueryRun {
            count,
            top: top.to_vec(),
            ties: vec![],
            top_ns: vec![ns, ns],
            count_ns: vec![2 * ns],
        }
    }

    #[test]
    fn agreement_counts_ties() {
        let lucene = QueryRun {
            top: vec![1, 2, 3, 4],
            ties: vec![9],
            ..QueryRun::default()
        };
        assert_eq!(agreement(&[1, 2, 3, 4], &lucene), Some(1.0));
        assert_eq!(agreement(&[1, 2, 9, 7], &lucene), Some(0.75));
        assert_eq!(agreement(&[], &QueryRun::default()), None);
    }

    #[test]
    fn checks_counts_tops_and_documents() {
        let queries: Vec<Query> = (0..2)
            .map(|id| Query {
                id,
                kind: Kind::TermHi,
                terms: vec!["x".into()],
            })
            .collect();
        let matches = vec![vec![1, 2, 3], vec![]];
        let exp = Expected {
            queries: &queries,
            matches: &matches,
            docs: 5,
        };
        let pass = |q0: QueryRun, docs: u64| PeerPass::Ran {
            index: vec![IndexRun {
                mode: Mode::Durable,
                seconds: 1.0,
                docs,
                bytes: 10,
                files: vec![],
            }],
            queries: vec![q0, run(0, &[], 1_000_000)],
        };
        let good = merge("p", &[pass(run(3, &[2, 1, 3], 2_000_000), 5)], &exp, None);
        assert_eq!(good.wrong(), 0, "{:?}", good.examples);
        let k = &good.kinds[&Kind::TermHi];
        assert_eq!(k.top_p50.as_ref().unwrap().median, 1.0);
        assert_eq!(k.top_p99.as_ref().unwrap().median, 2.0);
        assert_eq!(good.index_rate["durable"].median, 5.0);
        let bad = merge(
            "p",
            &[
                pass(run(4, &[2, 7, 3], 1), 4),
                PeerPass::Failed("boom".into()),
            ],
            &exp,
            None,
        );
        assert_eq!(
            (
                bad.kinds[&Kind::TermHi].wrong_counts,
                bad.kinds[&Kind::TermHi].wrong_tops
            ),
            (1, 1)
        );
        assert_eq!(bad.wrong_docs.len(), 1);
        assert!(bad.failed.as_deref().unwrap().contains("boom"));
    }
}
