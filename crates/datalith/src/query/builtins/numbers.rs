//! The numeric tower of Clojure's arithmetic, as Datomic's queries see it: longs (and entity
//! ids, which are longs in Datomic), bigints, ratios, bigdecs and doubles (floats widen to
//! doubles). An operation on two numbers works in the wider one's kind, in this order:
//! long < bigint < ratio < bigdec < double (Clojure's contagion: `(+ 1/2 1.5M)` is `2.0M`,
//! `(+ 1.5M 0.5)` is `2.0`).
//!
//! Long arithmetic that overflows is an error (Clojure's `+` throws "long overflow"); bigints
//! and ratios are exact up to 128 bits (Clojure's are unbounded) and an error past that.

use std::cmp::Ordering;

use super::super::error::BuiltinProblem;
use super::decimal::{Decimal, DEC};
use crate::codec::{Ratio, Reduced, Value};

/// A number taken from a value.
#[derive(Debug, Clone)]
pub enum Num {
    /// A long (or an entity id).
    Long(i64),
    /// A bigint.
    Big(i128),
    /// A fraction.
    Ratio(Ratio),
    /// An exact decimal: `mantissa x 10^-scale`.
    Dec(Decimal),
    /// A double (or float).
    Double(f64),
}

const BIG: &str = "bigint (128-bit)";
const RATIO: &str = "ratio (128-bit)";

fn overflow(kind: &'static str) -> BuiltinProblem {
    BuiltinProblem::Overflow(kind)
}

impl Num {
    /// The number a value is, if it is one.
    pub fn of(v: &Value) -> Option<Num> {
        Some(match v {
            Value::Long(n) => Num::Long(*n),
            Value::Ref(e) => Num::Long(i64::try_from(*e).ok()?),
            Value::BigInt(n) => Num::Big(**n),
            Value::Ratio(r) => Num::Ratio(**r),
            Value::BigDec(d) => Num::Dec(Decimal::from_bigdec(d)?),
            Value::Float(x) => Num::Double(f64::from(x.get())),
            Value::Double(x) => Num::Double(x.get()),
            _ => return None,
        })
    }

    /// The value, or an error for NaN or a decimal past 38 digits.
    pub fn into_value(self) -> Result<Value, BuiltinProblem> {
        Ok(match self {
            Num::Long(n) => Value::Long(n),
            Num::Big(n) => Value::BigInt(Box::new(n)),
            Num::Ratio(r) => Value::Ratio(Box::new(r)),
            Num::Dec(d) => Value::BigDec(d.to_bigdec().ok_or(overflow(DEC))?),
            Num::Double(x) => Value::double(x).ok_or(BuiltinProblem::NotANumber)?,
        })
    }

    fn rank(&self) -> u8 {
        match self {
            Num::Long(_) => 0,
            Num::Big(_) => 1,
            Num::Ratio(_) => 2,
            Num::Dec(_) => 3,
            Num::Double(_) => 4,
        }
    }

    /// As a double (exact kinds rounded).
    pub fn to_f64(&self) -> f64 {
        match self {
            Num::Long(n) => *n as f64,
            Num::Big(n) => *n as f64,
            Num::Ratio(r) => r.to_f64(),
            Num::Dec(d) => d.to_f64(),
            Num::Double(x) => *x,
        }
    }

    fn to_big(&self) -> i128 {
        match self {
            Num::Long(n) => i128::from(*n),
            Num::Big(n) => *n,
            _ => 0,
        }
    }

    /// As a fraction `(numerator, denominator)`; only for longs, bigints and ratios.
    fn fraction(&self) -> (i128, i128) {
        match self {
            Num::Ratio(r) => (r.numerator(), r.denominator()),
            other => (other.to_big(), 1),
        }
    }

    pub(super) fn to_dec(&self) -> Result<Decimal, BuiltinProblem> {
        match self {
            Num::Dec(d) => Ok(*d),
            Num::Ratio(r) => Decimal::from_ratio(*r),
            other => Ok(Decimal::from_int(other.to_big())),
        }
    }

