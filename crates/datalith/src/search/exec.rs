//! Running a parsed query on one index: document at a time over cursors, one per clause.
//!
//! - **Top-k of a disjunction of terms** (the common search: `red fox hunting`) runs MaxScore
//!   with block-max bounds: terms sorted by their best possible score; those whose bounds
//!   together cannot beat the k-th best score so far are *non-essential* and only looked up
//!   for candidates the others found. Before a candidate is scored, the best scores of the
//!   essential terms' current blocks (each block header holds its largest frequency and
//!   shortest document) bound every document up to the nearest block end; when that bound
//!   cannot enter the top k, those blocks are skipped undecoded.
//! - **Everything else** (required terms, phrases, prefixes, exclusions): the required
//!   clauses leapfrog to common documents, then optional clauses add their scores, excluded
//!   ones remove the document. Counting runs the same walk without scores.
//!
//! Ties in score go to the smaller document, as in Lucene.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::error::SearchError;
use super::query::{Matcher, Occur, SearchQuery};
use super::read::{SpaceReader, TermCursor, END};
use super::score::Bm25;

/// A match: document and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The document.
    pub id: u64,
    /// Its BM25 score (larger is better).
    pub score: f32,
}

/// A prefix clause's documents, gathered (a prefix scores a constant 1, as Lucene's default
/// rewrite of a prefix query does, so its documents need no frequencies).
struct SetCursor {
    docs: Vec<u64>,
    /// Each document's score (a group's); empty: a constant 1.
    scores: Vec<f32>,
    at: usize,
}

impl SetCursor {
    fn doc(&self) -> u64 {
        self.docs.get(self.at).copied().unwrap_or(END)
    }
}

/// A phrase: its terms' cursors with their offsets.
struct PhraseCursor<'t> {
    terms: Vec<(TermCursor<'t>, u32)>,
    /// Moves allowed (0: the terms exactly in a row).
    slop: u32,
    idf: f32,
    /// The current document's phrase frequency (valid when `doc` is a match).
    freq: u32,
    norm: u8,
    doc: u64,
    scratch: Vec<Vec<u32>>,
}

enum Cursor<'t> {
    Term {
        c: TermCursor<'t>,
        idf: f32,
    },
    Phrase(PhraseCursor<'t>),
    Set(SetCursor),
    /// A term no document holds.
    Empty,
}

impl<'t> Cursor<'t> {
    fn doc(&self) -> u64 {
        match self {
            Cursor::Term { c, .. } => c.doc(),
            Cursor::Phrase(p) => p.doc,
            Cursor::Set(s) => s.doc(),
            Cursor::Empty => END,
        }
    }

    fn step(&mut self) -> Result<(), SearchError> {
        match self {
            Cursor::Term { c, .. } => c.step(),
            Cursor::Phrase(p) => {
                let d = p.doc;
                p.seek(d.saturating_add(1))
            }
            Cursor::Set(s) => {
                s.at += 1;
                Ok(())
            }
            Cursor::Empty => Ok(()),
        }
    }

    fn advance(&mut self, target: u64) -> Result<(), SearchError> {
        match self {
            Cursor::Term { c, .. } => c.advance(target),
            Cursor::Phrase(p) => {
                if p.doc < target {
                    p.seek(target)?;
                }
                Ok(())
            }
            Cursor::Set(s) => {
                s.at += s.docs[s.at.min(s.docs.len())..].partition_point(|&d| d < target);
                Ok(())
            }
            Cursor::Empty => Ok(()),
        }
    }

    fn score(&mut self, bm: &Bm25) -> Result<f32, SearchError> {
        Ok(match self {
            Cursor::Term { c, idf } => {
                let (tf, n) = c.tf_norm()?;
                bm.score(*idf, tf, n)
            }
            Cursor::Phrase(p) => bm.score(p.idf, p.freq, p.norm),
            Cursor::Set(s) => s.scores.get(s.at).copied().unwrap_or(1.0),
            Cursor::Empty => 0.0,
        })
    }

