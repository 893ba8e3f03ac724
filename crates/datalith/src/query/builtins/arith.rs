//! Arithmetic: `+ - * /`, `quot rem mod`, `inc dec`, `max min abs`, the sign and parity
//! predicates, `rand`, `rand-int` (the kinds and their contagion are in `numbers`).
//!
//! Datomic's query `/` is its own function, not Clojure's: exactly two arguments, and on two
//! integers the truncated quotient (`(/ 31 5)` is `6`, `(/ -31 5)` is `-6`); on ratios exact,
//! on doubles a double, and division by zero an error even for doubles. Clojure's `/` (exact
//! ratios: `31/5`) is there as `clojure.core//`, as in Datomic.

use std::cell::Cell;

use super::decimal::DEC;
use super::numbers::{self, apply, int_div, IntDiv, Num, Op};
use super::{Call, Out};
use crate::codec::Value;
use crate::query::error::{BuiltinProblem, QueryError};

/// Argument `i` as a number (a bigdec too long for exact arithmetic: an overflow).
pub(super) fn num(c: &Call, i: usize) -> Result<Num, QueryError> {
    match (Num::of(&c.args[i]), &c.args[i]) {
        (Some(n), _) => Ok(n),
        // A number after all, only too long for exact arithmetic here.
        (None, Value::BigDec(_)) => Err(c.fail(BuiltinProblem::Overflow(DEC))),
        (None, _) => Err(c.wrong_type(i, "a number")),
    }
}

fn nums(c: &Call) -> Result<Vec<Num>, QueryError> {
    (0..c.args.len()).map(|i| num(c, i)).collect()
}

fn done(c: &Call, r: Result<Num, BuiltinProblem>) -> Out {
    let n = r.map_err(|p| c.fail(p))?;
    n.into_value().map(Some).map_err(|p| c.fail(p))
}

/// Folds `op` over the arguments; `(op)` is `identity`, `(op x)` is `(op identity x)` when
/// `unary_from_identity` (`-` and `/`), else `x`.
fn fold(c: &Call, op: Op, identity: Option<i64>, unary_from_identity: bool) -> Out {
    if let Some(out) = two_plain(c, op) {
        return out;
    }
    fold_tower(c, op, identity, unary_from_identity)
}

/// [`fold`] through the numeric tower, whatever the arguments.
fn fold_tower(c: &Call, op: Op, identity: Option<i64>, unary_from_identity: bool) -> Out {
    let ns = nums(c)?;
    let Some((first, rest)) = ns.split_first() else {
        return match identity {
            Some(n) => Ok(Some(Value::Long(n))),
            None => Err(c.fail(BuiltinProblem::Arity {
                expected: "at least 1",
                got: 0,
            })),
        };
    };
    if rest.is_empty() && unary_from_identity {
        return done(
            c,
            apply(op, &Num::Long(if op == Op::Div { 1 } else { 0 }), first),
        );
    }
    let mut acc = first.clone();
    for n in rest {
        acc = apply(op, &acc, n).map_err(|p| c.fail(p))?;
    }
    done(c, Ok(acc))
}

/// `(op a b)` on two doubles, or a double and a long, or two longs whose result fits: the
/// common call of a query's arithmetic, once per row, answered without the general
/// tower's conversions (the same result: the tower's double rank computes `x op y` on the
/// two as doubles, and two longs stay exact); `None` for every other case.
#[inline]
fn two_plain(c: &Call, op: Op) -> Option<Out> {
    let [a, b] = c.args else { return None };
    Some(match plain(op, a, b)? {
        Plain::Long(n) => Ok(Some(Value::Long(n))),
        Plain::Double(r) => done(c, Ok(Num::Double(r))),
    })
}

/// The result of arithmetic on two plain numbers (see [`plain`]).
pub(crate) enum Plain {
    Long(i64),
    /// Possibly NaN, which the caller refuses as the tower does.
    Double(f64),
}

