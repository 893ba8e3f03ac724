//! From the bindings the clauses produced to the result the `:find` asks for: aggregates,
//! pull, shape, `:keys`, `:order-by`, `:limit`, `:offset`.

use std::collections::HashMap;
use std::sync::Arc;

use super::budget::{row_bytes, Budget};
use super::builtins::compare;
use super::error::QueryError;
use super::fold::Fold;
use super::ir::{FindElem, FindShape, KeysKind, Query, Var};
use super::relation::Relation;
use crate::codec::{Keyword, Value};
use crate::db::Db;
use crate::edn::{edn_from_value, Edn};

/// A user aggregate: gets the bag of values, returns one value.
pub type UserAggregate = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

fn num(name: &str, v: &Value) -> Result<f64, QueryError> {
    v.as_f64().ok_or_else(|| QueryError::BadArguments {
        name: name.to_string(),
        message: format!("{v} is not a number"),
    })
}

fn sorted(vals: &[Value]) -> Vec<Value> {
    let mut v = vals.to_vec();
    v.sort_by(compare);
    v
}

/// The distinct values of a bag as Clojure's sets tell them apart, by `=`: `0` and `0N` are
/// one value (both integers), `0` and `0.0` two; sorted, the first of equal values kept.
fn distinct(vals: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(vals.len());
    let mut run_start = 0;
    for v in sorted(vals) {
        // Values `=` to each other compare equal, so they sit in one run of the order.
        if out
            .last()
            .is_some_and(|last| compare(last, &v) != std::cmp::Ordering::Equal)
        {
            run_start = out.len();
        }
        if !out[run_start..]
            .iter()
            .any(|kept| super::builtins::equal(kept, &v))
        {
            out.push(v);
        }
    }
    out
}

/// The total of a bag of longs, as Datomic's `+` sums them: `None` when a value is not a long
/// (with another kind among them the order of the additions decides, which a bag does not
/// keep), `Some(Err)` when the total leaves a long (`sum`, and `avg`, `variance` and
/// `stddev`, which sum first, fail there).
fn long_total(name: &str, vals: &[Value]) -> Option<Result<i64, QueryError>> {
    let mut total: Option<i64> = Some(0);
    for v in vals {
        let Value::Long(n) = v else { return None };
        total = total.and_then(|t| t.checked_add(*n));
    }
    Some(total.ok_or_else(|| super::fold::long_overflow(name)))
}

/// Computes one aggregate over a bag of values.
pub fn aggregate(
    name: &str,
    args: &[Value],
    vals: &[Value],
    user: &HashMap<String, Arc<UserAggregate>>,
) -> Result<Edn, QueryError> {
    let n_arg = || match args.first() {
        Some(Value::Long(n)) if *n >= 0 => Ok(*n as usize),
        _ => Err(QueryError::BadArguments {
            name: name.to_string(),
            message: "needs a count".into(),
        }),
    };
    let float = |x: f64| Edn::Double(x);
    Ok(match name {
        "count" => Edn::Long(vals.len() as i64),
        "count-distinct" => Edn::Long(distinct(vals).len() as i64),
        "sum" => {
            if let Some(total) = long_total(name, vals) {
                Edn::Long(total?)
            } else {
                // Datomic sums with its own `+`: bigints and bigdecs stay exact, a double
                // anywhere makes a double.
                let mut acc = Value::Long(0);
                for v in vals {
                    acc = super::builtins::call("+", &[acc, v.clone()])?.unwrap_or(Value::Long(0));
                }
                edn_from_value(&acc)
            }
        }
        "avg" => {
            if vals.is_empty() {
                return Ok(Edn::Nil);
            }
            long_total(name, vals).transpose()?;
            float(vals.iter().map(|v| num(name, v)).sum::<Result<f64, _>>()? / vals.len() as f64)
        }
        "median" => {
            if vals.is_empty() {
                return Ok(Edn::Nil);
            }
            let s = sorted(vals);
            let m = s.len() / 2;
            if s.len() % 2 == 1 {
                edn_from_value(&s[m])
            } else {
                // Datomic's `(quot (+ a b) 2)`, checked on the peer: the quotient truncated
                // toward zero for doubles too (6.5 and 7.5 give 7.0, 1.0 and 2.0 give 1.0).
                let both = [s[m - 1].clone(), s[m].clone()];
                let sum = super::builtins::call("+", &both)?.unwrap_or(Value::Long(0));
                let half = super::builtins::call("quot", &[sum, Value::Long(2)])?;
                half.as_ref().map_or(Edn::Nil, edn_from_value)
            }
        }
        "variance" | "stddev" => {
            if vals.is_empty() {
                return Ok(Edn::Nil);
            }
            long_total(name, vals).transpose()?;
            let xs: Vec<f64> = vals
                .iter()
                .map(|v| num(name, v))
                .collect::<Result<_, _>>()?;
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
            float(if name == "variance" { var } else { var.sqrt() })
        }
        "min" | "max" if args.is_empty() => {
            let it = vals.iter();
            let best = if name == "min" {
                it.min_by(|a, b| compare(a, b))
            } else {
                it.max_by(|a, b| compare(a, b))
            };
            best.map_or(Edn::Nil, edn_from_value)
        }
        "min" | "max" => {
            // The values as the aggregate sees them: distinct unless `:with` keeps repeats,
            // which then count (Datomic: `(min 3 ?a) :with ?p` can answer [19 25 25]).
            let n = n_arg()?;
            let mut s = sorted(vals);
            if name == "max" {
                s.reverse();
            }
            Edn::Vector(s.iter().take(n).map(edn_from_value).collect())
        }
        "distinct" => Edn::Set(distinct(vals).iter().map(edn_from_value).collect()),
        "rand" | "sample" => {
            let n = n_arg()?;
            Edn::Vector(vals.iter().take(n).map(edn_from_value).collect())
        }
        other => match user.get(other) {
            Some(f) => edn_from_value(&f(vals).map_err(|m| QueryError::BadArguments {
                name: other.to_string(),
                message: m,
            })?),
            None => {
                return Err(QueryError::UnknownAggregate {
                    name: other.to_string(),
                })
            }
        },
    })
}