    /// Whether it is zero.
    pub fn is_zero(&self) -> bool {
        self.signum() == 0
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i8 {
        match self {
            Num::Long(n) => n.signum() as i8,
            Num::Big(n) => n.signum() as i8,
            Num::Ratio(r) => r.numerator().signum() as i8,
            Num::Dec(d) => d.mantissa.signum() as i8,
            Num::Double(x) if *x > 0.0 => 1,
            Num::Double(x) if *x < 0.0 => -1,
            Num::Double(_) => 0,
        }
    }

    /// An integer (long or bigint), for `even?`, `odd?`.
    pub fn integer(&self) -> Option<i128> {
        matches!(self, Num::Long(_) | Num::Big(_)).then(|| self.to_big())
    }
}

/// A ratio result: a whole one is a bigint (Clojure: `(* 1/2 2)` is `1N`).
fn ratio(num: i128, den: i128) -> Result<Num, BuiltinProblem> {
    match Ratio::reduce(num, den) {
        None if den == 0 => Err(BuiltinProblem::DivideByZero),
        None => Err(overflow(RATIO)),
        Some(Reduced::Whole(n)) => Ok(Num::Big(n)),
        Some(Reduced::Fraction(r)) => Ok(Num::Ratio(r)),
    }
}

/// The four operations of the tower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// Clojure's exact `/`: a ratio for integers that do not divide.
    Div,
}

/// `a op b` in the wider kind of the two.
pub fn apply(op: Op, a: &Num, b: &Num) -> Result<Num, BuiltinProblem> {
    let rank = a.rank().max(b.rank());
    let m = |x: Option<i128>, kind| x.ok_or(overflow(kind));
    match rank {
        4 => {
            let (x, y) = (a.to_f64(), b.to_f64());
            if op == Op::Div && y == 0.0 {
                return Err(BuiltinProblem::DivideByZero);
            }
            Ok(Num::Double(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
            }))
        }
        3 => {
            let (x, y) = (a.to_dec()?, b.to_dec()?);
            let d = match op {
                Op::Add => x.add(y),
                Op::Sub => y.neg().and_then(|ny| x.add(ny)),
                Op::Mul => x.mul(y),
                Op::Div => return x.div(y).map(Num::Dec),
            };
            d.map(Num::Dec).ok_or(overflow(DEC))
        }
        2 => {
            let ((an, ad), (bn, bd)) = (a.fraction(), b.fraction());
            let cross = |p: i128, q: i128| m(p.checked_mul(q), RATIO);
            match op {
                Op::Add | Op::Sub => {
                    let (l, r) = (cross(an, bd)?, cross(bn, ad)?);
                    let n = if op == Op::Add {
                        l.checked_add(r)
                    } else {
                        l.checked_sub(r)
                    };
                    ratio(m(n, RATIO)?, cross(ad, bd)?)
                }
                Op::Mul => ratio(cross(an, bn)?, cross(ad, bd)?),
                Op::Div => ratio(cross(an, bd)?, cross(ad, bn)?),
            }
        }
        _ if op == Op::Div => {
            let (x, y) = (a.to_big(), b.to_big());
            match ratio(x, y)? {
                // A whole quotient keeps the operands' kind: `(clojure.core// 10 5)` is `2`.
                Num::Big(n) if rank == 0 => Ok(i64::try_from(n).map_or(Num::Big(n), Num::Long)),
                other => Ok(other),
            }
        }
        1 => {
            let (x, y) = (a.to_big(), b.to_big());
            let r = match op {
                Op::Add => x.checked_add(y),
                Op::Sub => x.checked_sub(y),
                _ => x.checked_mul(y),
            };
            m(r, BIG).map(Num::Big)
        }
        _ => {
            let (Num::Long(x), Num::Long(y)) = (a, b) else {
                unreachable!("rank 0 is two longs")
            };
            let r = match op {
                Op::Add => x.checked_add(*y),
                Op::Sub => x.checked_sub(*y),
                _ => x.checked_mul(*y),
            };
            r.map(Num::Long).ok_or(overflow("long"))
        }
    }
}

/// Which of the integer divisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntDiv {
    /// `quot`: truncated toward zero.
    Quot,
    /// `rem`: the remainder of `quot`, with the dividend's sign.
    Rem,
    /// `mod`: the remainder of the floored quotient, with the divisor's sign.
    Mod,
}

