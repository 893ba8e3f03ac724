//! Coercions and bits: `double float long int num bigint bigdec boolean`, `inst-ms`, the
//! `parse-*` readers, and `bit-and bit-or bit-xor bit-not bit-shift-left bit-shift-right
//! unsigned-bit-shift-right`: `clojure.core` functions a Datomic query resolves like its
//! own, with Clojure's results (`(long 8.25)` is `8`, truncated toward zero; a double past
//! a long's range is an error, as Clojure's `IllegalArgumentException`).

use super::arith::num as number;
use super::decimal::DEC;
use super::numbers::Num;
use super::printing::java_double;
use super::{Call, Out};
use crate::codec::{parse_uuid, BigDec, Value};
use crate::query::error::{BuiltinProblem, QueryError};

fn out_of_range(c: &Call, what: &str) -> QueryError {
    c.fail(BuiltinProblem::OutOfRange(format!(
        "value out of range for {what}"
    )))
}

/// `double`
pub fn double(c: &Call) -> Out {
    c.exactly(1)?;
    let x = number(c, 0)?.to_f64();
    Ok(Some(
        Value::double(x).ok_or_else(|| c.fail(BuiltinProblem::NotANumber))?,
    ))
}

/// `float` (a double past a float's range is an error, as in Clojure).
pub fn float(c: &Call) -> Out {
    c.exactly(1)?;
    let x = number(c, 0)?.to_f64();
    if x.is_finite() && x.abs() > f64::from(f32::MAX) {
        return Err(out_of_range(c, "float"));
    }
    Ok(Some(
        Value::float(x as f32).ok_or_else(|| c.fail(BuiltinProblem::NotANumber))?,
    ))
}

/// The integer part of a number, truncated toward zero (`None`: NaN or infinite).
fn truncated(n: &Num) -> Option<i128> {
    match n {
        Num::Double(x) if !x.is_finite() => None,
        // Past i128's range saturates, which every caller then refuses as out of its range.
        Num::Double(x) => Some(x.trunc() as i128),
        other => Some(
            other
                .integer()
                .unwrap_or_else(|| other.to_f64().trunc() as i128),
        ),
    }
}

/// `long` and `int` (Datalith has no 32-bit integer: `int` answers a long after checking
/// the 32-bit range, as Clojure's `int` does).
fn integer(c: &Call, what: &str, min: i128, max: i128) -> Out {
    c.exactly(1)?;
    let n = number(c, 0)?;
    match truncated(&n) {
        Some(i) if (min..=max).contains(&i) => Ok(Some(Value::Long(i as i64))),
        _ => Err(out_of_range(c, what)),
    }
}

/// `long`
pub fn long(c: &Call) -> Out {
    integer(c, "long", i128::from(i64::MIN), i128::from(i64::MAX))
}

/// `int`
pub fn int(c: &Call) -> Out {
    integer(c, "int", i128::from(i32::MIN), i128::from(i32::MAX))
}

/// `num`: a number as it is.
pub fn num(c: &Call) -> Out {
    c.exactly(1)?;
    number(c, 0)?;
    Ok(Some(c.args[0].clone()))
}

/// `bigint`: a number's integer part as a bigint.
pub fn bigint(c: &Call) -> Out {
    c.exactly(1)?;
    let n = number(c, 0)?;
    match truncated(&n) {
        Some(i) => Ok(Some(Value::BigInt(Box::new(i)))),
        None => Err(out_of_range(c, "bigint")),
    }
}

