//! Built-in predicates and functions (Datascript's set).

use std::cmp::Ordering;
use std::sync::Arc;

use super::error::QueryError;
use crate::codec::{Keyword, Value};

/// Compares values; numbers of different types compare numerically.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.value_type() != b.value_type() => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

fn bad(name: &str, message: impl Into<String>) -> QueryError {
    QueryError::BadArguments {
        name: name.to_string(),
        message: message.into(),
    }
}

fn long(name: &str, v: &Value) -> Result<i64, QueryError> {
    match v {
        Value::Long(n) => Ok(*n),
        Value::Ref(n) => Ok(*n as i64),
        other => Err(bad(name, format!("expected a long, got {other}"))),
    }
}

fn text<'a>(name: &str, v: &'a Value) -> Result<&'a str, QueryError> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(bad(name, format!("expected a string, got {other}"))),
    }
}

/// Whether `name` is a built-in predicate or function.
pub fn is_builtin(name: &str) -> bool {
    call(name, &[]).map_or_else(
        |e| !matches!(e, QueryError::UnknownFunction { .. }),
        |_| true,
    )
}

fn arith(
    name: &str,
    args: &[Value],
    int: fn(i64, i64) -> Option<i64>,
    float: fn(f64, f64) -> f64,
) -> Result<Value, QueryError> {
    let all_long = args.iter().all(|a| matches!(a, Value::Long(_)));
    if all_long {
        let mut it = args.iter().map(|a| long(name, a));
        let mut acc = match it.next() {
            Some(x) => x?,
            None => return Err(bad(name, "needs arguments")),
        };
        for x in it {
            acc = int(acc, x?).ok_or_else(|| bad(name, "integer overflow or division by zero"))?;
        }
        return Ok(Value::Long(acc));
    }
    let mut it = args.iter().map(|a| {
        a.as_f64()
            .ok_or_else(|| bad(name, format!("not a number: {a}")))
    });
    let mut acc = match it.next() {
        Some(x) => x?,
        None => return Err(bad(name, "needs arguments")),
    };
    for x in it {
        acc = float(acc, x?);
    }
    Value::double(acc).ok_or_else(|| bad(name, "result is not a number"))
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Boolean(false))
}

