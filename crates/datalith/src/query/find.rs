//! From the bindings the clauses produced to the result the `:find` asks for: aggregates,
//! pull, shape, `:keys`, `:order-by`, `:limit`, `:offset`.

use std::collections::HashMap;
use std::sync::Arc;

use super::builtins::compare;
use super::error::QueryError;
use super::ir::{FindElem, FindShape, KeysKind, Query, Var};
use super::relation::Relation;
use crate::api::Db;
use crate::codec::{Keyword, Value};
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
        "count-distinct" => {
            let mut d = sorted(vals);
            d.dedup();
            Edn::Long(d.len() as i64)
        }
        "sum" => {
            if vals.iter().all(|v| matches!(v, Value::Long(_))) {
                let mut s: i64 = 0;
                for v in vals {
                    if let Value::Long(n) = v {
                        s = s.checked_add(*n).ok_or_else(|| QueryError::BadArguments {
                            name: name.into(),
                            message: "overflow".into(),
                        })?;
                    }
                }
                Edn::Long(s)
            } else {
                float(vals.iter().map(|v| num(name, v)).sum::<Result<f64, _>>()?)
            }
        }
        "avg" => {
            if vals.is_empty() {
                return Ok(Edn::Nil);
            }
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
                float((num(name, &s[m - 1])? + num(name, &s[m])?) / 2.0)
            }
        }
        "variance" | "stddev" => {
            if vals.is_empty() {
                return Ok(Edn::Nil);
            }
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
            let n = n_arg()?;
            let mut s = sorted(vals);
            s.dedup();
            if name == "max" {
                s.reverse();
            }
            Edn::Vector(s.iter().take(n).map(edn_from_value).collect())
        }
        "distinct" => {
            let mut s = sorted(vals);
            s.dedup();
            Edn::Set(s.iter().map(edn_from_value).collect())
        }
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
) -> Result<Edn, QueryError> {
    let has_agg = q
        .find
        .iter()
        .any(|f| matches!(f, FindElem::Aggregate { .. }));
    // The set of bindings over find and :with variables.
    let mut cols: Vec<Var> = q.find.iter().map(FindElem::var).collect();
    for w in &q.with {
        if !cols.contains(w) {
            cols.push(*w);
        }
    }
    let mut uniq: Vec<Var> = Vec::new();
    for c in &cols {
        if !uniq.contains(c) {
            uniq.push(*c);
        }
    }
    // The common shape (a set of tuples, nothing to order, cut or name) is built in one pass.
    if !has_agg
        && q.order_by.is_empty()
        && q.offset.is_none()
        && q.limit.is_none()
        && q.keys.is_none()
        && matches!(q.shape, FindShape::Relation)
    {
        return Ok(Edn::Set(tuples(db, q, rel, &uniq, Edn::Vector)?));
    }
    let mut rows: Vec<Vec<Edn>> = if has_agg {
        let rel = rel.project_owned_ordered(&uniq);
        let col = |v: Var| rel.col(v).expect("find variables are bound");
        let keys: Vec<usize> = q
            .find
            .iter()
            .enumerate()
            .filter(|(_, f)| !matches!(f, FindElem::Aggregate { .. }))
            .map(|(i, _)| i)
            .collect();
        let mut groups: Vec<(Vec<Value>, Vec<&Vec<Value>>)> = Vec::new();
        let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
        for r in &rel.rows {
            let k: Vec<Value> = keys
                .iter()
                .map(|&i| r[col(q.find[i].var())].clone())
                .collect();
            let gi = *index.entry(k.clone()).or_insert_with(|| {
                groups.push((k, Vec::new()));
                groups.len() - 1
            });
            groups[gi].1.push(r);
        }
        if groups.is_empty() && keys.is_empty() {
            groups.push((Vec::new(), Vec::new()));
        }
        let mut out = Vec::new();
        for (_, members) in groups {
            let mut row = Vec::new();
            for f in &q.find {
                row.push(match f {
                    FindElem::Aggregate { name, args, var } => {
                        let vals: Vec<Value> =
                            members.iter().map(|r| r[col(*var)].clone()).collect();
                        aggregate(name, args, &vals, user_aggs)?
                    }
                    other => element(db, other, &members[0][col(other.var())])?,
                });
            }
            out.push(row);
        }
        out
    } else {
        tuples(db, q, rel, &uniq, |row| row)?
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
            if ordered || q.limit.is_some() || q.offset.is_some() {
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

/// The result tuples of a query without aggregates: one per distinct binding of the find
/// variables, built straight from the relation's rows (no intermediate projection).
fn tuples<T>(
    db: &Db,
    q: &Query,
    rel: Relation,
    uniq: &[Var],
    wrap: impl Fn(Vec<Edn>) -> T,
) -> Result<Vec<T>, QueryError> {
    let cols: Vec<usize> = q
        .find
        .iter()
        .map(|f| rel.col(f.var()).expect("find variables are bound"))
        .collect();
    // A relation over exactly the find variables is already the answer's bag; anything else
    // (other columns, another order, `:with`) is deduplicated on the find columns, as a
    // projection would.
    let dedup = !q.with.is_empty() || rel.vars != uniq;
    let plain = q.find.iter().all(|f| matches!(f, FindElem::Var(_)));
    if !dedup && plain {
        // Every row is a result: each is converted and dropped in one pass.
        return Ok(rel
            .rows
            .into_iter()
            .map(|r| wrap(cols.iter().map(|c| edn_from_value(&r[*c])).collect()))
            .collect());
    }
    let mut seen = Distinct::default();
    let mut out = Vec::with_capacity(rel.rows.len());
    for (i, r) in rel.rows.iter().enumerate() {
        if dedup && !seen.insert(&rel.rows, i, &cols) {
            continue;
        }
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

/// Rows already seen, keyed by a hash of some columns (no per-row key allocation); rows with
/// equal hashes are compared column by column.
#[derive(Default)]
struct Distinct {
    first: rustc_hash::FxHashMap<u64, usize>,
    /// Rows whose hash equals an earlier, different row's (rare).
    collided: Vec<usize>,
}

impl Distinct {
    /// Whether row `i` of `rows` (on `cols`) is new; records it if so.
    fn insert(&mut self, rows: &[Vec<Value>], i: usize, cols: &[usize]) -> bool {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        for c in cols {
            rows[i][*c].hash(&mut h);
        }
        let same = |j: usize| cols.iter().all(|c| rows[i][*c] == rows[j][*c]);
        match self.first.entry(h.finish()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
                true
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                if same(*o.get()) || self.collided.iter().any(|j| same(*j)) {
                    return false;
                }
                self.collided.push(i);
                true
            }
        }
    }
}

fn element(db: &Db, f: &FindElem, v: &Value) -> Result<Edn, QueryError> {
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
