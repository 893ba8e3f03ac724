//! `Decimal`: bigdec arithmetic, exact while the digits fit an `i128` (38 digits; Java's
//! `BigDecimal` is unbounded, so past that it is an overflow error here).

use crate::codec::{BigDec, Ratio};
use crate::query::error::BuiltinProblem;

/// What overflows name.
pub const DEC: &str = "bigdec (38-digit)";

/// An exact decimal small enough for arithmetic: `mantissa x 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decimal {
    pub(super) mantissa: i128,
    pub(super) scale: i32,
}

impl Decimal {
    pub(super) fn from_bigdec(d: &BigDec) -> Option<Decimal> {
        let (negative, digits, exponent) = d.parts();
        if digits.is_empty() {
            return Some(Decimal {
                mantissa: 0,
                scale: 0,
            });
        }
        let m: i128 = digits.parse().ok()?;
        let scale = i32::try_from(digits.len()).ok()?.checked_sub(exponent)?;
        Some(Decimal {
            mantissa: if negative { -m } else { m },
            scale,
        })
    }

    pub(super) fn from_int(n: i128) -> Decimal {
        Decimal {
            mantissa: n,
            scale: 0,
        }
    }

    pub(super) fn to_bigdec(self) -> Option<BigDec> {
        BigDec::parse(&format!("{}E{}", self.mantissa, -i64::from(self.scale)))
    }

    pub(super) fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale)
    }

    /// Both at the larger scale.
    pub(super) fn aligned(self, other: Decimal) -> Option<(i128, i128, i32)> {
        let scale = self.scale.max(other.scale);
        let up = |d: Decimal| {
            10i128
                .checked_pow(u32::try_from(scale - d.scale).ok()?)?
                .checked_mul(d.mantissa)
        };
        Some((up(self)?, up(other)?, scale))
    }

    pub(super) fn add(self, other: Decimal) -> Option<Decimal> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Decimal {
            mantissa: a.checked_add(b)?,
            scale,
        })
    }

    pub(super) fn mul(self, other: Decimal) -> Option<Decimal> {
        Some(Decimal {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            scale: self.scale.checked_add(other.scale)?,
        })
    }

    pub(super) fn neg(self) -> Option<Decimal> {
        Some(Decimal {
            mantissa: self.mantissa.checked_neg()?,
            scale: self.scale,
        })
    }

    /// The exact quotient, or `Err` when its expansion does not terminate (Java's
    /// `BigDecimal.divide`: "Non-terminating decimal expansion").
    pub(super) fn div(self, other: Decimal) -> Result<Decimal, BuiltinProblem> {
        if other.mantissa == 0 {
            return Err(BuiltinProblem::DivideByZero);
        }
        let (a, b, _) = self.aligned(other).ok_or(BuiltinProblem::Overflow(DEC))?;
        let mut num = a;
        for scale in 0..=38 {
            if num % b == 0 {
                return Ok(Decimal {
                    mantissa: num / b,
                    scale,
                });
            }
            match num.checked_mul(10) {
                Some(n) => num = n,
                None => break,
            }
        }
        Err(BuiltinProblem::OutOfRange(
            "non-terminating decimal expansion; no exact representable decimal result".into(),
        ))
    }

    pub(super) fn from_ratio(r: Ratio) -> Result<Decimal, BuiltinProblem> {
        Decimal::from_int(r.numerator()).div(Decimal::from_int(r.denominator()))
    }
}
