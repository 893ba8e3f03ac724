//! The distinct values of an attribute without AVE entries (`store::value_index`), estimated.
//!
//! An attribute in AVE has its distinct values counted exactly (each AVE key is one value;
//! LMDB's tally counts the keys made and emptied). A listed attribute has no such keys, and
//! the planner still needs its distinct values: a join on its value or a lookup by it
//! expects `datoms / distinct` rows. So each listed attribute keeps a HyperLogLog sketch of
//! the values asserted into it (Flajolet et al., 2007): 64 one-byte registers, each the
//! largest rank (leading zeros plus one) of the hashes that fell to it. 64 registers give a
//! standard error of about 13% (1.04 / sqrt(64)), plenty for choosing a plan, in 64 bytes a
//! commit writes per listed attribute it touches.
//!
//! - Merging is a register-wise maximum: the same values merged twice, in any order and in
//!   any grouping of commits, give the same sketch, so a replayed log or a node that groups
//!   its commits differently agrees with the writer that made them.
//! - A retraction does not lower a register (a sketch cannot forget): after values churn,
//!   the estimate counts the values ever asserted, capped by the attribute's datoms.
//! - `Db::check` verifies that the sketch covers every value the attribute holds (each
//!   register at least the rank of every value hashing to it).
//!
//! # Byte layout
//!
//! | table | key | value |
//! |---|---|---|
//! | `store_meta` | `sketch/` ++ attribute id (u32 BE) | 64 registers, one byte each (0..=59) |
//!
//! The hash is FNV-1a over the value's index bytes (what EAV holds after the attribute id),
//! mixed by SplitMix64's finalizer; it is part of the format, so it is written out here
//! rather than borrowed from a crate whose output may change.

use super::ids::AttrId;

/// Registers of a sketch: the low bits of a hash pick one.
pub const REGISTERS: usize = 64;

/// Bits of the hash that pick the register.
const INDEX_BITS: u32 = REGISTERS.trailing_zeros();

/// The largest rank a register holds: the remaining bits all zero.
const MAX_RANK: u8 = (64 - INDEX_BITS + 1) as u8;

/// The `store_meta` key prefix of the sketches.
pub const KEY_PREFIX: &[u8] = b"sketch/";

/// The `store_meta` key of attribute `a`'s sketch.
pub fn key(a: AttrId) -> [u8; 11] {
    let mut k = [0u8; 11];
    k[..7].copy_from_slice(KEY_PREFIX);
    k[7..].copy_from_slice(&a.to_be_bytes());
    k
}

/// A HyperLogLog sketch of one attribute's values.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Sketch([u8; REGISTERS]);

impl Default for Sketch {
    fn default() -> Self {
        Sketch([0; REGISTERS])
    }
}

impl std::fmt::Debug for Sketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sketch(~{} values)", self.estimate())
    }
}

/// The sketch's hash of a value's index bytes.
pub fn hash(value: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in value {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // FNV's high bits depend weakly on the last bytes; the finalizer spreads every bit.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

impl Sketch {
    /// Adds a value by its index bytes.
    pub fn add(&mut self, value: &[u8]) {
        let h = hash(value);
        let i = (h & (REGISTERS as u64 - 1)) as usize;
        let rest = h >> INDEX_BITS;
        let rank = (rest.leading_zeros() - INDEX_BITS + 1) as u8;
        debug_assert!((1..=MAX_RANK).contains(&rank));
        if rank > self.0[i] {
            self.0[i] = rank;
        }
    }

    /// Takes in `other`'s values; whether any register rose.
    pub fn merge(&mut self, other: &Sketch) -> bool {
        let mut rose = false;
        for (mine, theirs) in self.0.iter_mut().zip(other.0.iter()) {
            if *theirs > *mine {
                *mine = *theirs;
                rose = true;
            }
        }
        rose
    }

    /// Whether every value `other` holds is in this sketch.
    pub fn covers(&self, other: &Sketch) -> bool {
        self.0.iter().zip(other.0.iter()).all(|(a, b)| a >= b)
    }

    /// The estimated number of distinct values added.
    pub fn estimate(&self) -> u64 {
        let m = REGISTERS as f64;
        let zeros = self.0.iter().filter(|r| **r == 0).count();
        if zeros == REGISTERS {
            return 0;
        }
        let sum: f64 = self.0.iter().map(|r| (-f64::from(*r)).exp2()).sum();
        // HyperLogLog's bias constant for 64 registers.
        let raw = 0.709 * m * m / sum;
        // Few values leave registers empty: counting those (linear counting) is more exact.
        let e = if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        };
        e.round().max(1.0) as u64
    }

    /// The stored registers.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Reads stored registers; `None` for bytes that are not a sketch (a wrong length, a
    /// rank no hash gives).
    pub fn from_bytes(b: &[u8]) -> Option<Sketch> {
        let regs: [u8; REGISTERS] = b.try_into().ok()?;
        regs.iter().all(|r| *r <= MAX_RANK).then_some(Sketch(regs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: impl IntoIterator<Item = u64>) -> Sketch {
        let mut s = Sketch::default();
        for v in values {
            s.add(&v.to_be_bytes());
        }
        s
    }

    #[test]
    fn estimates_within_three_standard_errors() {
        // (distinct values, repeats of each): the estimate must not depend on repeats.
        for (n, repeats) in [
            (1u64, 1u64),
            (1, 50),
            (5, 3),
            (30, 1),
            (100, 2),
            (1_000, 1),
            (10_000, 1),
            (200_000, 1),
        ] {
            let s = of((0..n).flat_map(|v| std::iter::repeat_n(v * 7919, repeats as usize)));
            let e = s.estimate() as f64;
            let err = (e - n as f64).abs() / n as f64;
            // Three standard errors, and exact enough for the few values linear counting
            // sees.
            let allowed = if n <= 5 { 0.0 } else { 0.39 };
            assert!(err <= allowed, "{n} values estimated {e}");
        }
        assert_eq!(Sketch::default().estimate(), 0);
    }

    #[test]
    fn merging_is_order_and_grouping_free() {
        let all = of(0..500);
        let mut parts = of(250..500);
        assert!(parts.merge(&of(0..250)));
        assert_eq!(parts, all);
        assert!(!parts.merge(&of(100..200)), "values it holds raise nothing");
        assert!(all.covers(&of(10..20)));
        assert!(!of(10..20).covers(&all));
    }

    #[test]
    fn stored_bytes_read_back_and_damage_is_refused() {
        let s = of(0..100);
        assert_eq!(Sketch::from_bytes(s.as_bytes()), Some(s));
        for bad in [&[0u8; 63][..], &[0u8; 65][..], &[MAX_RANK + 1; 64][..]] {
            assert_eq!(Sketch::from_bytes(bad), None);
        }
    }

    #[test]
    fn the_hash_is_fixed() {
        // Part of the stored format: a change here leaves every stored sketch wrong.
        for (bytes, h) in [
            (&b""[..], 0xf52a_15e9_a9b5_e89b),
            (b"a", 0x02c0_bdbf_4814_20f8),
            (b"ab", 0x9ffe_50a6_57e4_a147),
            (&[0, 0, 0, 1], 0x6160_0e56_e10f_f2da),
        ] {
            assert_eq!(hash(bytes), h, "{bytes:?}");
        }
    }
}
