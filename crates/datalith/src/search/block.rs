//! A block of one term's postings: up to `SEARCH_BLOCK_DOCS` documents in order, each with its
//! frequency, its norm and its positions. The block's key holds its first document; the
//! header holds what a top-k search needs to skip the block without decoding it: its last
//! document and the bounds of its best score (largest frequency, smallest norm).
//!
//! ```text
//! varint n ++ varint (last - first) ++ varint max_tf ++ u8 min_norm
//! ++ (n - 1) varint doc deltas ++ n varint tfs ++ n norm bytes
//! ++ positions: per document, tf varint deltas (first from 0)
//! ```

use super::varint::{self, Reader};

/// One document's occurrence of a term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posting {
    /// The document.
    pub doc: u64,
    /// Its norm (its length, `norm::encode`d).
    pub norm: u8,
    /// The term's positions in it, ascending (their count is the term's frequency).
    pub positions: Vec<u32>,
}

/// Encodes postings given as `(document, norm, positions)` (non-empty, ascending by
/// document) as one block's value.
pub fn encode_items(items: &[(u64, u8, &[u32])], out: &mut Vec<u8>) {
    debug_assert!(!items.is_empty(), "a block holds a posting");
    debug_assert!(
        items.windows(2).all(|w| w[0].0 < w[1].0),
        "a block's documents ascend"
    );
    let first = items[0].0;
    let last = items[items.len() - 1].0;
    let max_tf = items.iter().map(|p| p.2.len()).max().unwrap_or(0);
    let min_norm = items.iter().map(|p| p.1).min().unwrap_or(0);
    out.clear();
    varint::put(out, items.len() as u64);
    varint::put(out, last - first);
    varint::put(out, max_tf as u64);
    out.push(min_norm);
    for w in items.windows(2) {
        varint::put(out, w[1].0 - w[0].0);
    }
    for p in items {
        varint::put(out, p.2.len() as u64);
    }
    out.extend(items.iter().map(|p| p.1));
    for p in items {
        let mut prev = 0u32;
        for &pos in p.2 {
            varint::put(out, u64::from(pos - prev));
            prev = pos;
        }
    }
}

/// Encodes postings (non-empty, ascending by document) as one block's value.
pub fn encode(postings: &[Posting], out: &mut Vec<u8>) {
    let items: Vec<(u64, u8, &[u32])> = postings
        .iter()
        .map(|p| (p.doc, p.norm, p.positions.as_slice()))
        .collect();
    encode_items(&items, out);
}

/// A block's header, read without its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Documents in it.
    pub n: usize,
    /// Its first document (from its key).
    pub first: u64,
    /// Its last document.
    pub last: u64,
    /// The largest frequency in it.
    pub max_tf: u32,
    /// The smallest norm in it.
    pub min_norm: u8,
}

/// A block's documents, frequencies and norms, decoded; positions left encoded.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    /// Documents, ascending.
    pub docs: Vec<u64>,
    /// Frequencies.
    pub tfs: Vec<u32>,
    /// Norms.
    pub norms: Vec<u8>,
}

/// Reads the header of the block stored under first document `first`; `None` if the bytes
/// are not a block.
pub fn header(first: u64, b: &[u8]) -> Option<(Header, usize)> {
    let mut r = Reader::new(b);
    let n = r.varint()? as usize;
    let span = r.varint()?;
    let max_tf = u32::try_from(r.varint()?).ok()?;
    let min_norm = r.byte()?;
    if n == 0 || n > crate::limits::SEARCH_BLOCK_DOCS * 2 {
        return None;
    }
    let at = b.len() - r.rest().len();
    Some((
        Header {
            n,
            first,
            last: first.checked_add(span)?,
            max_tf,
            min_norm,
        },
        at,
    ))
}

