//! A list in fixed-size chunks: growing it never moves what it holds, and clearing it keeps
//! its chunks for the next fill.
//!
//! Why not a `Vec`: the committer's deferred-write bounds (`kv::pending`) hold one entry per
//! key head of every group LMDB does not hold yet, hundreds of thousands of entries (tens of
//! MB) when the applier runs behind. A `Vec` that doubles copies everything into fresh pages
//! on each growth: at W sync batch 1000 the copies and the page faults of the new buffers
//! were ~15% of the committer's samples (38,000 of its 100,000 page faults). Chunks grow by
//! one fresh chunk at a time, and a cleared list refills the chunks it had.

/// Entries per chunk after the first (the first grows like a `Vec` up to this, so a list
/// that stays small costs no more than a `Vec`).
const CHUNK: usize = 1024;

/// A list of `T` in chunks of `CHUNK`, appended at the end.
pub(crate) struct Chunked<T> {
    /// The chunks: those before `used` are full but the last, those from `used` on are empty
    /// and kept for reuse.
    chunks: Vec<Vec<T>>,
    /// How many chunks hold entries.
    used: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            used: 0,
        }
    }
}

impl<T> Chunked<T> {
    /// Appends `x`.
    pub(crate) fn push(&mut self, x: T) {
        let full = match self.used {
            0 => true,
            n => self.chunks[n - 1].len() == CHUNK,
        };
        if full {
            if self.used == self.chunks.len() {
                // The first chunk starts small; later ones are whole at once.
                let cap = if self.used == 0 { 0 } else { CHUNK };
                self.chunks.push(Vec::with_capacity(cap));
            }
            self.used += 1;
        }
        let last = &mut self.chunks[self.used - 1];
        debug_assert!(last.len() < CHUNK);
        last.push(x);
    }

    pub(crate) fn len(&self) -> usize {
        match self.used {
            0 => 0,
            n => (n - 1) * CHUNK + self.chunks[n - 1].len(),
        }
    }

    pub(crate) fn last_mut(&mut self) -> Option<&mut T> {
        self.used
            .checked_sub(1)
            .and_then(|i| self.chunks[i].last_mut())
    }

    /// Empties it, keeping its chunks.
    pub(crate) fn clear(&mut self) {
        self.chunks[..self.used].iter_mut().for_each(Vec::clear);
        self.used = 0;
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks[..self.used].iter().flatten()
    }

    /// Removes the last entry.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let i = self.used.checked_sub(1)?;
        let x = self.chunks[i].pop();
        if self.chunks[i].is_empty() {
            self.used = i;
        }
        x
    }

    /// The entry at `i` (in the order pushed).
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        self.chunks[..self.used].get(i / CHUNK)?.get(i % CHUNK)
    }

    /// The index of the first entry for which `pred` is false, in a list where it is true
    /// for a prefix (as `slice::partition_point`).
    pub(crate) fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        let chunks = &self.chunks[..self.used];
        // Every chunk but the last is full, so chunk `i` starts at `i * CHUNK`.
        let i = chunks.partition_point(|c| c.last().is_some_and(&pred));
        match chunks.get(i) {
            Some(c) => i * CHUNK + c.partition_point(&pred),
            None => self.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lengths_and_ends_across_chunk_boundaries() {
        // (entries pushed, expected len, expected last)
        let cases: &[(usize, usize, Option<usize>)] = &[
            (0, 0, None),
            (1, 1, Some(0)),
            (CHUNK - 1, CHUNK - 1, Some(CHUNK - 2)),
            (CHUNK, CHUNK, Some(CHUNK - 1)),
            (CHUNK + 1, CHUNK + 1, Some(CHUNK)),
            (3 * CHUNK, 3 * CHUNK, Some(3 * CHUNK - 1)),
        ];
        for &(n, len, last) in cases {
            let mut c = Chunked::default();
            (0..n).for_each(|x| c.push(x));
            assert_eq!(c.len(), len, "{n}");
            assert_eq!(c.last_mut().map(|x| *x), last, "{n}");
            assert!(c.iter().copied().eq(0..n), "{n}");
            if let Some(x) = c.last_mut() {
                *x += 1_000_000;
                assert_eq!(c.iter().last().copied(), last.map(|l| l + 1_000_000), "{n}");
            }
        }
    }

    #[test]
    fn clear_keeps_chunks_and_refills_them_in_order() {
        let mut c = Chunked::default();
        (0..2 * CHUNK + 5).for_each(|x| c.push(x));
        let chunks = c.chunks.len();
        c.clear();
        assert!(c.len() == 0 && c.last_mut().is_none() && c.iter().next().is_none());
        (0..CHUNK + 1).for_each(|x| c.push(x + 7));
        assert_eq!(
            c.chunks.len(),
            chunks,
            "no chunk allocated while old ones are free"
        );
        assert!(c.iter().copied().eq(7..CHUNK + 8));
        assert_eq!(c.len(), CHUNK + 1);
    }

    proptest! {
        /// Against a `Vec`: pushes, pops, clears, indexing and partition points answer alike.
        #[test]
        fn behaves_like_a_vec(
            steps in prop::collection::vec((0u8..10, 0usize..3 * CHUNK), 0..40),
            probes in prop::collection::vec(0u64..20_000, 0..30),
        ) {
            let (mut c, mut v) = (Chunked::default(), Vec::new());
            let mut next = 0u64;
            for (op, n) in steps {
                match op {
                    0 => {
                        c.clear();
                        v.clear();
                        continue;
                    }
                    1 => {
                        // Pops across chunk boundaries, past the last entry too.
                        for _ in 0..n {
                            prop_assert_eq!(c.pop(), v.pop());
                        }
                    }
                    _ => {
                        for _ in 0..n {
                            // Ascending keys with gaps and repeats.
                            next += u64::from(op % 3);
                            c.push(next);
                            v.push(next);
                        }
                    }
                }
                prop_assert_eq!(c.len(), v.len());
                prop_assert_eq!(c.last_mut(), v.last_mut());
                prop_assert!(c.iter().eq(v.iter()));
                for p in &probes {
                    let at = v.partition_point(|x| x < p);
                    prop_assert_eq!(c.partition_point(|x| x < p), at, "probe {}", p);
                    prop_assert_eq!(c.get(at), v.get(at));
                    prop_assert_eq!(c.get(*p as usize), v.get(*p as usize));
                }
            }
        }
    }
}