/// `bigdec`: a number as an exact decimal (a double by its shortest text, as Clojure's
/// `BigDecimal/valueOf`: `(bigdec 7.5)` is `7.5M`).
pub fn bigdec(c: &Call) -> Out {
    c.exactly(1)?;
    let text = match &c.args[0] {
        Value::BigDec(_) => return Ok(Some(c.args[0].clone())),
        Value::Long(n) => n.to_string(),
        Value::BigInt(n) => n.to_string(),
        Value::Double(x) if x.get().is_finite() => java_double(x.get()),
        Value::Float(x) if x.get().is_finite() => java_double(f64::from(x.get())),
        Value::Ratio(_) => {
            // Exact when the ratio's decimal ends (1/2); 1/3 is an error, as in Clojure.
            let d = number(c, 0)?.to_dec().map_err(|p| c.fail(p))?;
            let d = d
                .to_bigdec()
                .ok_or_else(|| c.fail(BuiltinProblem::Overflow(DEC)))?;
            return Ok(Some(Value::BigDec(d)));
        }
        _ => return Err(c.wrong_type(0, "a finite number")),
    };
    BigDec::parse(&text)
        .map(|d| Some(Value::BigDec(d)))
        .ok_or_else(|| c.fail(BuiltinProblem::Overflow(DEC)))
}

/// `boolean`: whether the value is truthy (all but nil and false).
pub fn boolean(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(Some(Value::Boolean(!matches!(
        c.args[0],
        Value::Boolean(false)
    ))))
}

/// `inst-ms`: an instant's milliseconds since the epoch.
pub fn inst_ms(c: &Call) -> Out {
    c.exactly(1)?;
    match c.args[0] {
        Value::Instant(ms) => Ok(Some(Value::Long(ms))),
        _ => Err(c.wrong_type(0, "an instant")),
    }
}

/// `parse-long`: a decimal integer's text as a long, nil for anything else.
pub fn parse_long(c: &Call) -> Out {
    c.exactly(1)?;
    let t = super::strings::text(c, 0)?;
    // Clojure accepts an optional sign and ASCII digits only.
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    Ok(t.trim_start_matches('+')
        .parse::<i64>()
        .ok()
        .map(Value::Long))
}

/// `parse-double`: a number's text as a double, nil for anything else.
pub fn parse_double(c: &Call) -> Out {
    c.exactly(1)?;
    let t = super::strings::text(c, 0)?;
    let plain = t
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    let parsed = match t {
        "NaN" | "Infinity" | "+Infinity" | "-Infinity" => None,
        _ if plain => t.parse::<f64>().ok(),
        _ => None,
    };
    Ok(parsed.and_then(Value::double))
}

/// `parse-boolean`: `"true"` or `"false"`, nil for anything else.
pub fn parse_boolean(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(match super::strings::text(c, 0)? {
        "true" => Some(Value::Boolean(true)),
        "false" => Some(Value::Boolean(false)),
        _ => None,
    })
}

/// `parse-uuid`: a UUID's text as a UUID, nil for anything else.
pub fn parse_uuid_fn(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(parse_uuid(super::strings::text(c, 0)?).map(Value::Uuid))
}

fn long_arg(c: &Call, i: usize) -> Result<i64, QueryError> {
    match c.args[i] {
        Value::Long(n) => Ok(n),
        _ => Err(c.wrong_type(i, "a long")),
    }
}

fn bits(c: &Call, f: fn(i64, i64) -> i64) -> Out {
    c.arity(2, None, "at least 2")?;
    let mut acc = long_arg(c, 0)?;
    for i in 1..c.args.len() {
        acc = f(acc, long_arg(c, i)?);
    }
    Ok(Some(Value::Long(acc)))
}

/// `bit-and`
pub fn bit_and(c: &Call) -> Out {
    bits(c, |a, b| a & b)
}

/// `bit-or`
pub fn bit_or(c: &Call) -> Out {
    bits(c, |a, b| a | b)
}

/// `bit-xor`
pub fn bit_xor(c: &Call) -> Out {
    bits(c, |a, b| a ^ b)
}

/// `bit-not`
pub fn bit_not(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(Some(Value::Long(!long_arg(c, 0)?)))
}

/// A shift by the low 6 bits of the count, as the JVM's `<<`, `>>` and `>>>` do.
fn shift(c: &Call, f: fn(i64, u32) -> i64) -> Out {
    c.exactly(2)?;
    let (x, n) = (long_arg(c, 0)?, long_arg(c, 1)?);
    Ok(Some(Value::Long(f(x, (n & 63) as u32))))
}

/// `bit-shift-left`
pub fn bit_shift_left(c: &Call) -> Out {
    shift(c, |x, n| x.wrapping_shl(n))
}

