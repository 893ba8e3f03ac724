//! Comparisons turned into AVE range bounds: `[(> ?v 30)]` on the value variable of a scanned
//! pattern narrows the scan, and for fixed-width types the bounds answer it exactly.

use std::ops::Bound;

use crate::codec::Value;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term};
use crate::store::schema::Schema;

/// Comparisons on the value variable of a scan pattern that can narrow its AVE range.
/// A comparison turned into AVE bounds: its index in `todo`, the bounds, and whether the
/// bounds alone answer it exactly.
pub(super) type RangePred = (usize, Bound<Value>, Bound<Value>, bool);

pub(super) fn range_preds(p: &Pattern, todo: &[Clause], schema: &Schema) -> Vec<RangePred> {
    let (Term::Var(v), AttrTerm::Attr(a)) = (&p.v, &p.a) else {
        return Vec::new();
    };
    let Some(attr) = schema.get(*a) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, c) in todo.iter().enumerate() {
        let Clause::Pred { name, args } = c else {
            continue;
        };
        let [x, y] = args.as_slice() else { continue };
        // Normalize to (?v op const).
        let (op, k) = match (x, y) {
            (Term::Var(xv), Term::Const(k)) if xv == v => (name.as_str(), k),
            (Term::Const(k), Term::Var(yv)) if yv == v => (flip(name), k),
            _ => continue,
        };
        // Only a constant of the attribute's own type has a meaningful place in its index.
        if k.value_type() != Some(attr.value_type) {
            continue;
        }
        // Fixed-width encodings order exactly like the values; long strings and the like may
        // be giants, whose order inside a shared prefix is by hash.
        let exact = matches!(
            k,
            Value::Long(_)
                | Value::Double(_)
                | Value::Float(_)
                | Value::Instant(_)
                | Value::BigInt(_)
                | Value::Ref(_)
                | Value::Boolean(_)
                | Value::Uuid(_)
        );
        let k = k.clone();
        let (lo, hi) = match op {
            ">" => (Bound::Excluded(k), Bound::Unbounded),
            ">=" => (Bound::Included(k), Bound::Unbounded),
            "<" => (Bound::Unbounded, Bound::Excluded(k)),
            "<=" => (Bound::Unbounded, Bound::Included(k)),
            "=" | "==" => (Bound::Included(k.clone()), Bound::Included(k)),
            _ => continue,
        };
        out.push((i, lo, hi, exact));
    }
    out
}

pub(super) fn flip(op: &str) -> &str {
    match op {
        ">" => "<",
        "<" => ">",
        ">=" => "<=",
        "<=" => ">=",
        other => other,
    }
}

pub(super) fn intersect_ranges(
    ranges: &[(Bound<Value>, Bound<Value>)],
) -> (Bound<Value>, Bound<Value>) {
    let mut lo = Bound::Unbounded;
    let mut hi = Bound::Unbounded;
    for (l, h) in ranges {
        lo = tighter(lo, l.clone(), true);
        hi = tighter(hi, h.clone(), false);
    }
    (lo, hi)
}

pub(super) fn tighter(a: Bound<Value>, b: Bound<Value>, lower: bool) -> Bound<Value> {
    use Bound::*;
    let key = |x: &Bound<Value>| match x {
        Included(v) | Excluded(v) => Some(v.clone()),
        Unbounded => None,
    };
    match (key(&a), key(&b)) {
        (None, _) => b,
        (_, None) => a,
        (Some(x), Some(y)) => match x.cmp(&y) {
            std::cmp::Ordering::Equal => {
                if matches!(a, Excluded(_)) {
                    a
                } else {
                    b
                }
            }
            o => {
                if (o == std::cmp::Ordering::Greater) == lower {
                    a
                } else {
                    b
                }
            }
        },
    }
}

pub(super) fn as_ref(b: &Bound<Value>) -> Bound<&Value> {
    match b {
        Bound::Included(v) => Bound::Included(v),
        Bound::Excluded(v) => Bound::Excluded(v),
        Bound::Unbounded => Bound::Unbounded,
    }
}
