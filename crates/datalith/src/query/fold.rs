//! Aggregates folded one row at a time, so that grouping never holds a group's members.
//!
//! Why: an aggregate over millions of rows (TPC-H Q1: four groups of 1.5M line items each,
//! ten aggregates) used to gather each group's member rows and then copy every aggregated
//! column into a bag of its own, so the relation was held again once per aggregate and a
//! scale-factor-1 run stopped at the memory limit. `count`, `sum`, `avg`, `min` and `max`
//! need only a running value; the other aggregates (`median`, `variance`, `count-distinct`,
//! `distinct`, the n-ary `min`/`max`, `rand`, `sample`, a user's) still keep their bag, which
//! [`aggregate`] reads.
//!
//! A fold gives exactly what [`aggregate`] gives over the same values in the same order (the
//! relation's order): the same number, and the same error for the first value that fails. Its
//! tests check the two against each other.

use std::collections::HashMap;
use std::sync::Arc;

use super::builtins::compare;
use super::error::QueryError;
use super::find::{aggregate, UserAggregate};
use crate::codec::Value;
use crate::edn::{edn_from_value, Edn};

/// One aggregate's running state within one group.
#[derive(Debug)]
pub enum Fold {
    /// `count`: the members.
    Count(i64),
    /// `sum`: see [`Sum`].
    Sum(Sum),
    /// `avg`: the running total as doubles, the members, the first value that was no
    /// number, and the checked total of the longs while every value is one (`None` once it
    /// overflowed: Datomic's `avg` sums with `+` first, which fails there).
    Avg {
        total: f64,
        n: usize,
        bad: Option<Value>,
        longs: Option<Option<i64>>,
    },
    /// `min` or `max` (no count): the best so far.
    Best { min: bool, best: Option<Value> },
    /// Every other aggregate: the values, in order.
    Bag(Vec<Value>),
}

/// `sum` as [`aggregate`] computes it: over longs only, a checked `i64` total ("overflow" past
/// its range); otherwise Datomic's `+` from 0 in order, whose first refusal is the answer.
#[derive(Debug)]
pub struct Sum {
    /// Whether every value so far was a long.
    all_long: bool,
    /// The checked total of the longs, `None` once it overflowed.
    longs: Option<i64>,
    /// `(+ ... (+ (+ 0 v1) v2) ...)`, or the error of the first `+` that refused.
    general: Result<Value, QueryError>,
}

impl Fold {
    /// The starting state of the aggregate `name` (with `args`, its constant arguments).
    pub fn new(name: &str, args: &[Value]) -> Fold {
        match (name, args) {
            ("count", _) => Fold::Count(0),
            ("sum", _) => Fold::Sum(Sum {
                all_long: true,
                longs: Some(0),
                general: Ok(Value::Long(0)),
            }),
            // Rust's `f64` sum starts from -0.0 (so that a sum of -0.0 stays -0.0).
            ("avg", _) => Fold::Avg {
                total: -0.0,
                n: 0,
                bad: None,
                longs: Some(Some(0)),
            },
            ("min" | "max", []) => Fold::Best {
                min: name == "min",
                best: None,
            },
            _ => Fold::Bag(Vec::new()),
        }
    }

    /// Whether this fold keeps every value (and so holds memory for each).
    pub fn keeps_values(&self) -> bool {
        matches!(self, Fold::Bag(_))
    }

    /// Adds the next member's value.
    pub fn add(&mut self, v: &Value) {
        match self {
            Fold::Count(n) => *n += 1,
            Fold::Sum(s) => s.add(v),
            Fold::Avg {
                total,
                n,
                bad,
                longs,
            } => {
                *n += 1;
                *longs = match (v, *longs) {
                    (Value::Long(x), Some(sum)) => Some(sum.and_then(|s| s.checked_add(*x))),
                    _ => None,
                };
                if bad.is_none() {
                    match v.as_f64() {
                        Some(x) => *total += x,
                        None => *bad = Some(v.clone()),
                    }
                }
            }
            // `Iterator::min_by` keeps the first of equal values, `max_by` the last.
            Fold::Best { min, best } => {
                let better = match best {
                    None => true,
                    Some(b) if *min => compare(v, b) == std::cmp::Ordering::Less,
                    Some(b) => compare(v, b) != std::cmp::Ordering::Less,
                };
                if better {
                    *best = Some(v.clone());
                }
            }
            Fold::Bag(vals) => vals.push(v.clone()),
        }
    }

    /// The aggregate's value.
    pub fn finish(
        self,
        name: &str,
        args: &[Value],
        user: &HashMap<String, Arc<UserAggregate>>,
    ) -> Result<Edn, QueryError> {
        match self {
            Fold::Count(n) => Ok(Edn::Long(n)),
            Fold::Sum(s) => s.finish(),
            Fold::Avg { n: 0, .. } => Ok(Edn::Nil),
            Fold::Avg { bad: Some(v), .. } => Err(QueryError::BadArguments {
                name: name.to_string(),
                message: format!("{v} is not a number"),
            }),
            Fold::Avg {
                longs: Some(None), ..
            } => Err(long_overflow(name)),
            Fold::Avg { total, n, .. } => Ok(Edn::Double(total / n as f64)),
            Fold::Best { best, .. } => Ok(best.as_ref().map_or(Edn::Nil, edn_from_value)),
            Fold::Bag(vals) => aggregate(name, args, &vals, user),
        }
    }
}