    /// How many documents it may walk (to lead a conjunction with the rarest).
    fn cost(&self) -> u64 {
        match self {
            Cursor::Term { c, .. } => c.h.n as u64,
            Cursor::Phrase(p) => p.terms.first().map_or(0, |t| t.0.h.n as u64),
            Cursor::Set(s) => s.docs.len() as u64,
            Cursor::Empty => 0,
        }
    }
}

impl<'t> PhraseCursor<'t> {
    /// Moves to the first document at or after `target` holding the phrase.
    fn seek(&mut self, mut target: u64) -> Result<(), SearchError> {
        loop {
            // Align every term on one document.
            let mut d = target;
            loop {
                let mut moved = false;
                for (c, _) in self.terms.iter_mut() {
                    c.advance(d)?;
                    if c.doc() > d {
                        d = c.doc();
                        moved = true;
                    }
                }
                if d == END || !moved {
                    break;
                }
            }
            if d == END {
                self.doc = END;
                return Ok(());
            }
            let freq = self.freq_here()?;
            if freq > 0 {
                self.doc = d;
                self.freq = freq;
                self.norm = self.terms[0].0.tf_norm()?.1;
                return Ok(());
            }
            target = d + 1;
        }
    }

    /// How many times the phrase occurs in the document every term is on (with a slop: 1
    /// when some placement is close enough, as the matching needs no more).
    fn freq_here(&mut self) -> Result<u32, SearchError> {
        self.scratch.resize(self.terms.len(), Vec::new());
        for (i, (c, _)) in self.terms.iter_mut().enumerate() {
            c.positions(&mut self.scratch[i])?;
        }
        let offsets: Vec<u32> = self.terms.iter().map(|(_, o)| *o).collect();
        if self.slop > 0 {
            return Ok(u32::from(sloppy_match(&self.scratch, &offsets, self.slop)));
        }
        let Some((first, rest)) = self.scratch.split_first() else {
            return Ok(0);
        };
        let mut freq = 0;
        'start: for &p in first {
            let Some(base) = p.checked_sub(offsets[0]) else {
                continue;
            };
            for (ps, &o) in rest.iter().zip(&offsets[1..]) {
                if ps.binary_search(&(base + o)).is_err() {
                    continue 'start;
                }
            }
            freq += 1;
        }
        Ok(freq)
    }
}

