//! BM25 (Robertson and Zaragoza's, with Lucene's idf and its k1 = 1.2, b = 0.75), per query:
//! each norm byte's length part is computed once.

use super::block::norm;
use super::tables::SpaceStats;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The scorer of one query on one index.
#[derive(Debug, Clone)]
pub struct Bm25 {
    docs: f32,
    /// `k1 * (1 - b + b * len / avgdl)` per norm byte.
    len_part: [f32; 256],
}

impl Bm25 {
    /// The scorer for an index with these statistics.
    pub fn new(stats: &SpaceStats) -> Bm25 {
        let avg = if stats.docs == 0 {
            1.0
        } else {
            (stats.total_len as f32 / stats.docs as f32).max(1e-3)
        };
        let mut len_part = [0f32; 256];
        for (c, p) in len_part.iter_mut().enumerate() {
            *p = K1 * (1.0 - B + B * norm::decode(c as u8) / avg);
        }
        Bm25 {
            docs: stats.docs as f32,
            len_part,
        }
    }

    /// The idf of a term held by `df` documents.
    pub fn idf(&self, df: u32) -> f32 {
        let df = df as f32;
        (1.0 + (self.docs - df + 0.5) / (df + 0.5)).ln().max(0.0)
    }

    /// The score of a term of weight `idf` occurring `tf` times in a document of norm `n`.
    #[inline]
    pub fn score(&self, idf: f32, tf: u32, n: u8) -> f32 {
        let tf = tf as f32;
        idf * tf * (K1 + 1.0) / (tf + self.len_part[n as usize])
    }

    /// The best score a term of weight `idf` can reach at all (any frequency, any length).
    pub fn ceiling(&self, idf: f32) -> f32 {
        idf * (K1 + 1.0)
    }
}
