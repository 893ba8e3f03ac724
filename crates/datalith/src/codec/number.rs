//! Numbers that are totally ordered: `F32` and `F64` (never NaN, `-0.0` folded into `0.0`) and
//! `BigDec`, an exact decimal kept normalized so that equal numbers have equal parts.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A double that is never NaN, so it is totally ordered (`-0.0` is normalized to `0.0`).
#[derive(Clone, Copy, PartialEq)]
pub struct F64(f64);

impl F64 {
    /// `None` for NaN.
    pub fn new(x: f64) -> Option<F64> {
        if x.is_nan() {
            None
        } else if x == 0.0 {
            Some(F64(0.0))
        } else {
            Some(F64(x))
        }
    }

    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Eq for F64 {}
impl PartialOrd for F64 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for F64 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h)
    }
}
impl fmt::Debug for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A float that is never NaN.
#[derive(Clone, Copy, PartialEq)]
pub struct F32(f32);

impl F32 {
    /// `None` for NaN.
    pub fn new(x: f32) -> Option<F32> {
        if x.is_nan() {
            None
        } else if x == 0.0 {
            Some(F32(0.0))
        } else {
            Some(F32(x))
        }
    }

    /// The number.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl Eq for F32 {}
impl PartialOrd for F32 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for F32 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl std::hash::Hash for F32 {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h)
    }
}
impl fmt::Debug for F32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// An exact decimal: `negative`, significant `digits` (ASCII '0'-'9', no leading or trailing
/// zeros; empty for zero) and `exponent`, meaning `0.d1d2d3... x 10^exponent`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BigDec {
    negative: bool,
    digits: Arc<str>,
    exponent: i32,
}

impl BigDec {
    /// Parses decimal text such as `-12.50`, `3e-7`, `0.0001` (an `M` suffix is allowed).
    pub fn parse(text: &str) -> Option<BigDec> {
        let t = text.strip_suffix('M').unwrap_or(text);
        let (negative, t) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
            None => (t, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let all: String = format!("{int}{frac}");
        let lead = all.len() - all.trim_start_matches('0').len();
        let digits = all.trim_start_matches('0').trim_end_matches('0');
        if digits.is_empty() {
            return Some(BigDec::zero());
        }
        // A value whose exponent does not fit is refused, not silently changed.
        let exponent = i64::try_from(int.len())
            .ok()?
            .checked_sub(i64::try_from(lead).ok()?)?
            .checked_add(i64::from(exp))?;
        Some(BigDec {
            negative,
            digits: Arc::from(digits),
            exponent: i32::try_from(exponent).ok()?,
        })
    }

    /// Zero.
    pub fn zero() -> BigDec {
        BigDec {
            negative: false,
            digits: Arc::from(""),
            exponent: 0,
        }
    }

    /// `±0.d1d2d3... x 10^exponent` from its parts; `None` unless `digits` is normalized
    /// (ASCII digits, no leading or trailing zero; empty means zero, and then the sign and
    /// exponent are ignored).
    pub fn new(negative: bool, digits: &str, exponent: i32) -> Option<BigDec> {
        normalized_digits(digits).then(|| BigDec::from_parts(negative, digits, exponent))
    }

    /// Sign, digits and exponent.
    pub fn parts(&self) -> (bool, &str, i32) {
        (self.negative, &self.digits, self.exponent)
    }

    /// Trusted constructor: `digits` must already be normalized (see [`BigDec::new`]).
    pub(crate) fn from_parts(negative: bool, digits: &str, exponent: i32) -> BigDec {
        debug_assert!(
            normalized_digits(digits),
            "unnormalized bigdec digits {digits:?}"
        );
        if digits.is_empty() {
            return BigDec::zero();
        }
        BigDec {
            negative,
            digits: Arc::from(digits),
            exponent,
        }
    }

    /// Plain decimal text without the `M` (`3.5`, `100`, `-0.0012`), as Java's
    /// `BigDecimal.toString` shows a number of this precision; `None` when that would take
    /// more than 40 padding zeros (then `Display`'s `0.dE±nM` form is the readable one).
    pub fn plain_text(&self) -> Option<String> {
        const MAX_PADDING: i64 = 40;
        if self.digits.is_empty() {
            return Some("0".into());
        }
        let sign = if self.negative { "-" } else { "" };
        let digits = &*self.digits;
        let (n, e) = (digits.len() as i64, i64::from(self.exponent));
        let body = if e <= 0 {
            if -e > MAX_PADDING {
                return None;
            }
            format!("0.{}{digits}", "0".repeat((-e) as usize))
        } else if e >= n {
            if e - n > MAX_PADDING {
                return None;
            }
            format!("{digits}{}", "0".repeat((e - n) as usize))
        } else {
            format!("{}.{}", &digits[..e as usize], &digits[e as usize..])
        };
        Some(format!("{sign}{body}"))
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i8 {
        if self.digits.is_empty() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }
}

/// Digits of a normalized decimal: ASCII digits with no leading or trailing zero (or none).
pub(crate) fn normalized_digits(digits: &str) -> bool {
    let b = digits.as_bytes();
    b.iter().all(u8::is_ascii_digit) && b.first() != Some(&b'0') && b.last() != Some(&b'0')
}

impl PartialOrd for BigDec {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigDec {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.signum(), other.signum());
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        let magnitude = self
            .exponent
            .cmp(&other.exponent)
            .then_with(|| self.digits.as_bytes().cmp(other.digits.as_bytes()));
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl fmt::Display for BigDec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return write!(f, "0M");
        }
        if self.negative {
            write!(f, "-")?;
        }
        write!(f, "0.{}E{}M", self.digits, self.exponent)
    }
}

