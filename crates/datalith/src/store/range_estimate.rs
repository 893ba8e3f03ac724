//! How many datoms of an attribute have a value within bounds, estimated cheaply enough to
//! ask for every candidate step of a plan.
//!
//! LMDB keeps no counts inside its B-tree, so a range cannot be counted without walking it.
//! The estimate walks it only up to a cap (a few microseconds: a narrow range, or the sparse
//! tail of a skewed one, is then counted exactly); past the cap it interpolates the bounds
//! between the attribute's smallest and largest values (two B-tree lookups), scaled by the
//! attribute's datom count. Interpolation assumes values spread evenly between those two;
//! numbers interpolate on their numeric value, every other type on the first eight bytes of
//! its index encoding after the prefix the two ends share (strings by their leading
//! characters). The count reached is a floor under the interpolated figure.

use std::ops::Bound;

use super::error::StoreError;
use super::ids::AttrId;
use super::keys::ATTR_BYTES;
use super::reader::{attr_value_bytes, IndexReader};
use crate::codec::encode::tag;
use crate::codec::Value;
use crate::kv::Direction;

/// An estimate of the datoms in a value range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeEstimate {
    /// The estimated count.
    pub datoms: u64,
    /// Whether it was counted (the range held fewer datoms than the cap).
    pub exact: bool,
}

impl<'a> IndexReader<'a> {
    /// The datoms of attribute `a` whose value lies within `lo`..`hi`, counted up to `cap`
    /// and interpolated beyond it (module doc). `datoms` is the attribute's datom count from
    /// its statistics.
    pub fn estimate_range(
        &self,
        a: AttrId,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
        datoms: u64,
        cap: u64,
    ) -> Result<RangeEstimate, StoreError> {
        let cap = cap.max(1);
        if self.is_listed(a)? {
            return self.listed_range_count(a, lo, hi);
        }
        let mut counted = 0u64;
        self.scan_attr(a, lo, hi, Direction::Forward, |_, _| {
            counted += 1;
            Ok(counted < cap)
        })?;
        if counted < cap {
            return Ok(RangeEstimate {
                datoms: counted,
                exact: true,
            });
        }
        let share = self.range_share(a, lo, hi)?;
        let interpolated = (share * datoms as f64).round() as u64;
        Ok(RangeEstimate {
            datoms: interpolated.clamp(counted, datoms.max(counted)),
            exact: false,
        })
    }

    /// The share (0..=1) of the attribute's value span that `lo`..`hi` covers.
    fn range_share(
        &self,
        a: AttrId,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<f64, StoreError> {
        let (Some(min), Some(max)) = (self.end_value(a, true)?, self.end_value(a, false)?) else {
            return Ok(0.0);
        };
        if min >= max {
            return Ok(1.0);
        }
        let bound = |b: Bound<&Value>| -> Option<Vec<u8>> {
            match b {
                Bound::Included(v) | Bound::Excluded(v) => {
                    let mut k = Vec::with_capacity(ATTR_BYTES + 16);
                    attr_value_bytes(a, v, &mut k);
                    Some(k.split_off(ATTR_BYTES))
                }
                Bound::Unbounded => None,
            }
        };
        // Bounds outside the values clamp to their ends.
        let lo = bound(lo)
            .filter(|b| *b > min)
            .unwrap_or_else(|| min.clone());
        let hi = bound(hi)
            .filter(|b| *b < max)
            .unwrap_or_else(|| max.clone());
        if lo >= hi {
            return Ok(0.0);
        }
        let at = Position::of(&min, &max);
        let (pmin, pmax) = (at.of_bytes(&min), at.of_bytes(&max));
        let span = pmax - pmin;
        if span <= 0.0 {
            return Ok(1.0);
        }
        let share = (at.of_bytes(&hi) - at.of_bytes(&lo)) / span;
        Ok(share.clamp(0.0, 1.0))
    }

    /// The encoded smallest (`first`) or largest value of attribute `a`, without its
    /// attribute prefix.
    fn end_value(&self, a: AttrId, first: bool) -> Result<Option<Vec<u8>>, StoreError> {
        let direction = if first {
            Direction::Forward
        } else {
            Direction::Backward
        };
        let mut out = None;
        self.scan_attr(a, Bound::Unbounded, Bound::Unbounded, direction, |vb, _| {
            out = Some(vb.to_vec());
            Ok(false)
        })?;
        Ok(out)
    }
}

/// Places encoded values of one attribute on a line, for interpolation.
struct Position {
    /// Bytes every value between the two ends shares (its type tag, leading bytes).
    skip: usize,
    /// Numbers are placed by their value.
    numeric: bool,
}

impl Position {
    fn of(min: &[u8], max: &[u8]) -> Position {
        let numeric = matches!(
            (min.first(), max.first()),
            (Some(&x), Some(&y)) if x == y && matches!(x, tag::LONG | tag::INSTANT | tag::REF | tag::DOUBLE)
        ) && min.len() == 9
            && max.len() == 9;
        let skip = min.iter().zip(max).take_while(|(x, y)| x == y).count();
        Position { skip, numeric }
    }

    fn of_bytes(&self, b: &[u8]) -> f64 {
        if self.numeric && b.len() == 9 {
            let n = u64::from_be_bytes(b[1..9].try_into().unwrap_or([0; 8]));
            return match b[0] {
                // Order-preserving encoding of a double: the sign bit flipped for positives,
                // every bit flipped for negatives.
                tag::DOUBLE => {
                    let bits = if n & (1 << 63) != 0 {
                        n ^ (1 << 63)
                    } else {
                        !n
                    };
                    f64::from_bits(bits)
                }
                tag::REF => n as f64,
                _ => ((n ^ (1 << 63)) as i64) as f64,
            };
        }
        let mut eight = [0u8; 8];
        for (i, x) in b.iter().skip(self.skip).take(8).enumerate() {
            eight[i] = *x;
        }
        u64::from_be_bytes(eight) as f64
    }
}