/// Whether one position of each term, each less its offset in the phrase, spread over at
/// most `slop` (Lucene's sloppy phrase: a reversed pair costs 2). The smallest spread over
/// one pick per list is found by advancing the list holding the smallest pick.
pub(crate) fn sloppy_match(positions: &[Vec<u32>], offsets: &[u32], slop: u32) -> bool {
    let lists: Vec<Vec<i64>> = positions
        .iter()
        .zip(offsets)
        .map(|(ps, &o)| ps.iter().map(|&p| i64::from(p) - i64::from(o)).collect())
        .collect();
    if lists.iter().any(Vec::is_empty) {
        return false;
    }
    let mut at = vec![0usize; lists.len()];
    loop {
        let picks = lists.iter().zip(&at).map(|(l, &i)| l[i]);
        let (lo, hi) = picks.fold((i64::MAX, i64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        if hi - lo <= i64::from(slop) {
            return true;
        }
        let (k, _) = lists
            .iter()
            .zip(&at)
            .enumerate()
            .min_by_key(|(_, (l, &i))| l[i])
            .expect("lists are not empty");
        at[k] += 1;
        if at[k] == lists[k].len() {
            return false;
        }
    }
}

/// The cursors of a query's clauses, by occurrence.
struct Plan<'t> {
    must: Vec<(usize, Cursor<'t>)>,
    should: Vec<(usize, Cursor<'t>)>,
    not: Vec<Cursor<'t>>,
    bm: Bm25,
    /// Each clause's part of the current document's score: summed in clause order, so a
    /// document's score does not depend on the path that found it.
    parts: Vec<f32>,
}

impl Plan<'_> {
    fn total(&mut self) -> f32 {
        let s = self.parts.iter().sum();
        self.parts.iter_mut().for_each(|p| *p = 0.0);
        s
    }
}

fn plan<'t>(r: &SpaceReader<'t>, q: &SearchQuery) -> Result<Plan<'t>, SearchError> {
    let bm = Bm25::new(&r.stats);
    let mut p = Plan {
        must: Vec::new(),
        should: Vec::new(),
        not: Vec::new(),
        bm,
        parts: vec![0.0; q.clauses.len()],
    };
    for (i, c) in q.clauses.iter().enumerate() {
        let cursor = match &c.matcher {
            Matcher::Term(t) => match r.term_id(t)? {
                None => Cursor::Empty,
                Some(id) => {
                    let s = r.term_stats(id)?;
                    if s.df == 0 {
                        Cursor::Empty
                    } else {
                        Cursor::Term {
                            c: r.cursor(id)?,
                            idf: p.bm.idf(s.df),
                        }
                    }
                }
            },
            Matcher::Phrase(terms, slop) => {
                let mut cs = Vec::with_capacity(terms.len());
                let mut idf = 0.0;
                let mut missing = false;
                for (t, off) in terms {
                    match r.term_id(t)? {
                        Some(id) => {
                            let s = r.term_stats(id)?;
                            missing |= s.df == 0;
                            idf += p.bm.idf(s.df);
                            cs.push((r.cursor(id)?, *off));
                        }
                        None => missing = true,
                    }
                }
                if missing {
                    Cursor::Empty
                } else {
                    let mut pc = PhraseCursor {
                        terms: cs,
                        slop: *slop,
                        idf,
                        freq: 0,
                        norm: 0,
                        doc: 0,
                        scratch: Vec::new(),
                    };
                    pc.seek(0)?;
                    Cursor::Phrase(pc)
                }
            }
            Matcher::Prefix(prefix) => set_of_terms(r, &r.prefix_terms(prefix)?)?,
            Matcher::Wildcard(pattern) => set_of_terms(r, &r.wildcard_terms(pattern)?)?,
            Matcher::Fuzzy {
                term,
                min_similarity,
            } => set_of_terms(r, &r.fuzzy_terms(term, *min_similarity)?)?,
            Matcher::Range {
                lo,
                hi,
                lo_included,
                hi_included,
            } => set_of_terms(r, &r.range_terms(lo, hi, *lo_included, *hi_included)?)?,
            Matcher::All => Cursor::Set(SetCursor {
                docs: r.all_docs()?,
                scores: Vec::new(),
                at: 0,
            }),
            Matcher::Group(g) => {
                let hits = all(r, g)?;
                Cursor::Set(SetCursor {
                    docs: hits.iter().map(|h| h.id).collect(),
                    scores: hits.iter().map(|h| h.score).collect(),
                    at: 0,
                })
            }
        };
        let cursor = match cursor {
            // A boost weighs a term's score: BM25 is linear in the idf.
            Cursor::Term { c: tc, idf } => Cursor::Term {
                c: tc,
                idf: idf * c.boost,
            },
            Cursor::Phrase(mut pc) => {
                pc.idf *= c.boost;
                Cursor::Phrase(pc)
            }
            Cursor::Set(mut sc) if c.boost != 1.0 => {
                if sc.scores.is_empty() {
                    sc.scores = vec![1.0; sc.docs.len()];
                }
                sc.scores.iter_mut().for_each(|x| *x *= c.boost);
                Cursor::Set(sc)
            }
            other => other,
        };
        match c.occur {
            Occur::Must => p.must.push((i, cursor)),
            Occur::Should => p.should.push((i, cursor)),
            Occur::MustNot => p.not.push(cursor),
        }
    }
    p.must.sort_by_key(|(_, c)| c.cost());
    Ok(p)
}

/// The documents of some terms, as one constant-scoring clause (Lucene's rewrite of a
/// multi-term query).
fn set_of_terms<'t>(r: &SpaceReader<'t>, ids: &[u32]) -> Result<Cursor<'t>, SearchError> {
    let mut docs = Vec::new();
    for &id in ids {
        let mut c = r.cursor(id)?;
        while c.doc() != END {
            docs.push(c.doc());
            c.step()?;
        }
    }
    docs.sort_unstable();
    docs.dedup();
    Ok(Cursor::Set(SetCursor {
        docs,
        scores: Vec::new(),
        at: 0,
    }))
}