/// Calls a built-in. Predicates return `Value::Boolean`.
pub fn call(name: &str, args: &[Value]) -> Result<Value, QueryError> {
    let b = Value::Boolean;
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(bad(
                name,
                format!("takes {n} arguments, got {}", args.len()),
            ))
        }
    };
    let chain = |ok: fn(Ordering) -> bool| -> Result<Value, QueryError> {
        Ok(b(args.windows(2).all(|w| ok(compare(&w[0], &w[1])))))
    };
    Ok(match name {
        "=" | "==" => chain(|o| o == Ordering::Equal)?,
        "not=" | "!=" => b(!args
            .windows(2)
            .all(|w| compare(&w[0], &w[1]) == Ordering::Equal)),
        "<" => chain(|o| o == Ordering::Less)?,
        ">" => chain(|o| o == Ordering::Greater)?,
        "<=" => chain(|o| o != Ordering::Greater)?,
        ">=" => chain(|o| o != Ordering::Less)?,
        "+" => arith(name, args, i64::checked_add, |a, b| a + b)?,
        "-" if args.len() == 1 => arith(
            name,
            &[Value::Long(0), args[0].clone()],
            i64::checked_sub,
            |a, b| a - b,
        )?,
        "-" => arith(name, args, i64::checked_sub, |a, b| a - b)?,
        "*" => arith(name, args, i64::checked_mul, |a, b| a * b)?,
        "/" => {
            arity(2)?;
            match (&args[0], &args[1]) {
                (Value::Long(x), Value::Long(y)) if *y != 0 && x % y == 0 => Value::Long(x / y),
                _ => arith(name, args, |_, _| None, |a, b| a / b)?,
            }
        }
        "quot" => arith(name, args, i64::checked_div, |a, b| (a / b).trunc())?,
        "rem" => arith(name, args, i64::checked_rem, |a, b| a % b)?,
        "mod" => arith(
            name,
            args,
            |a, b| a.checked_rem_euclid(b),
            |a, b| a.rem_euclid(b),
        )?,
        "inc" => {
            arity(1)?;
            arith(
                name,
                &[args[0].clone(), Value::Long(1)],
                i64::checked_add,
                |a, b| a + b,
            )?
        }
        "dec" => {
            arity(1)?;
            arith(
                name,
                &[args[0].clone(), Value::Long(1)],
                i64::checked_sub,
                |a, b| a - b,
            )?
        }
        "max" => args
            .iter()
            .max_by(|a, b| compare(a, b))
            .cloned()
            .ok_or_else(|| bad(name, "needs arguments"))?,
        "min" => args
            .iter()
            .min_by(|a, b| compare(a, b))
            .cloned()
            .ok_or_else(|| bad(name, "needs arguments"))?,
        "abs" => {
            arity(1)?;
            match &args[0] {
                Value::Long(n) => {
                    Value::Long(n.checked_abs().ok_or_else(|| bad(name, "overflow"))?)
                }
                other => Value::double(
                    other
                        .as_f64()
                        .ok_or_else(|| bad(name, "not a number"))?
                        .abs(),
                )
                .ok_or_else(|| bad(name, "NaN"))?,
            }
        }
        "zero?" | "pos?" | "neg?" => {
            arity(1)?;
            let x = args[0].as_f64().ok_or_else(|| bad(name, "not a number"))?;
            b(match name {
                "zero?" => x == 0.0,
                "pos?" => x > 0.0,
                _ => x < 0.0,
            })
        }
        "even?" | "odd?" => {
            arity(1)?;
            let n = long(name, &args[0])?;
            b((n % 2 == 0) == (name == "even?"))
        }
        "true?" => b(args.first() == Some(&Value::Boolean(true))),
        "false?" => b(args.first() == Some(&Value::Boolean(false))),
        "some?" => b(!args.is_empty()),
        "not" => {
            arity(1)?;
            b(!truthy(&args[0]))
        }
        "identity" => {
            arity(1)?;
            args[0].clone()
        }
        "str" => Value::String(Arc::from(args.iter().map(display).collect::<String>())),
        "subs" => {
            let s = text(
                name,
                args.first().ok_or_else(|| bad(name, "needs a string"))?,
            )?;
            let chars: Vec<char> = s.chars().collect();
            let start = long(name, args.get(1).ok_or_else(|| bad(name, "needs a start"))?)?;
            let end = match args.get(2) {
                Some(e) => long(name, e)?,
                None => chars.len() as i64,
            };
            if start < 0 || end < start || end as usize > chars.len() {
                return Err(bad(
                    name,
                    format!("range {start}..{end} outside a string of {}", chars.len()),
                ));
            }
            Value::String(Arc::from(
                chars[start as usize..end as usize]
                    .iter()
                    .collect::<String>(),
            ))
        }
        "count" => {
            arity(1)?;
            Value::Long(match &args[0] {
                Value::String(s) => s.chars().count() as i64,
                Value::Tuple(t) => t.len() as i64,
                Value::Bytes(x) => x.len() as i64,
                other => return Err(bad(name, format!("cannot count {other}"))),
            })
        }
        "clojure.string/starts-with?" | "str/starts-with?" | "starts-with?" => {
            arity(2)?;
            b(text(name, &args[0])?.starts_with(text(name, &args[1])?))
        }
        "clojure.string/ends-with?" | "str/ends-with?" | "ends-with?" => {
            arity(2)?;
            b(text(name, &args[0])?.ends_with(text(name, &args[1])?))
        }
        "clojure.string/includes?" | "str/includes?" | "includes?" => {
            arity(2)?;
            b(text(name, &args[0])?.contains(text(name, &args[1])?))
        }
        "clojure.string/blank?" | "str/blank?" => {
            arity(1)?;
            b(text(name, &args[0])?.trim().is_empty())
        }
        "clojure.string/lower-case" | "str/lower-case" | "lower-case" => {
            arity(1)?;
            Value::String(Arc::from(text(name, &args[0])?.to_lowercase()))
        }
        "clojure.string/upper-case" | "str/upper-case" | "upper-case" => {
            arity(1)?;
            Value::String(Arc::from(text(name, &args[0])?.to_uppercase()))
        }
        "re-find" | "re-matches" => {
            return Err(bad(name, "regular expressions are not supported"));
        }
        "keyword" => {
            arity(1)?;
            Value::Keyword(Keyword::parse(text(name, &args[0])?))
        }
        "name" => {
            arity(1)?;
            match &args[0] {
                Value::Keyword(k) | Value::Symbol(k) => Value::String(Arc::from(k.name())),
                Value::String(s) => Value::String(s.clone()),
                other => return Err(bad(name, format!("no name for {other}"))),
            }
        }
        "namespace" => {
            arity(1)?;
            match &args[0] {
                Value::Keyword(k) | Value::Symbol(k) => match k.namespace() {
                    Some(ns) => Value::String(Arc::from(ns)),
                    None => return Err(bad(name, "no namespace")),
                },
                other => return Err(bad(name, format!("no namespace for {other}"))),
            }
        }
        "vector" | "list" | "tuple" => Value::Tuple(args.iter().cloned().map(Some).collect()),
        "untuple" => {
            arity(1)?;
            args[0].clone()
        }
        "ground" => {
            arity(1)?;
            args[0].clone()
        }
        _ => {
            return Err(QueryError::UnknownFunction {
                name: name.to_string(),
            })
        }
    })
}

/// How `str` shows a value (strings without quotes, keywords with their colon).
pub fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        other => other.to_string(),
    }
}