/// `quot`, `rem`, `mod` as Clojure computes them (doubles stay doubles, a ratio's quotient
/// is a bigint, its remainder a ratio); division by zero is an error even for doubles.
pub fn int_div(kind: IntDiv, a: &Num, b: &Num) -> Result<Num, BuiltinProblem> {
    if b.is_zero() {
        return Err(BuiltinProblem::DivideByZero);
    }
    let rank = a.rank().max(b.rank());
    if rank == 3 {
        // A bigdec and no double: exact, as Clojure's `BigDecimal` division to an integral
        // value and its remainder (`(quot 10.5M 3)` is `3M`, `(rem 10.5M 3)` is `1.5M`).
        let (p, q, scale) = a.to_dec()?.aligned(b.to_dec()?).ok_or(overflow(DEC))?;
        let whole = p.checked_div(q).ok_or(overflow(DEC))?;
        let r = p - whole * q;
        let r = match kind {
            IntDiv::Quot => return Ok(Num::Dec(Decimal::from_int(whole))),
            IntDiv::Mod if r != 0 && (r < 0) != (q < 0) => r + q,
            _ => r,
        };
        return Ok(Num::Dec(Decimal { mantissa: r, scale }));
    }
    if rank == 4 {
        let (x, y) = (a.to_f64(), b.to_f64());
        let q = (x / y).trunc();
        let r = x - q * y;
        return Ok(Num::Double(match kind {
            IntDiv::Quot => q,
            IntDiv::Rem => r,
            IntDiv::Mod if r != 0.0 && (r < 0.0) != (y < 0.0) => r + y,
            IntDiv::Mod => r,
        }));
    }
    if rank == 2 {
        // q = trunc(a / b), r = a - q * b, in exact fractions.
        let whole = apply(Op::Div, a, b)?;
        let q = match whole {
            Num::Ratio(r) => r.trunc(),
            other => other.to_big(),
        };
        if kind == IntDiv::Quot {
            return Ok(Num::Big(q));
        }
        let r = apply(Op::Sub, a, &apply(Op::Mul, &Num::Big(q), b)?)?;
        let fix = kind == IntDiv::Mod && !r.is_zero() && (r.signum() < 0) != (b.signum() < 0);
        return if fix { apply(Op::Add, &r, b) } else { Ok(r) };
    }
    let (x, y) = (a.to_big(), b.to_big());
    let r = match kind {
        IntDiv::Quot => x.checked_div(y),
        IntDiv::Rem => x.checked_rem(y),
        IntDiv::Mod => x.checked_rem(y).map(|r| {
            if r != 0 && (r < 0) != (y < 0) {
                r + y
            } else {
                r
            }
        }),
    };
    let r = r.ok_or(overflow(if rank == 0 { "long" } else { BIG }))?;
    Ok(if rank == 0 {
        i64::try_from(r).map_or(Num::Big(r), Num::Long)
    } else {
        Num::Big(r)
    })
}

/// Numeric order across kinds: exact among longs, bigints, ratios (and among bigdecs),
/// through doubles otherwise.
pub fn cmp(a: &Num, b: &Num) -> Ordering {
    match (a, b) {
        (Num::Dec(x), Num::Dec(y)) => match x.aligned(*y) {
            Some((p, q, _)) => p.cmp(&q),
            None => x.to_f64().total_cmp(&y.to_f64()),
        },
        (Num::Ratio(x), Num::Ratio(y)) => x.cmp(y),
        (Num::Ratio(x), Num::Long(_) | Num::Big(_)) => x.cmp_whole(b.to_big()),
        (Num::Long(_) | Num::Big(_), Num::Ratio(y)) => y.cmp_whole(a.to_big()).reverse(),
        (Num::Long(_) | Num::Big(_), Num::Long(_) | Num::Big(_)) => a.to_big().cmp(&b.to_big()),
        _ => a.to_f64().total_cmp(&b.to_f64()),
    }
}

/// Which category Clojure's `=` compares numbers within: integers, floating point, ratios
/// and decimals are never `=` to each other (`(= 1 1.0)` is false; `==` compares across).
pub fn category(n: &Num) -> u8 {
    match n {
        Num::Long(_) | Num::Big(_) => 0,
        Num::Ratio(_) => 1,
        Num::Dec(_) => 2,
        Num::Double(_) => 3,
    }
}
