//! Collections: `vector list tuple set hash-set hash-map array-map`, `count`, `range`,
//! `empty? not-empty`, `contains?`, `get`, `nth first second last`, and `clojure.set`'s `union intersection
//! difference subset? superset?`.
//!
//! Vectors, lists and sequences are all tuples here (they are `=` in Clojure too, and print
//! as vectors). Strings count and index by UTF-16 units, as Java (`utf16`), and their items
//! are characters (`Value::Char`), as Clojure's sequence of a string; either half of a
//! character of two units is U+FFFD. Positions are any number, read as Java's `intValue()`
//! reads it where the lookup is on a string (`(nth "abc" 1.5)` is `\b`), and only integers on a
//! vector (`(get [1 2] 1.5)` is nil), as Clojure's `RT`.

use super::compare::equal;
use super::numbers::{self, apply, Num, Op};
use super::{Call, Out};
use crate::codec::Value;
use crate::query::error::{BuiltinProblem, QueryError};

/// The longest `range` a query may build (Clojure's ranges are lazy; ours are materialized).
pub const MAX_RANGE: usize = 10_000_000;

/// `vector`, `list`, `tuple`: a tuple of the arguments.
pub fn vector(c: &Call) -> Out {
    Ok(Some(Value::Tuple(
        c.args.iter().cloned().map(Some).collect(),
    )))
}

/// The items of a collection argument (a string's are its characters; a map's its entries
/// as `[k v]` tuples); `None` for a value that is not a collection. Clojure's `seq` of it, which
/// a collection binding (`[?x ...]`) also takes apart.
pub fn items(v: &Value) -> Option<Vec<Option<Value>>> {
    Some(match v {
        Value::Tuple(t) => t.clone(),
        Value::Set(s) => s.iter().cloned().map(Some).collect(),
        Value::Map(m) => m
            .iter()
            .map(|(k, v)| Some(Value::Tuple(vec![Some(k.clone()), Some(v.clone())])))
            .collect(),
        Value::String(s) => super::utf16::units(s)
            .map(|ch| Some(Value::Char(ch)))
            .collect(),
        _ => return None,
    })
}

/// `seq`: the items of a collection, nil when there are none.
pub fn seq(c: &Call) -> Out {
    c.exactly(1)?;
    if matches!(c.args[0], Value::Tuple(_)) {
        return Ok(size(&c.args[0])
            .is_some_and(|n| n > 0)
            .then(|| c.args[0].clone()));
    }
    let all = items(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection or string"))?;
    Ok((!all.is_empty()).then_some(Value::Tuple(all)))
}

/// `vec`: the items of a collection as a vector.
pub fn vec(c: &Call) -> Out {
    c.exactly(1)?;
    let all = items(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection or string"))?;
    Ok(Some(Value::Tuple(all)))
}

fn set_of(c: &Call, items: Vec<Option<Value>>) -> Out {
    let values = items
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            c.fail(BuiltinProblem::OutOfRange(
                "a set cannot hold nil here".into(),
            ))
        })?;
    Ok(Some(Value::set(values)))
}

