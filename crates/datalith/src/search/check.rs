//! An index checked against itself: every posting's document exists and lists the term,
//! every document's terms have its posting, blocks are ordered and do not overlap, norms
//! match lengths, each term's df counts its postings, and the index's statistics add up.
//! (`api::check` also checks a full-text attribute's index against its datoms.)

use std::ops::Bound;

use rustc_hash::FxHashMap as HashMap;

use super::block::{self, norm};
use super::error::SearchError;
use super::read::SpaceReader;
use super::tables::{self, DocEntry, TermStats};
use crate::kv::Direction;

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Documents.
    pub docs: u64,
    /// Terms some document holds.
    pub terms: u64,
    /// Postings.
    pub postings: u64,
    /// Bytes of postings blocks.
    pub postings_bytes: u64,
    /// Every disagreement found (empty: the index is sound).
    pub problems: Vec<String>,
}

/// Checks index `r` (named `name` in the problems).
pub fn check_space(r: &SpaceReader<'_>, name: &str) -> Result<Report, SearchError> {
    let mut rep = Report::default();
    let problem = |rep: &mut Report, p: String| {
        if rep.problems.len() < 100 {
            rep.problems.push(format!("{name}: {p}"));
        }
    };
    // Documents.
    let mut docs: HashMap<u64, (DocEntry, u32)> = HashMap::default();
    let space = r.space.to_be_bytes();
    let mut total_len = 0u64;
    for e in r.view.prefix(&r.t.docs, &space, Direction::Forward)? {
        let (k, v) = e?;
        let Some(doc) = k
            .get(4..12)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes)
        else {
            problem(&mut rep, "a document key is not 12 bytes".into());
            continue;
        };
        match DocEntry::from_bytes(v) {
            Some(d) => {
                total_len += u64::from(d.len);
                docs.insert(doc, (d, 0));
            }
            None => problem(&mut rep, format!("document {doc} does not decode")),
        }
    }
    rep.docs = docs.len() as u64;
    if r.stats.docs != rep.docs || r.stats.total_len != total_len {
        let p = format!(
            "statistics say {} documents of {} words, the documents are {} of {}",
            r.stats.docs, r.stats.total_len, rep.docs, total_len
        );
        problem(&mut rep, p);
    }
    // Postings, term by term.
    let mut df: HashMap<u32, u32> = HashMap::default();
    let mut prev: Option<(u32, u64)> = None;
    for e in r.view.prefix(&r.t.postings, &space, Direction::Forward)? {
        let (k, v) = e?;
        rep.postings_bytes += v.len() as u64;
        let (Some(term), Some(first)) = (
            k.get(4..8)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes),
            super::write::block_first(k),
        ) else {
            problem(&mut rep, "a postings key is not 16 bytes".into());
            continue;
        };
        let Some(ps) = block::postings(first, v) else {
            problem(
                &mut rep,
                format!("term {term}'s block at {first} does not decode"),
            );
            continue;
        };
        if let Some((pt, last)) = prev {
            if pt == term && first <= last {
                problem(&mut rep, format!("term {term}'s blocks overlap at {first}"));
            }
        }
        prev = Some((term, ps.last().map_or(first, |p| p.doc)));
        for p in &ps {
            rep.postings += 1;
            *df.entry(term).or_default() += 1;
            match docs.get_mut(&p.doc) {
                None => problem(
                    &mut rep,
                    format!("term {term} lists document {}, which is not indexed", p.doc),
                ),
                Some((d, seen)) => {
                    if d.terms.binary_search(&term).is_err() {
                        problem(
                            &mut rep,
                            format!(
                                "term {term} lists document {}, which does not hold it",
                                p.doc
                            ),
                        );
                    } else {
                        *seen += 1;
                    }
                    if p.norm != norm::encode(d.len) {
                        problem(
                            &mut rep,
                            format!(
                                "document {}'s norm in term {term} is not its length's",
                                p.doc
                            ),
                        );
                    }
                }
            }
        }
    }
    for (doc, (d, seen)) in &docs {
        if *seen as usize != d.terms.len() {
            problem(
                &mut rep,
                format!(
                    "document {doc} holds {} terms, {} list it",
                    d.terms.len(),
                    seen
                ),
            );
        }
    }
    // Term statistics.
    let lo = tables::term_stats_key(r.space, 0);
    let hi = tables::stats_key(r.space.wrapping_add(1));
    for e in r.view.range(
        &r.t.term_stats,
        Bound::Included(&lo[..]),
        Bound::Excluded(&hi[..4]),
        Direction::Forward,
    )? {
        let (k, v) = e?;
        let term = k
            .get(4..8)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes)
            .unwrap_or(0);
        let s = TermStats::from_bytes(v).unwrap_or(TermStats {
            df: u32::MAX,
            ..TermStats::default()
        });
        let have = df.remove(&term).unwrap_or(0);
        if s.df != have {
            problem(
                &mut rep,
                format!("term {term} says {} documents, {have} are listed", s.df),
            );
        }
        if have > 0 {
            rep.terms += 1;
        }
    }
    for (term, n) in df {
        problem(
            &mut rep,
            format!("term {term} has {n} postings and no statistics"),
        );
    }
    Ok(rep)
}