/// `bit-shift-right` (the sign kept)
pub fn bit_shift_right(c: &Call) -> Out {
    shift(c, |x, n| x.wrapping_shr(n))
}

/// `unsigned-bit-shift-right` (zeros shifted in)
pub fn unsigned_bit_shift_right(c: &Call) -> Out {
    shift(c, |x, n| ((x as u64) >> n) as i64)
}

#[cfg(test)]
mod tests {
    use super::super::call;
    use crate::codec::Value;

    fn run(name: &str, args: &[Value]) -> Result<Option<Value>, String> {
        call(name, args).map_err(|e| e.to_string())
    }

    #[test]
    fn coercions_answer_as_clojure() {
        let d = |x: f64| Value::double(x).unwrap();
        let table: Vec<(&str, Vec<Value>, Option<Value>)> = vec![
            ("double", vec![Value::Long(31)], Some(d(31.0))),
            ("long", vec![d(8.25)], Some(Value::Long(8))),
            ("long", vec![d(-8.75)], Some(Value::Long(-8))),
            ("int", vec![Value::Long(7)], Some(Value::Long(7))),
            ("bigint", vec![d(8.9)], Some(Value::BigInt(Box::new(8)))),
            ("num", vec![Value::Long(3)], Some(Value::Long(3))),
            ("boolean", vec![Value::Long(0)], Some(Value::Boolean(true))),
            (
                "boolean",
                vec![Value::Boolean(false)],
                Some(Value::Boolean(false)),
            ),
            (
                "inst-ms",
                vec![Value::Instant(1_705_312_800_000)],
                Some(Value::Long(1_705_312_800_000)),
            ),
            (
                "parse-long",
                vec![Value::string("-42")],
                Some(Value::Long(-42)),
            ),
            ("parse-long", vec![Value::string("4x")], None),
            ("parse-long", vec![Value::string("")], None),
            ("parse-double", vec![Value::string("2.5")], Some(d(2.5))),
            ("parse-double", vec![Value::string("abc")], None),
            (
                "parse-boolean",
                vec![Value::string("true")],
                Some(Value::Boolean(true)),
            ),
            ("parse-boolean", vec![Value::string("yes")], None),
            (
                "bit-and",
                vec![Value::Long(31), Value::Long(1)],
                Some(Value::Long(1)),
            ),
            (
                "bit-or",
                vec![Value::Long(4), Value::Long(1), Value::Long(2)],
                Some(Value::Long(7)),
            ),
            (
                "bit-xor",
                vec![Value::Long(6), Value::Long(3)],
                Some(Value::Long(5)),
            ),
            ("bit-not", vec![Value::Long(0)], Some(Value::Long(-1))),
            (
                "bit-shift-left",
                vec![Value::Long(1), Value::Long(65)],
                Some(Value::Long(2)),
            ),
            (
                "bit-shift-right",
                vec![Value::Long(-8), Value::Long(1)],
                Some(Value::Long(-4)),
            ),
            (
                "unsigned-bit-shift-right",
                vec![Value::Long(-1), Value::Long(60)],
                Some(Value::Long(15)),
            ),
        ];
        for (name, args, want) in table {
            assert_eq!(run(name, &args), Ok(want), "({name} {args:?})");
        }
        assert_eq!(
            run("bigdec", &[d(7.5)])
                .unwrap()
                .map(|v| super::super::edn(&v)),
            Some("7.5M".to_string())
        );
    }

    #[test]
    fn coercions_refuse_what_clojure_refuses() {
        let d = |x: f64| Value::double(x).unwrap();
        for (name, args) in [
            ("long", vec![d(1e300)]),
            ("int", vec![Value::Long(1 << 40)]),
            ("double", vec![Value::string("1")]),
            ("inst-ms", vec![Value::Long(1)]),
            ("bit-and", vec![d(1.0), Value::Long(1)]),
            ("bit-and", vec![Value::Long(1)]),
        ] {
            assert!(run(name, &args).is_err(), "({name} {args:?}) must fail");
        }
    }
}