impl fmt::Debug for BigDec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::{BigDec, F32, F64};

    #[test]
    fn bigdec_parse_table() {
        // (text, Some((negative, digits, exponent))) ; None = refused
        let cases: &[(&str, Option<(bool, &str, i32)>)] = &[
            ("0", Some((false, "", 0))),
            ("-0.000", Some((false, "", 0))),
            ("1", Some((false, "1", 1))),
            ("12.50", Some((false, "125", 2))),
            ("-12.50M", Some((true, "125", 2))),
            ("0.001", Some((false, "1", -2))),
            ("1e-3", Some((false, "1", -2))),
            ("1E2", Some((false, "1", 3))),
            ("+7.", Some((false, "7", 1))),
            (".5", Some((false, "5", 0))),
            ("100", Some((false, "1", 3))),
            ("", None),
            ("-", None),
            (".", None),
            ("1.2.3", None),
            ("1e", None),
            ("abc", None),
            ("1e99999999999", None),
            ("1e2147483647", None),
        ];
        for &(text, want) in cases {
            let got = BigDec::parse(text);
            assert_eq!(got.as_ref().map(|d| d.parts()), want, "{text}");
        }
    }

    #[test]
    fn bigdec_new_checks_normalization() {
        assert!(BigDec::new(false, "10", 0).is_none());
        assert!(BigDec::new(false, "01", 0).is_none());
        assert!(BigDec::new(false, "1a", 0).is_none());
        assert_eq!(BigDec::new(true, "", 5), Some(BigDec::zero()));
        assert_eq!(BigDec::new(true, "25", 1), BigDec::parse("-2.5"));
    }

    #[test]
    fn bigdec_plain_text() {
        let cases = [
            ("3.5M", Some("3.5")),
            ("100M", Some("100")),
            ("-0.0012M", Some("-0.0012")),
            ("0M", Some("0")),
            ("12.5e3M", Some("12500")),
            ("1e60M", None),
            ("1e-60M", None),
        ];
        for (text, want) in cases {
            let d = BigDec::parse(text).unwrap();
            assert_eq!(d.plain_text().as_deref(), want, "{text}");
        }
    }

    #[test]
    fn floats_reject_nan_and_fold_negative_zero() {
        assert!(F64::new(f64::NAN).is_none());
        assert!(F32::new(f32::NAN).is_none());
        assert_eq!(F64::new(-0.0).map(|x| x.get().to_bits()), Some(0));
        assert_eq!(F32::new(-0.0).map(|x| x.get().to_bits()), Some(0));
        assert!(F64::new(f64::NEG_INFINITY) < F64::new(-1.0));
        assert!(F64::new(f64::INFINITY) > F64::new(f64::MAX));
    }
}
