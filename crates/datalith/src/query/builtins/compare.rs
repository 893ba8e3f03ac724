//! Equality and order.
//!
//! - `=` / `not=` / `!=` are Clojure's equality: numbers are equal only within a category
//!   (integers, ratios, decimals, floating point): `(= 1 1N)` is true, `(= 1 1.0)` false.
//!   Entity ids are longs, so `(= ?e 17592186045418)` holds.
//! - `==` compares numbers across categories (`(== 1 1.0)` is true) and refuses non-numbers.
//! - `< > <= >=` and `compare` use Datomic's order (`compare` answering Java's `compareTo`'s
//!   number for two strings, keywords or symbols): numbers numerically across kinds
//!   (`(< 1/2 0.6)`), and before anything else (entity ids too, as Datomic's longs);
//!   anything else by value order, also across types (`(< 1 "a")` holds in Datomic too). Datomic's comparisons take exactly two arguments; these also chain more,
//!   as Clojure's do.

use std::cmp::Ordering;

use super::numbers::{self, Num};
use super::{Call, Out};
use crate::codec::Value;

/// Datomic's order: numbers numerically across kinds, everything else by value order.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    // Doubles and longs, the numbers a range test meets on every row, compared as the tower
    // compares them (`numbers::cmp`: longs exactly, doubles and a long with a double by
    // `total_cmp` of the doubles) without building its numbers.
    match (a, b) {
        (Value::Long(x), Value::Long(y)) => x.cmp(y),
        (Value::Double(x), Value::Double(y)) => x.get().total_cmp(&y.get()),
        (Value::Double(x), Value::Long(y)) => x.get().total_cmp(&(*y as f64)),
        (Value::Long(x), Value::Double(y)) => (*x as f64).total_cmp(&y.get()),
        // Two strings: value order is the strings' order (no number to look for).
        (Value::String(x), Value::String(y)) => x.cmp(y),
        // Two entity ids, as a join's or a probe's sort meets them: ids order as the longs
        // they are (and those past a long's range by value order, the same order).
        (Value::Ref(x), Value::Ref(y)) => x.cmp(y),
        _ => compare_any(a, b),
    }
}

/// [`compare`] through the numeric tower, whatever the values.
fn compare_any(a: &Value, b: &Value) -> Ordering {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => numbers::cmp(&x, &y),
        // A number before anything else, as in Datomic (an entity id is a number there:
        // `(< ?color-ref :color/red)` holds for every ref).
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        _ => match (a, b) {
            (Value::Tuple(x), Value::Tuple(y)) => {
                for (p, q) in x.iter().zip(y) {
                    let o = match (p, q) {
                        (Some(p), Some(q)) => compare(p, q),
                        (p, q) => p.is_some().cmp(&q.is_some()),
                    };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                x.len().cmp(&y.len())
            }
            _ => a.cmp(b),
        },
    }
}

/// Clojure's `=` on two values.
pub fn equal(a: &Value, b: &Value) -> bool {
    // Two strings, the common test on text: no number to look for.
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Ref(x), Value::Ref(y)) => x == y,
        _ => equal_any(a, b),
    }
}

/// [`equal`] through the numeric tower, whatever the values.
fn equal_any(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        return numbers::category(&x) == numbers::category(&y)
            && numbers::cmp(&x, &y) == Ordering::Equal;
    }
    match (a, b) {
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| match (p, q) {
                    (Some(p), Some(q)) => equal(p, q),
                    (p, q) => p.is_none() && q.is_none(),
                })
        }
        (Value::Set(x), Value::Set(y)) => {
            x.len() == y.len() && x.iter().all(|p| y.iter().any(|q| equal(p, q)))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| equal(k, k2) && equal(v, v2)))
        }
        _ => a == b,
    }
}

fn all_pairs(c: &Call, ok: impl Fn(&Value, &Value) -> bool) -> bool {
    c.args.windows(2).all(|w| ok(&w[0], &w[1]))
}

/// `=`
pub fn eq(c: &Call) -> Out {
    c.arity(1, None, "at least 1")?;
    Ok(Some(Value::Boolean(all_pairs(c, equal))))
}

/// `not=`, `!=`
pub fn not_eq(c: &Call) -> Out {
    c.arity(1, None, "at least 1")?;
    Ok(Some(Value::Boolean(!all_pairs(c, equal))))
}

/// `==`
pub fn num_eq(c: &Call) -> Out {
    c.arity(1, None, "at least 1")?;
    let ns = (0..c.args.len())
        .map(|i| Num::of(&c.args[i]).ok_or_else(|| c.wrong_type(i, "a number")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Value::Boolean(
        ns.windows(2)
            .all(|w| numbers::cmp(&w[0], &w[1]) == Ordering::Equal),
    )))
}

/// Datomic's query `<`, `>`, `<=`, `>=` take exactly two arguments (Clojure's take more;
/// Datomic refuses `(< 1 ?x 9)` with an arity error, and so do we).
fn chain(c: &Call, ok: fn(Ordering) -> bool) -> Out {
    c.exactly(2)?;
    Ok(Some(Value::Boolean(all_pairs(c, |a, b| ok(compare(a, b))))))
}

/// `<`
pub fn lt(c: &Call) -> Out {
    chain(c, |o| o == Ordering::Less)
}

/// `>`
pub fn gt(c: &Call) -> Out {
    chain(c, |o| o == Ordering::Greater)
}

/// `<=`
pub fn le(c: &Call) -> Out {
    chain(c, |o| o != Ordering::Greater)
}

/// `>=`
pub fn ge(c: &Call) -> Out {
    chain(c, |o| o != Ordering::Less)
}