/// Decodes the body after the header (`body` starts where `header` stopped) into `out`;
/// returns the positions' bytes. `None` when the bytes do not decode or disagree with the
/// header.
pub fn decode<'b>(h: &Header, body: &'b [u8], out: &mut Decoded) -> Option<&'b [u8]> {
    out.docs.clear();
    out.tfs.clear();
    out.norms.clear();
    let mut r = Reader::new(body);
    let mut doc = h.first;
    out.docs.push(doc);
    for _ in 1..h.n {
        let d = r.varint()?;
        if d == 0 {
            return None;
        }
        doc = doc.checked_add(d)?;
        out.docs.push(doc);
    }
    if doc != h.last {
        return None;
    }
    for _ in 0..h.n {
        let tf = u32::try_from(r.varint()?).ok()?;
        if tf == 0 || tf > h.max_tf {
            return None;
        }
        out.tfs.push(tf);
    }
    let norms = r.bytes(h.n)?;
    out.norms.extend_from_slice(norms);
    Some(r.rest())
}

/// The positions of each document of a decoded block, read from its positions' bytes.
pub fn positions(d: &Decoded, bytes: &[u8]) -> Option<Vec<Vec<u32>>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::with_capacity(d.tfs.len());
    for &tf in &d.tfs {
        let mut ps = Vec::with_capacity(tf as usize);
        let mut pos = 0u32;
        for _ in 0..tf {
            pos = pos.checked_add(u32::try_from(r.varint()?).ok()?)?;
            ps.push(pos);
        }
        out.push(ps);
    }
    r.rest().is_empty().then_some(out)
}

/// The positions of document `i` alone (skipping those before it).
pub fn positions_of(d: &Decoded, bytes: &[u8], i: usize, out: &mut Vec<u32>) -> Option<()> {
    let mut r = Reader::new(bytes);
    for &tf in &d.tfs[..i] {
        for _ in 0..tf {
            r.varint()?;
        }
    }
    out.clear();
    let mut pos = 0u32;
    for _ in 0..d.tfs[i] {
        pos = pos.checked_add(u32::try_from(r.varint()?).ok()?)?;
        out.push(pos);
    }
    Some(())
}

/// Postings of a whole block.
pub fn postings(first: u64, b: &[u8]) -> Option<Vec<Posting>> {
    let (h, at) = header(first, b)?;
    let mut d = Decoded::default();
    let pos = decode(&h, &b[at..], &mut d)?;
    let positions = positions(&d, pos)?;
    Some(
        d.docs
            .iter()
            .zip(d.norms.iter())
            .zip(positions)
            .map(|((&doc, &norm), positions)| Posting {
                doc,
                norm,
                positions,
            })
            .collect(),
    )
}

/// Document lengths as one byte: exact up to 40 words, then in steps of 6%, like the
/// one-byte norms of Lucene and tantivy (a score needs the length only roughly, and a byte a
/// posting keeps the blocks small).
pub mod norm {
    const EXACT: u32 = 40;
    const STEP: f64 = 1.06;

    /// The byte of a length.
    pub fn encode(len: u32) -> u8 {
        if len <= EXACT {
            return len as u8;
        }
        let code = EXACT as f64 + ((len as f64) / EXACT as f64).ln() / STEP.ln();
        code.floor().min(255.0) as u8
    }

    /// The length a byte stands for (the smallest length with that byte).
    pub fn decode(code: u8) -> f32 {
        if u32::from(code) <= EXACT {
            return f32::from(code);
        }
        (EXACT as f64 * STEP.powi(i32::from(code) - EXACT as i32)) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip() {
        let ps = vec![
            Posting {
                doc: 5,
                norm: 3,
                positions: vec![0, 7],
            },
            Posting {
                doc: 9,
                norm: 200,
                positions: vec![4],
            },
            Posting {
                doc: 1 << 40,
                norm: 1,
                positions: vec![1, 2, 3],
            },
        ];
        let mut b = Vec::new();
        encode(&ps, &mut b);
        assert_eq!(postings(5, &b), Some(ps.clone()));
        let (h, _) = header(5, &b).unwrap();
        assert_eq!((h.n, h.last, h.max_tf, h.min_norm), (3, 1 << 40, 3, 1));
        // Damaged bytes never decode to something else silently.
        for cut in 0..b.len() {
            assert_ne!(postings(5, &b[..cut]), Some(ps.clone()));
        }
    }

    #[test]
    fn norms_are_monotone_and_close() {
        let mut prev = 0;
        for len in 0..100_000u32 {
            let c = norm::encode(len);
            assert!(c >= prev);
            prev = c;
            let back = norm::decode(c);
            assert!(
                back <= len as f32 + 0.01 && back >= len as f32 / 1.07,
                "{len}"
            );
        }
    }
}