/// `a op b` for two longs whose result fits, or a double with a double or a long, computed
/// as the tower computes it; `None` for every other case (and for any division).
#[inline]
fn plain(op: Op, a: &Value, b: &Value) -> Option<Plain> {
    let (x, y) = match (a, b) {
        (Value::Long(x), Value::Long(y)) => {
            let n = match op {
                Op::Add => x.checked_add(*y),
                Op::Sub => x.checked_sub(*y),
                Op::Mul => x.checked_mul(*y),
                // Exact quotients and their ratios are the tower's.
                Op::Div => None,
            }?;
            return Some(Plain::Long(n));
        }
        (Value::Double(x), Value::Double(y)) => (x.get(), y.get()),
        (Value::Double(x), Value::Long(y)) => (x.get(), *y as f64),
        (Value::Long(x), Value::Double(y)) => (*x as f64, y.get()),
        _ => return None,
    };
    Some(Plain::Double(match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        // Division by zero is the tower's error.
        Op::Div => return None,
    }))
}

/// `(op a b)` on two plain numbers (see [`plain`]) as the value the call returns; `None`
/// where the call must decide (any other kinds, an overflow, a NaN it refuses).
#[inline]
pub(crate) fn plain_value(op: Op, a: &Value, b: &Value) -> Option<Value> {
    match plain(op, a, b)? {
        Plain::Long(n) => Some(Value::Long(n)),
        Plain::Double(r) => Value::double(r),
    }
}

/// `(+ a b)` of two plain numbers without a call (`sum`'s fold adds one value a row).
#[inline]
pub(crate) fn plain_add(a: &Value, b: &Value) -> Option<Plain> {
    plain(Op::Add, a, b)
}

/// `+`
pub fn add(c: &Call) -> Out {
    fold(c, Op::Add, Some(0), false)
}

/// `-`
pub fn sub(c: &Call) -> Out {
    fold(c, Op::Sub, None, true)
}

/// `*`
pub fn mul(c: &Call) -> Out {
    fold(c, Op::Mul, Some(1), false)
}

/// Clojure's `/` (`clojure.core//`): exact.
pub fn clojure_div(c: &Call) -> Out {
    fold(c, Op::Div, None, true)
}

/// Datomic's query `/`: two arguments; integers give their truncated quotient.
pub fn datomic_div(c: &Call) -> Out {
    c.exactly(2)?;
    let (a, b) = (num(c, 0)?, num(c, 1)?);
    match (&a, &b) {
        (Num::Long(_) | Num::Big(_), Num::Long(_) | Num::Big(_)) => {
            done(c, int_div(IntDiv::Quot, &a, &b))
        }
        _ => done(c, apply(Op::Div, &a, &b)),
    }
}

fn int_div_fn(c: &Call, kind: IntDiv) -> Out {
    c.exactly(2)?;
    done(c, int_div(kind, &num(c, 0)?, &num(c, 1)?))
}

/// `quot`
pub fn quot(c: &Call) -> Out {
    int_div_fn(c, IntDiv::Quot)
}

/// `rem`
pub fn rem(c: &Call) -> Out {
    int_div_fn(c, IntDiv::Rem)
}

/// `mod`
pub fn modulo(c: &Call) -> Out {
    int_div_fn(c, IntDiv::Mod)
}

/// `inc`
pub fn inc(c: &Call) -> Out {
    c.exactly(1)?;
    done(c, apply(Op::Add, &num(c, 0)?, &Num::Long(1)))
}

/// `dec`
pub fn dec(c: &Call) -> Out {
    c.exactly(1)?;
    done(c, apply(Op::Sub, &num(c, 0)?, &Num::Long(1)))
}

/// `max`/`min` keep the winning argument as given; of equal numbers the later one wins
/// (Clojure: `(min 1 1.0)` is `1.0`).
fn extreme(c: &Call, later_wins: fn(std::cmp::Ordering) -> bool) -> Out {
    c.arity(1, None, "at least 1")?;
    let ns = nums(c)?;
    let mut best = 0;
    for i in 1..ns.len() {
        if later_wins(numbers::cmp(&ns[i], &ns[best])) {
            best = i;
        }
    }
    Ok(Some(c.args[best].clone()))
}

/// `max`
pub fn max(c: &Call) -> Out {
    extreme(c, |o| o != std::cmp::Ordering::Less)
}