/// `compare`: Clojure's, which answers what Java's `compareTo` does: for two strings,
/// keywords or symbols the difference of the first UTF-16 units that differ, or of the
/// lengths (`(compare "Ann" "Fay")` is -5); -1, 0 or 1 otherwise.
pub fn compare_fn(c: &Call) -> Out {
    c.exactly(2)?;
    Ok(Some(Value::Long(compare_to(&c.args[0], &c.args[1]))))
}

/// Java's `compareTo` of two values (see [`compare_fn`]); two tuples answer what their first
/// differing elements answer (checked on the peer: `(compare [1 "uno"] [1 "one"])` is 6), or
/// -1 or 1 by their lengths.
fn compare_to(a: &Value, b: &Value) -> i64 {
    match (a, b) {
        (Value::String(a), Value::String(b)) => text_compare_to(a, b),
        (Value::Keyword(a), Value::Keyword(b)) | (Value::Symbol(a), Value::Symbol(b)) => {
            named_compare_to(a, b)
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            for (p, q) in x.iter().zip(y) {
                let n = match (p, q) {
                    (Some(p), Some(q)) => compare_to(p, q),
                    (p, q) => p.is_some().cmp(&q.is_some()) as i64,
                };
                if n != 0 {
                    return n;
                }
            }
            x.len().cmp(&y.len()) as i64
        }
        (a, b) => compare(a, b) as i64,
    }
}

/// Java's `String.compareTo`.
fn text_compare_to(a: &str, b: &str) -> i64 {
    let (mut x, mut y) = (a.encode_utf16(), b.encode_utf16());
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p != q => return i64::from(p) - i64::from(q),
            (Some(_), Some(_)) => {}
            _ => return super::utf16::len(a) as i64 - super::utf16::len(b) as i64,
        }
    }
}

/// Clojure's `Symbol.compareTo` (a keyword compares its symbol): no namespace first, then
/// the namespaces, then the names, each as Java compares strings.
fn named_compare_to(a: &crate::codec::Keyword, b: &crate::codec::Keyword) -> i64 {
    match (a.namespace(), b.namespace()) {
        (None, Some(_)) => -1,
        (Some(_), None) => 1,
        (Some(p), Some(q)) if p != q => text_compare_to(p, q),
        _ => text_compare_to(a.name(), b.name()),
    }
}

/// `identical?`: Java's identity, approximated by equal values of one type (Java caches
/// small longs and interns literal strings, which is where queries meet it).
pub fn identical(c: &Call) -> Out {
    c.exactly(2)?;
    Ok(Some(Value::Boolean(c.args[0] == c.args[1])))
}

/// `-differ?` (Datascript's, not Datomic's): whether the first half of the arguments
/// differs from the second half.
pub fn differ(c: &Call) -> Out {
    let half = c.args.len() / 2;
    let (a, b) = c.args.split_at(half);
    Ok(Some(Value::Boolean(
        a.len() != b.len() || a.iter().zip(b).any(|(x, y)| !equal(x, y)),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare` answers what Clojure's does (Java's `compareTo`), checked against Clojure
    /// 1.11 by hand.
    #[test]
    fn compare_answers_javas_compare_to() {
        use super::super::call;
        use crate::codec::Keyword;
        let (s, l, k) = (Value::string, Value::Long, |t: &str| {
            Value::Keyword(Keyword::parse(t))
        });
        let table = [
            (s("Ann"), s("Fay"), -5),
            (s("Fay"), s("Ann"), 5),
            (s("Fay"), s("Fay"), 0),
            (s("Fa"), s("Fay"), -1),
            (s("Fay"), s(""), 3),
            (s("a🙂"), s("ab"), 0xD83D - 0x62),
            (s("é"), s("e"), 0xE9 - 0x65),
            (k(":a/x"), k(":b/x"), -1),
            (k(":person/name"), k(":person/age"), 13),
            (k(":x"), k(":a/x"), -1),
            (k(":a/x"), k(":x"), 1),
            (k(":ab"), k(":a"), 1),
            (l(3), l(10), -1),
            (l(10), l(3), 1),
            (Value::double(2.5).unwrap(), l(2), 1),
            (Value::Boolean(false), Value::Boolean(true), -1),
        ];
        for (a, b, want) in table {
            let got = call("compare", &[a.clone(), b.clone()]).unwrap();
            assert_eq!(got, Some(l(want)), "(compare {a} {b})");
        }
    }

    /// The shortcuts for doubles, longs, strings and entity ids order every pair as the tower
    /// does.
    #[test]
    fn plain_numbers_compare_as_the_tower_compares_them() {
        let d = |x: f64| Value::double(x).unwrap();
        let values = [
            Value::Long(0),
            Value::Long(-1),
            Value::Long(3),
            Value::Long(i64::MAX),
            Value::Long(i64::MIN),
            Value::Long(9_007_199_254_740_993),
            d(0.0),
            d(-0.0),
            d(2.5),
            d(3.0),
            d(-1.0),
            d(9_007_199_254_740_992.0),
            d(9.223372036854776e18),
            d(f64::INFINITY),
            d(f64::NEG_INFINITY),
            Value::string(""),
            Value::string("13"),
            Value::string("131"),
            Value::string("é"),
            Value::Boolean(true),
            Value::Ref(0),
            Value::Ref(3),
            Value::Ref(17_592_186_045_418),
            Value::Ref(i64::MAX as u64),
            Value::Ref(i64::MAX as u64 + 1),
            Value::Ref(u64::MAX),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(compare(a, b), compare_any(a, b), "{a} {b}");
                // Equality's shortcuts for strings and ids agree with its general path.
                assert_eq!(equal(a, b), equal_any(a, b), "{a} {b}");
            }
        }
    }
}