/// The best `k` matches, best first.
pub fn top_k(r: &SpaceReader<'_>, q: &SearchQuery, k: usize) -> Result<Vec<Hit>, SearchError> {
    if k == 0 || q.matches_nothing() {
        return Ok(Vec::new());
    }
    let mut p = plan(r, q)?;
    let mut top = TopK::new(k);
    let pure_terms = p.must.is_empty()
        && p.should
            .iter()
            .all(|(_, c)| matches!(c, Cursor::Term { .. } | Cursor::Empty));
    if pure_terms {
        max_score(&mut p, &mut top)?;
    } else {
        walk(&mut p, true, &mut |d, s| top.offer(d, s))?;
    }
    Ok(top.into_sorted())
}

/// Every match with its score, in document order.
pub fn all(r: &SpaceReader<'_>, q: &SearchQuery) -> Result<Vec<Hit>, SearchError> {
    if q.matches_nothing() {
        return Ok(Vec::new());
    }
    let mut p = plan(r, q)?;
    let mut out = Vec::new();
    walk(&mut p, true, &mut |id, score| {
        out.push(Hit { id, score });
        Ok(())
    })?;
    Ok(out)
}

/// How many documents match.
pub fn count(r: &SpaceReader<'_>, q: &SearchQuery) -> Result<u64, SearchError> {
    if q.matches_nothing() {
        return Ok(0);
    }
    // One term alone: its document frequency, kept exact by every write.
    if let [c] = &q.clauses[..] {
        if let Matcher::Term(t) = &c.matcher {
            return Ok(match r.term_id(t)? {
                Some(id) => u64::from(r.term_stats(id)?.df),
                None => 0,
            });
        }
    }
    let mut p = plan(r, q)?;
    let mut n = 0u64;
    walk(&mut p, false, &mut |_, _| {
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

/// Whether an excluded clause holds `d`.
fn excluded(not: &mut [Cursor<'_>], d: u64) -> Result<bool, SearchError> {
    for c in not.iter_mut() {
        c.advance(d)?;
        if c.doc() == d {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Every match in document order, scored when `scored`.
fn walk(
    p: &mut Plan<'_>,
    scored: bool,
    emit: &mut dyn FnMut(u64, f32) -> Result<(), SearchError>,
) -> Result<(), SearchError> {
    loop {
        let d = if p.must.is_empty() {
            p.should.iter().map(|(_, c)| c.doc()).min().unwrap_or(END)
        } else {
            align(&mut p.must)?
        };
        if d == END {
            return Ok(());
        }
        if !excluded(&mut p.not, d)? {
            if scored {
                for (i, c) in p.must.iter_mut() {
                    p.parts[*i] = c.score(&p.bm)?;
                }
                for (i, c) in p.should.iter_mut() {
                    c.advance(d)?;
                    if c.doc() == d {
                        p.parts[*i] = c.score(&p.bm)?;
                    }
                }
            }
            let score = p.total();
            emit(d, score)?;
        }
        if p.must.is_empty() {
            for (_, c) in p.should.iter_mut().filter(|(_, c)| c.doc() == d) {
                c.step()?;
            }
        } else {
            p.must[0].1.step()?;
        }
    }
}

/// Moves the required cursors to their next common document.
fn align(must: &mut [(usize, Cursor<'_>)]) -> Result<u64, SearchError> {
    let mut d = must[0].1.doc();
    loop {
        if d == END {
            return Ok(END);
        }
        let mut agreed = true;
        for (_, c) in must.iter_mut() {
            c.advance(d)?;
            if c.doc() != d {
                d = c.doc();
                agreed = false;
                break;
            }
        }
        if agreed {
            return Ok(d);
        }
    }
}

/// Block-max MaxScore over optional term cursors (see the module doc).
fn max_score(p: &mut Plan<'_>, top: &mut TopK) -> Result<(), SearchError> {
    let bm = p.bm.clone();
    let mut terms: Vec<(TermCursor<'_>, f32, f32)> = Vec::new();
    let mut clause_of: Vec<usize> = Vec::new();
    let mut shoulds = std::mem::take(&mut p.should);
    shoulds.sort_by(|a, b| {
        let ceiling = |c: &Cursor<'_>| match c {
            Cursor::Term { idf, .. } => bm.ceiling(*idf),
            _ => 0.0,
        };
        ceiling(&a.1)
            .partial_cmp(&ceiling(&b.1))
            .unwrap_or(Ordering::Equal)
    });
    for (i, c) in shoulds {
        if let Cursor::Term { c, idf } = c {
            let ceiling = bm.ceiling(idf);
            terms.push((c, idf, ceiling));
            clause_of.push(i);
        }
    }
    // bound[i]: the best the terms before i can add together.
    let mut bound = vec![0f32; terms.len() + 1];
    for i in 0..terms.len() {
        bound[i + 1] = bound[i] + terms[i].2;
    }
    // Bounds are sums of floats: a small margin keeps rounding from pruning a real winner.
    let below = |b: f32, theta: f32| b * (1.0 + 1e-5) + 1e-6 < theta;
    let mut essential = 0;
    loop {
        let theta = top.threshold();
        while essential < terms.len() && below(bound[essential + 1], theta) {
            essential += 1;
        }
        if essential == terms.len() {
            return Ok(());
        }
        let d = terms[essential..]
            .iter()
            .map(|t| t.0.doc())
            .min()
            .unwrap_or(END);
        if d == END {
            return Ok(());
        }
        // Block bound: every document up to the nearest block end of the essential terms.
        if theta > f32::MIN {
            let mut block_bound = bound[essential];
            let mut upto = END;
            for (c, idf, _) in &terms[essential..] {
                if c.doc() == END {
                    continue;
                }
                block_bound += bm.score(*idf, c.h.max_tf, c.h.min_norm);
                upto = upto.min(c.h.last);
            }
            if below(block_bound, theta) {
                for (c, _, _) in terms[essential..].iter_mut() {
                    if c.h.last <= upto {
                        c.skip_block()?;
                    } else {
                        c.advance(upto.saturating_add(1))?;
                    }
                }
                continue;
            }
        }
        let mut score = 0.0;
        for (j, (c, idf, _)) in terms.iter_mut().enumerate().skip(essential) {
            if c.doc() == d {
                let (tf, n) = c.tf_norm()?;
                let s = bm.score(*idf, tf, n);
                score += s;
                p.parts[clause_of[j]] = s;
            }
        }
        let mut best = score + bound[essential];
        let mut pruned = false;
        for j in (0..essential).rev() {
            if below(best, theta) {
                pruned = true;
                break;
            }
            let (c, idf, ceiling) = &mut terms[j];
            c.advance(d)?;
            best -= *ceiling;
            if c.doc() == d {
                let (tf, n) = c.tf_norm()?;
                let s = bm.score(*idf, tf, n);
                score += s;
                best += s;
                p.parts[clause_of[j]] = s;
            }
        }
        let exact = p.total();
        if !pruned && !below(score, theta) && !excluded(&mut p.not, d)? {
            top.offer(d, exact)?;
        }
        for (c, _, _) in terms[essential..].iter_mut() {
            if c.doc() == d {
                c.step()?;
            }
        }
    }
}

/// The best hits so far: a min-heap of `k`.
struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

#[derive(PartialEq)]
struct Entry(f32, u64);

impl Eq for Entry {}

impl Ord for Entry {
    /// Worse first, so the heap's top is the hit to drop: lower score, then larger document.
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.partial_cmp(&self.0)
            .unwrap_or(Ordering::Equal)
            .then(self.1.cmp(&o.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl TopK {
    fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(1024) + 1),
        }
    }

    /// The score a new hit must beat (documents come in ascending order, so a tie loses).
    fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            f32::MIN
        } else {
            self.heap.peek().map_or(f32::MIN, |e| e.0)
        }
    }

    fn offer(&mut self, d: u64, s: f32) -> Result<(), SearchError> {
        if self.heap.len() < self.k {
            self.heap.push(Entry(s, d));
        } else if s > self.threshold() {
            self.heap.pop();
            self.heap.push(Entry(s, d));
        }
        Ok(())
    }

    fn into_sorted(self) -> Vec<Hit> {
        let mut v: Vec<Hit> = self
            .heap
            .into_iter()
            .map(|Entry(score, id)| Hit { id, score })
            .collect();
        v.sort_by(|a, b| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(Ordering::Equal)
                .then(a.id.cmp(&b.id))
        });
        v
    }
}