/// `set`: the distinct items of a collection.
pub fn set(c: &Call) -> Out {
    c.exactly(1)?;
    let all = items(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection"))?;
    set_of(c, all)
}

/// `hash-set`: a set of the arguments.
pub fn hash_set(c: &Call) -> Out {
    set_of(c, c.args.iter().cloned().map(Some).collect())
}

/// `hash-map`, `array-map`: a map of alternating keys and values (entries sorted by key:
/// Clojure's array maps keep insertion order, which only printing shows).
pub fn hash_map(c: &Call) -> Out {
    if c.args.len() % 2 == 1 {
        let key = super::edn(&c.args[c.args.len() - 1]);
        return Err(c.fail(BuiltinProblem::OutOfRange(format!(
            "no value supplied for key {key}"
        ))));
    }
    let entries = c
        .args
        .chunks(2)
        .map(|kv| (kv[0].clone(), kv[1].clone()))
        .collect();
    Ok(Some(Value::map(entries)))
}

fn size(v: &Value) -> Option<usize> {
    Some(match v {
        Value::String(s) => super::utf16::len(s),
        Value::Tuple(t) => t.len(),
        Value::Set(s) => s.len(),
        Value::Map(m) => m.len(),
        Value::Bytes(b) => b.len(),
        _ => return None,
    })
}

/// `count`
pub fn count(c: &Call) -> Out {
    c.exactly(1)?;
    let n = size(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection or string"))?;
    Ok(Some(Value::Long(n as i64)))
}

/// `empty?`
pub fn is_empty(c: &Call) -> Out {
    c.exactly(1)?;
    let n = size(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection or string"))?;
    Ok(Some(Value::Boolean(n == 0)))
}

/// `not-empty`: the collection, or nil when it is empty.
pub fn not_empty(c: &Call) -> Out {
    c.exactly(1)?;
    let n = size(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection or string"))?;
    Ok((n > 0).then(|| c.args[0].clone()))
}

/// A vector's index argument: an integer (a long or a bigint) within `0..len`.
fn index(v: &Value, len: usize) -> Option<usize> {
    match Num::of(v)? {
        Num::Long(i) => usize::try_from(i).ok().filter(|i| *i < len),
        Num::Big(i) => usize::try_from(i).ok().filter(|i| *i < len),
        _ => None,
    }
}

/// A string's index argument (argument `at`, any number read as Java's `intValue()`) within
/// `0..len`; `Ok(None)` for a position outside, an error for a key that is no number.
fn string_index(c: &Call, at: usize, len: usize) -> Result<Option<usize>, QueryError> {
    let i = c.java_int(at)?;
    Ok(usize::try_from(i).ok().filter(|i| *i < len))
}

/// `contains?`: a key of a map, an element of a set, an index of a vector or string; nil
/// contains nothing. A string's key must be a number (Clojure refuses any other).
pub fn contains(c: &Call) -> Out {
    c.exactly(2)?;
    let (coll, key) = (&c.args[0], &c.args[1]);
    let found = match coll {
        Value::Set(s) => s.iter().any(|x| equal(x, key)),
        Value::Map(m) => m.iter().any(|(k, _)| equal(k, key)),
        Value::Tuple(t) => index(key, t.len()).is_some(),
        Value::String(s) if Num::of(key).is_some() => {
            string_index(c, 1, super::utf16::len(s))?.is_some()
        }
        _ => return Err(c.wrong_type(0, "a set, map, vector or string")),
    };
    Ok(Some(Value::Boolean(found)))
}

/// `get`: the value at a key, element or index, else the default (or nil).
pub fn get(c: &Call) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let (coll, key) = (&c.args[0], &c.args[1]);
    let found = match coll {
        Value::Map(m) => m
            .iter()
            .find(|(k, _)| equal(k, key))
            .map(|(_, v)| Some(v.clone())),
        Value::Set(s) => s.iter().find(|x| equal(x, key)).map(|x| Some(x.clone())),
        Value::Tuple(t) => index(key, t.len()).map(|i| t[i].clone()),
        Value::String(s) if Num::of(key).is_some() => string_index(c, 1, super::utf16::len(s))?
            .and_then(|i| super::utf16::unit_at(s, i))
            .map(|ch| Some(Value::Char(ch))),
        _ => None,
    };
    Ok(match found {
        Some(v) => v,
        None => c.args.get(2).cloned(),
    })
}

/// `nth`: the item at an index of a vector or string; past the end the third argument, or
/// an error without one (Clojure's `IndexOutOfBoundsException`).
pub fn nth(c: &Call) -> Out {
    c.arity(2, Some(3), "2 or 3")?;
    let at = c.java_int(1)?;
    let all = match &c.args[0] {
        Value::Tuple(_) | Value::String(_) => items(&c.args[0]).unwrap_or_default(),
        _ => return Err(c.wrong_type(0, "a vector or a string")),
    };
    match usize::try_from(at).ok().filter(|i| *i < all.len()) {
        Some(i) => Ok(all[i].clone()),
        None if c.args.len() == 3 => Ok(Some(c.args[2].clone())),
        None => Err(c.fail(BuiltinProblem::OutOfRange(format!(
            "index {} out of bounds for {} items",
            super::edn(&c.args[1]),
            all.len()
        )))),
    }
}

/// The item `pick` chooses of a collection's items (nil for an empty one).
fn one_item(c: &Call, pick: fn(&[Option<Value>]) -> Option<&Option<Value>>) -> Out {
    c.exactly(1)?;
    let all = items(&c.args[0]).ok_or_else(|| c.wrong_type(0, "a collection"))?;
    Ok(pick(&all).cloned().flatten())
}

/// `first`
pub fn first(c: &Call) -> Out {
    one_item(c, |all| all.first())
}

/// `second`
pub fn second(c: &Call) -> Out {
    one_item(c, |all| all.get(1))
}

/// `last`
pub fn last(c: &Call) -> Out {
    one_item(c, |all| all.last())
}

/// `range`: `(range end)`, `(range start end)`, `(range start end step)`, as a tuple.
pub fn range(c: &Call) -> Out {
    c.arity(1, Some(3), "1, 2 or 3")?;
    let num = |i: usize| Num::of(&c.args[i]).ok_or_else(|| c.wrong_type(i, "a number"));
    let (start, end, step) = match c.args.len() {
        1 => (Num::Long(0), num(0)?, Num::Long(1)),
        2 => (num(0)?, num(1)?, Num::Long(1)),
        _ => (num(0)?, num(1)?, num(2)?),
    };
    if step.is_zero() {
        return Err(c.fail(BuiltinProblem::OutOfRange(
            "a step of 0 makes an endless range".into(),
        )));
    }
    let up = step.signum() > 0;
    let mut out = Vec::new();
    let mut x = start;
    loop {
        let o = numbers::cmp(&x, &end);
        if (up && o != std::cmp::Ordering::Less) || (!up && o != std::cmp::Ordering::Greater) {
            break;
        }
        if out.len() == MAX_RANGE {
            return Err(c.fail(BuiltinProblem::OutOfRange(format!(
                "a range here has at most {MAX_RANGE} elements"
            ))));
        }
        let next = match apply(Op::Add, &x, &step) {
            Ok(next) => next,
            // The next would be past every long, so past `end` too: `x` is the last (as in
            // Clojure, whose `(range 9223372036854775800 9223372036854775807 3)` has three).
            Err(BuiltinProblem::Overflow(_)) => {
                out.push(Some(into_value(c, x)?));
                break;
            }
            Err(p) => return Err(c.fail(p)),
        };
        out.push(Some(into_value(c, x)?));
        x = next;
    }
    Ok(Some(Value::Tuple(out)))
}

fn into_value(c: &Call, n: Num) -> Result<Value, QueryError> {
    n.into_value().map_err(|p| c.fail(p))
}

/// The elements of a set argument.
fn set_arg<'a>(c: &'a Call, i: usize) -> Result<&'a [Value], QueryError> {
    match &c.args[i] {
        Value::Set(s) => Ok(s),
        _ => Err(c.wrong_type(i, "a set")),
    }
}

fn member(x: &Value, s: &[Value]) -> bool {
    s.iter().any(|y| equal(x, y))
}

/// `clojure.set/union`
pub fn union(c: &Call) -> Out {
    let mut all = Vec::new();
    for i in 0..c.args.len() {
        all.extend(set_arg(c, i)?.iter().cloned());
    }
    Ok(Some(Value::set(all)))
}

/// `clojure.set/intersection`: the elements of the first set that every other set has.
pub fn intersection(c: &Call) -> Out {
    keep_from_first(c, |x, others| others.iter().all(|s| member(x, s)))
}

/// `clojure.set/difference`: the elements of the first set that no other set has.
pub fn difference(c: &Call) -> Out {
    keep_from_first(c, |x, others| !others.iter().any(|s| member(x, s)))
}

/// The elements `x` of the first set argument for which `keep(x, the other sets)` holds.
fn keep_from_first(c: &Call, keep: impl Fn(&Value, &[&[Value]]) -> bool) -> Out {
    c.arity(1, None, "at least 1")?;
    let sets = (0..c.args.len())
        .map(|i| set_arg(c, i))
        .collect::<Result<Vec<_>, _>>()?;
    let kept = sets[0]
        .iter()
        .filter(|x| keep(x, &sets[1..]))
        .cloned()
        .collect();
    Ok(Some(Value::set(kept)))
}

/// `clojure.set/subset?`
pub fn is_subset(c: &Call) -> Out {
    c.exactly(2)?;
    let (a, b) = (set_arg(c, 0)?, set_arg(c, 1)?);
    Ok(Some(Value::Boolean(a.iter().all(|x| member(x, b)))))
}

/// `clojure.set/superset?`
pub fn is_superset(c: &Call) -> Out {
    c.exactly(2)?;
    let (a, b) = (set_arg(c, 0)?, set_arg(c, 1)?);
    Ok(Some(Value::Boolean(b.iter().all(|x| member(x, a)))))
}