/// The error of an aggregate whose longs' total leaves a long (Clojure's `+` of longs is
/// checked: `ArithmeticException: long overflow`).
pub fn long_overflow(name: &str) -> QueryError {
    QueryError::BadArguments {
        name: name.to_string(),
        message: "long overflow".into(),
    }
}

impl Sum {
    fn add(&mut self, v: &Value) {
        match v {
            Value::Long(n) => self.longs = self.longs.and_then(|s| s.checked_add(*n)),
            _ => self.all_long = false,
        }
        let Ok(acc) = &mut self.general else { return };
        // Longs and doubles without the general `+` (which would give the same): a sum of
        // doubles starts from the long 0, so every group's first value is one of these.
        match super::builtins::plain_add(acc, v) {
            Some(super::builtins::Plain::Long(n)) => {
                *acc = Value::Long(n);
                return;
            }
            Some(super::builtins::Plain::Double(x)) => {
                if let Some(s) = Value::double(x) {
                    *acc = s;
                    return;
                }
            }
            None => {}
        }
        let next = super::builtins::call("+", &[acc.clone(), v.clone()]);
        self.general = next.map(|s| s.unwrap_or(Value::Long(0)));
    }

    fn finish(self) -> Result<Edn, QueryError> {
        if self.all_long {
            return self
                .longs
                .map(Edn::Long)
                .ok_or_else(|| long_overflow("sum"));
        }
        self.general.map(|v| edn_from_value(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(name: &str, args: &[Value], vals: &[Value]) -> Result<Edn, QueryError> {
        let mut f = Fold::new(name, args);
        for v in vals {
            f.add(v);
        }
        f.finish(name, args, &HashMap::new())
    }

    fn d(x: f64) -> Value {
        Value::double(x).unwrap()
    }

    /// Bags of values, each folded and aggregated whole: the two must agree, errors too.
    #[test]
    fn a_fold_gives_what_the_whole_bag_gives() {
        let big = Value::BigInt(Box::new(1 << 70));
        let bags: Vec<Vec<Value>> = vec![
            vec![],
            vec![Value::Long(3)],
            vec![Value::Long(1), Value::Long(2), Value::Long(-7)],
            vec![Value::Long(i64::MAX), Value::Long(1)],
            vec![Value::Long(i64::MAX), Value::Long(1), d(1.5)],
            vec![Value::Long(i64::MAX), d(1.5), Value::Long(1)],
            vec![d(0.1), d(0.2), d(0.3), Value::Long(4)],
            vec![d(-0.0)],
            vec![d(-0.0), d(-0.0)],
            vec![d(2.5)],
            vec![Value::Long(9_007_199_254_740_993), d(1.0)],
            vec![d(1e308), Value::Long(i64::MAX), d(1e308)],
            vec![d(f64::INFINITY), Value::Long(-1)],
            vec![d(f64::INFINITY), d(f64::NEG_INFINITY)],
            vec![Value::Long(2), big.clone(), Value::Long(3)],
            vec![Value::Long(1), Value::Long(1), Value::Long(1)],
            vec![Value::Long(1), d(1.0), Value::Long(1)],
            vec![d(2.5), Value::Long(1), d(1.0), Value::Long(7)],
            vec![Value::String("a".into()), Value::Long(1)],
            vec![Value::Long(1), Value::String("a".into())],
        ];
        for name in [
            "count",
            "sum",
            "avg",
            "min",
            "max",
            "median",
            "count-distinct",
        ] {
            for vals in &bags {
                let whole = aggregate(name, &[], vals, &HashMap::new());
                let fold = folded(name, &[], vals);
                match (&whole, &fold) {
                    (Ok(Edn::Double(a)), Ok(Edn::Double(b))) => {
                        assert_eq!(a.to_bits(), b.to_bits(), "{name} of {vals:?}")
                    }
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{name} of {vals:?}"),
                    (Err(a), Err(b)) => {
                        assert_eq!(a.to_string(), b.to_string(), "{name} of {vals:?}")
                    }
                    _ => panic!("{name} of {vals:?}: whole {whole:?}, folded {fold:?}"),
                }
            }
        }
    }

    #[test]
    fn min_keeps_the_first_of_equals_and_max_the_last() {
        let vals = [Value::Long(1), d(1.0), Value::Long(0), d(0.0)];
        for name in ["min", "max"] {
            assert_eq!(
                folded(name, &[], &vals).unwrap(),
                aggregate(name, &[], &vals, &HashMap::new()).unwrap(),
                "{name}"
            );
        }
    }
}
