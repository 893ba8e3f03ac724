//! `Ratio`: an exact fraction, as Clojure's `31/5`. A query value only: Datomic has no ratio
//! value type, so a ratio is never stored (the encoder never sees one from the tx pipeline).
//!
//! Numerator and denominator are `i128` (Clojure's are unbounded): arithmetic that would leave
//! that range is an error rather than a silent rounding.

use std::cmp::Ordering;
use std::fmt;

/// A fraction in lowest terms with a denominator greater than 1 (a whole number is a
/// `Long` or `BigInt`, never a ratio: Clojure's rule, so `4/2` reads as `2`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: i128,
    den: i128,
}

/// A ratio reduced to lowest terms: either a true fraction or a whole number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduced {
    /// A whole number.
    Whole(i128),
    /// A fraction whose denominator is greater than 1.
    Fraction(Ratio),
}

/// The greatest common divisor, on magnitudes so that `i128::MIN` cannot overflow; `None`
/// when it does not fit an `i128` (only `gcd(MIN, 0)` and `gcd(MIN, MIN)`).
fn gcd(a: i128, b: i128) -> Option<i128> {
    let (mut x, mut y) = (a.unsigned_abs(), b.unsigned_abs());
    while y != 0 {
        (x, y) = (y, x % y);
    }
    i128::try_from(x).ok()
}

impl Ratio {
    /// `num/den` in lowest terms; `None` when `den` is 0 or the result leaves `i128`.
    pub fn reduce(num: i128, den: i128) -> Option<Reduced> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den)?;
        let (mut n, mut d) = (num.checked_div(g)?, den.checked_div(g)?);
        if d < 0 {
            n = n.checked_neg()?;
            d = d.checked_neg()?;
        }
        Some(if d == 1 {
            Reduced::Whole(n)
        } else {
            Reduced::Fraction(Ratio { num: n, den: d })
        })
    }

    /// The numerator (its sign is the ratio's).
    pub fn numerator(self) -> i128 {
        self.num
    }

    /// The denominator (always greater than 1).
    pub fn denominator(self) -> i128 {
        self.den
    }

    /// The nearest double.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The whole part, rounded toward zero (Clojure's `quot` of a ratio).
    pub fn trunc(self) -> i128 {
        self.num / self.den
    }
}

/// Compares `a/b` with `c/d` (`b`, `d` > 0) exactly, by continued fractions: whole parts
/// first, then the reciprocals of the remainders, so no product can overflow.
fn cmp_fractions(mut a: i128, mut b: i128, mut c: i128, mut d: i128) -> Ordering {
    let mut flipped = false;
    loop {
        let (qa, ra) = (a.div_euclid(b), a.rem_euclid(b));
        let (qc, rc) = (c.div_euclid(d), c.rem_euclid(d));
        let o = qa.cmp(&qc);
        if o != Ordering::Equal {
            return if flipped { o.reverse() } else { o };
        }
        let o = match (ra == 0, rc == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => {
                // ra/b vs rc/d  <=>  d/rc vs b/ra, reversed.
                (a, b, c, d) = (b, ra, d, rc);
                flipped = !flipped;
                continue;
            }
        };
        return if flipped { o.reverse() } else { o };
    }
}

impl Ratio {
    /// Compares with the whole number `n` exactly.
    pub fn cmp_whole(self, n: i128) -> Ordering {
        cmp_fractions(self.num, self.den, n, 1)
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Numeric order.
impl Ord for Ratio {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_fractions(self.num, self.den, other.num, other.den)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

impl fmt::Debug for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frac(n: i128, d: i128) -> Ratio {
        match Ratio::reduce(n, d) {
            Some(Reduced::Fraction(r)) => r,
            other => panic!("{n}/{d} gave {other:?}"),
        }
    }

    #[test]
    fn reduces_to_lowest_terms_with_a_positive_denominator() {
        let cases: &[(i128, i128, Option<Reduced>)] = &[
            (2, 4, Some(Reduced::Fraction(Ratio { num: 1, den: 2 }))),
            (4, 2, Some(Reduced::Whole(2))),
            (3, -6, Some(Reduced::Fraction(Ratio { num: -1, den: 2 }))),
            (-3, -6, Some(Reduced::Fraction(Ratio { num: 1, den: 2 }))),
            (0, 5, Some(Reduced::Whole(0))),
            (31, 5, Some(Reduced::Fraction(Ratio { num: 31, den: 5 }))),
            (1, 0, None),
            (i128::MIN, -1, None),
        ];
        for (n, d, want) in cases {
            assert_eq!(Ratio::reduce(*n, *d), *want, "{n}/{d}");
        }
    }

    #[test]
    fn orders_numerically_without_overflow() {
        let cases = [
            (frac(1, 2), frac(1, 3), Ordering::Greater),
            (frac(-1, 2), frac(1, 3), Ordering::Less),
            (frac(-1, 2), frac(-1, 3), Ordering::Less),
            (frac(2, 3), frac(2, 3), Ordering::Equal),
            (
                frac(i128::MAX, i128::MAX - 1),
                frac(i128::MAX - 1, i128::MAX - 2),
                Ordering::Less,
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.cmp(&b), want, "{a} vs {b}");
        }
        assert_eq!(frac(7, 2).cmp_whole(3), Ordering::Greater);
        assert_eq!(frac(-7, 2).cmp_whole(-3), Ordering::Less);
        assert_eq!(frac(7, 2).cmp_whole(4), Ordering::Less);
    }
}