/// `min`
pub fn min(c: &Call) -> Out {
    extreme(c, |o| o != std::cmp::Ordering::Greater)
}

/// `abs`. Of the least long it is that long itself: Java's `Math.abs`, which Datomic's
/// `(abs -9223372036854775808)` returns, rather than an overflow.
pub fn abs(c: &Call) -> Out {
    c.exactly(1)?;
    let n = num(c, 0)?;
    if n.signum() >= 0 || matches!(n, Num::Long(i64::MIN)) {
        return Ok(Some(c.args[0].clone()));
    }
    done(c, apply(Op::Sub, &Num::Long(0), &n))
}

fn sign(c: &Call, test: fn(i8) -> bool) -> Out {
    c.exactly(1)?;
    Ok(Some(Value::Boolean(test(num(c, 0)?.signum()))))
}

/// `zero?`
pub fn is_zero(c: &Call) -> Out {
    sign(c, |s| s == 0)
}

/// `pos?`
pub fn is_pos(c: &Call) -> Out {
    sign(c, |s| s > 0)
}

/// `neg?`
pub fn is_neg(c: &Call) -> Out {
    sign(c, |s| s < 0)
}

fn parity(c: &Call, even: bool) -> Out {
    c.exactly(1)?;
    let n = num(c, 0)?
        .integer()
        .ok_or_else(|| c.wrong_type(0, "an integer"))?;
    Ok(Some(Value::Boolean((n % 2 == 0) == even)))
}

/// `even?`
pub fn is_even(c: &Call) -> Out {
    parity(c, true)
}

/// `odd?`
pub fn is_odd(c: &Call) -> Out {
    parity(c, false)
}

thread_local! {
    static RANDOM: Cell<u64> = Cell::new({
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x9E37_79B9_7F4A_7C15);
        h.finish() | 1
    });
}

/// A uniform double in [0, 1) (xorshift64*, seeded per thread: not for secrets).
fn unit_random() -> f64 {
    RANDOM.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// `rand`: `(rand)` in [0, 1), `(rand n)` in [0, n).
pub fn rand(c: &Call) -> Out {
    c.arity(0, Some(1), "0 or 1")?;
    let scale = match c.args.first() {
        Some(_) => num(c, 0)?.to_f64(),
        None => 1.0,
    };
    done(c, Ok(Num::Double(unit_random() * scale)))
}

/// `rand-int`: a long in [0, n) (toward zero for a negative n, as Clojure).
pub fn rand_int(c: &Call) -> Out {
    c.exactly(1)?;
    let n = num(c, 0)?.to_f64();
    Ok(Some(Value::Long((unit_random() * n) as i64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut answers as the tower does, wherever it answers.
    #[test]
    fn two_plain_agrees_with_the_tower() {
        let d = |x: f64| Value::double(x).unwrap();
        let values = [
            Value::Long(0),
            Value::Long(7),
            Value::Long(-3),
            Value::Long(i64::MAX),
            Value::Long(i64::MIN),
            d(0.0),
            d(-0.0),
            d(1.5),
            d(-2.25),
            d(1e308),
            d(f64::INFINITY),
            d(f64::NEG_INFINITY),
        ];
        let mut answered = 0;
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
            for a in &values {
                for b in &values {
                    let args = [a.clone(), b.clone()];
                    let c = Call {
                        name: "op",
                        args: &args,
                    };
                    let Some(fast) = two_plain(&c, op) else {
                        continue;
                    };
                    answered += 1;
                    let tower = fold_tower(&c, op, None, false);
                    match (fast, tower) {
                        (Ok(Some(Value::Double(x))), Ok(Some(Value::Double(y)))) => {
                            assert_eq!(x.get().to_bits(), y.get().to_bits(), "{op:?} {a} {b}")
                        }
                        (Ok(x), Ok(y)) => assert_eq!(x, y, "{op:?} {a} {b}"),
                        (Err(x), Err(y)) => assert_eq!(x.to_string(), y.to_string()),
                        (x, y) => panic!("{op:?} {a} {b}: {x:?} against {y:?}"),
                    }
                }
            }
        }
        assert!(answered > 200, "{answered}");
    }
}