/// Shapes the final result.
pub fn shape(
    db: &Db,
    q: &Query,
    rel: Relation,
    user_aggs: &HashMap<String, Arc<UserAggregate>>,
    budget: &Budget<'_>,
) -> Result<Edn, QueryError> {
    let has_agg = q
        .find
        .iter()
        .any(|f| matches!(f, FindElem::Aggregate { .. }));
    // The common shape (a set of tuples, nothing to order, cut or name) is built in one pass.
    if !has_agg
        && q.order_by.is_empty()
        && q.offset.is_none()
        && q.limit.is_none()
        && q.keys.is_none()
        && matches!(q.shape, FindShape::Relation)
    {
        let rows = tuples(db, q, rel, Edn::Vector, budget)?;
        return Ok(if q.with.is_empty() {
            Edn::Set(rows)
        } else {
            Edn::Vector(rows)
        });
    }
    let mut rows: Vec<Vec<Edn>> = if has_agg {
        grouped(db, q, rel, user_aggs, budget)?
    } else {
        tuples(db, q, rel, |row| row, budget)?
    };
    let ordered = !q.order_by.is_empty();
    if ordered {
        let positions: Vec<(usize, bool)> = q
            .order_by
            .iter()
            .filter_map(|(v, desc)| {
                q.find
                    .iter()
                    .position(|f| matches!(f, FindElem::Var(x) if x == v))
                    .map(|p| (p, *desc))
            })
            .collect();
        rows.sort_by(|a, b| {
            for (p, desc) in &positions {
                let o = edn_cmp(&a[*p], &b[*p]);
                if o != std::cmp::Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            std::cmp::Ordering::Equal
        });
        // A sort cannot be stopped half-way; a stop during it is reported after.
        budget.check()?;
    }
    let offset = q.offset.unwrap_or(0);
    if offset > 0 || q.limit.is_some() {
        rows = rows
            .into_iter()
            .skip(offset)
            .take(q.limit.unwrap_or(usize::MAX))
            .collect();
    }
    let to_item = |row: Vec<Edn>| -> Edn {
        match &q.keys {
            Some((kind, names)) => Edn::Map(
                names
                    .iter()
                    .zip(row)
                    .map(|(n, v)| {
                        let k = match kind {
                            KeysKind::Keys => Edn::Keyword(Keyword::parse(n)),
                            KeysKind::Strs => Edn::String(n.clone()),
                            KeysKind::Syms => Edn::Symbol(Keyword::parse(n)),
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            None => Edn::Vector(row),
        }
    };
    Ok(match q.shape {
        FindShape::Relation => {
            let items: Vec<Edn> = rows.into_iter().map(to_item).collect();
            // A set only when its members are distinct and unordered: `:with` without an
            // aggregate leaves a bag.
            let bag = !has_agg && !q.with.is_empty();
            if ordered || q.limit.is_some() || q.offset.is_some() || bag {
                Edn::Vector(items)
            } else {
                Edn::Set(items)
            }
        }
        FindShape::Collection => {
            Edn::Vector(rows.into_iter().map(|mut r| r.swap_remove(0)).collect())
        }
        FindShape::Tuple => rows.into_iter().next().map_or(Edn::Nil, Edn::Vector),
        FindShape::Scalar => rows
            .into_iter()
            .next()
            .and_then(|mut r| r.drain(..).next())
            .unwrap_or(Edn::Nil),
    })
}

/// The rows of a query with aggregates: the relation is the set of bindings of the find and
/// `:with` variables, grouped by the find variables, each aggregate folded over its group's
/// rows in the relation's order (see `fold`). Each row is dropped once folded.
fn grouped(
    db: &Db,
    q: &Query,
    rel: Relation,
    user_aggs: &HashMap<String, Arc<UserAggregate>>,
    budget: &Budget<'_>,
) -> Result<Vec<Vec<Edn>>, QueryError> {
    let col = |v: Var| rel.col(v).expect("find variables are bound");
    let key_cols: Vec<usize> = q
        .find
        .iter()
        .filter(|f| !matches!(f, FindElem::Aggregate { .. }))
        .map(|f| col(f.var()))
        .collect();
    let aggregates: Vec<(&str, &[Value], usize)> = q
        .find
        .iter()
        .filter_map(|f| match f {
            FindElem::Aggregate { name, args, var } => {
                Some((name.as_str(), args.as_slice(), col(*var)))
            }
            _ => None,
        })
        .collect();
    let fresh = || {
        aggregates
            .iter()
            .map(|(name, args, _)| Fold::new(name, args))
    };
    let width = aggregates.len();
    // Bytes a value kept by a bag costs; a row folded is a row the relation no longer holds.
    let value_bytes = std::mem::size_of::<Value>() as u64;
    let bag_values = fresh().filter(|f| f.keeps_values()).count() as u64;
    let folded_row = row_bytes(rel.vars.len());
    // A group's key is held once (in the index), its folds in one list for every group.
    let key_bytes = row_bytes(key_cols.len());
    // Group `g`'s folds are `folds[g * width..(g + 1) * width]`.
    let mut folds: Vec<Fold> = Vec::new();
    // Grouping hashes every row's key: the fast hash, as the relations use.
    let mut index: rustc_hash::FxHashMap<Vec<Value>, usize> = Default::default();
    let mut key: Vec<Value> = Vec::with_capacity(key_cols.len());
    // The keys in order of their groups while each run's key has been greater than the one
    // before: rows sorted by key (an AVE scan of the grouped variable: TPC-H Q18 groups 6M
    // line items by order) make a new group at every run, known new without a probe of the
    // index (a cache miss per group among 1.5M). The first key out of order indexes the
    // keys so far, and the index serves from then on.
    let mut ordered: Option<Vec<Vec<Value>>> = Some(Vec::new());
    // The previous row's group: rows often come in runs of one key (a scan in the order of
    // the grouped variable), and a run's rows after its first skip the hash.
    let mut run: Option<usize> = None;
    for r in rel.into_rows() {
        budget.charge(bag_values * value_bytes)?;
        let same = run.is_some() && key_cols.iter().zip(&key).all(|(&c, k)| r[c] == *k);
        let gi = match run {
            Some(gi) if same => gi,
            _ => {
                key.clear();
                key.extend(key_cols.iter().map(|&c| r[c].clone()));
                let ascends = ordered
                    .as_ref()
                    .is_some_and(|keys| keys.last().is_none_or(|last| keys_ascend(last, &key)));
                if let (true, Some(keys)) = (ascends, &mut ordered) {
                    budget.charge(key_bytes)?;
                    keys.push(key.clone());
                    folds.extend(fresh());
                    keys.len() - 1
                } else {
                    if let Some(keys) = ordered.take() {
                        index.extend(keys.into_iter().enumerate().map(|(gi, k)| (k, gi)));
                    }
                    match index.get(key.as_slice()) {
                        Some(gi) => *gi,
                        None => {
                            budget.charge(key_bytes)?;
                            let gi = index.len();
                            index.insert(key.clone(), gi);
                            folds.extend(fresh());
                            gi
                        }
                    }
                }
            }
        };
        run = Some(gi);
        for (fold, (_, _, c)) in folds[gi * width..(gi + 1) * width]
            .iter_mut()
            .zip(&aggregates)
        {
            fold.add(&r[*c]);
        }
        budget.release(folded_row);
    }
    // The groups in order of their first row.
    let keys = match ordered {
        Some(keys) => keys,
        None => {
            let mut keys: Vec<Vec<Value>> = vec![Vec::new(); index.len()];
            for (k, gi) in index {
                keys[gi] = k;
            }
            keys
        }
    };
    // No rows, no groups: an aggregate over nothing is no result (Datomic: nil for a scalar or
    // tuple, an empty collection otherwise), not a count of 0.
    let mut out = Vec::with_capacity(keys.len());
    let mut all_folds = folds.into_iter();
    for key in keys {
        budget.tick()?;
        let mut keys = key.iter();
        let mut folds = all_folds.by_ref().take(width).zip(&aggregates);
        let mut row = Vec::with_capacity(q.find.len());
        for f in &q.find {
            row.push(match f {
                FindElem::Aggregate { .. } => {
                    let (fold, (name, args, _)) = folds.next().expect("one fold per aggregate");
                    if user_aggs.contains_key(*name) {
                        budget.user_call()?;
                    }
                    fold.finish(name, args, user_aggs)?
                }
                other => element(db, other, keys.next().expect("one key per find variable"))?,
            });
        }
        out.push(row);
    }
    Ok(out)
}

/// The result tuples of a query without aggregates, built straight from the relation's rows
/// (no intermediate projection). The relation is a set over the find and `:with` variables
/// (see `distinct`), so without `:with` every row is one result; with `:with` the find columns
/// of its rows are the bag Datomic returns.
fn tuples<T>(
    db: &Db,
    q: &Query,
    rel: Relation,
    wrap: impl Fn(Vec<Edn>) -> T,
    budget: &Budget<'_>,
) -> Result<Vec<T>, QueryError> {
    let cols: Vec<usize> = q
        .find
        .iter()
        .map(|f| rel.col(f.var()).expect("find variables are bound"))
        .collect();
    let plain = q.find.iter().all(|f| matches!(f, FindElem::Var(_)));
    let mut out = Vec::with_capacity(rel.rows.len());
    for r in rel.into_rows() {
        budget.tick()?;
        let mut items = Vec::with_capacity(cols.len());
        if plain {
            items.extend(cols.iter().map(|c| edn_from_value(&r[*c])));
        } else {
            for (f, c) in q.find.iter().zip(&cols) {
                items.push(element(db, f, &r[*c])?);
            }
        }
        out.push(wrap(items));
    }
    Ok(out)
}

/// Whether key `b` comes after key `a` (so differs from every key up to `a`, when keys have
/// ascended so far).
fn keys_ascend(a: &[Value], b: &[Value]) -> bool {
    for (x, y) in a.iter().zip(b) {
        match compare(x, y) {
            std::cmp::Ordering::Less => return true,
            std::cmp::Ordering::Greater => return false,
            std::cmp::Ordering::Equal => {}
        }
    }
    false
}

pub(super) fn element(db: &Db, f: &FindElem, v: &Value) -> Result<Edn, QueryError> {
    match f {
        FindElem::Pull { pattern, .. } => match super::exec::entity_of(v) {
            Some(e) => crate::pull::pull(db, pattern, e),
            None => Ok(Edn::Nil),
        },
        _ => Ok(edn_from_value(v)),
    }
}

/// An order on EDN results (numbers numerically, then by printed form).
fn edn_cmp(a: &Edn, b: &Edn) -> std::cmp::Ordering {
    match (crate::edn::value_from_edn(a), crate::edn::value_from_edn(b)) {
        (Some(x), Some(y)) => compare(&x, &y),
        _ => crate::edn::to_edn_string(a).cmp(&crate::edn::to_edn_string(b)),
    }
}
