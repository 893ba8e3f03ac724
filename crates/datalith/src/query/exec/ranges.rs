//! Comparisons turned into AVE range bounds: `[(> ?v 30)]` (or a prefix test,
//! `[(clojure.string/starts-with? ?v "ab")]`) on the value variable of a scanned pattern
//! narrows the scan, and for fixed-width types the bounds answer a comparison exactly.

use std::ops::Bound;

use crate::codec::Value;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term};
use crate::store::schema::Schema;

/// Comparisons on the value variable of a scan pattern that can narrow its AVE range.
/// A comparison turned into AVE bounds: its index in `todo`, the bounds, and whether the
/// bounds alone answer it exactly.
pub(super) type RangePred = (usize, Bound<Value>, Bound<Value>, bool);

/// The value bounds of one pattern of a merge scan, if the tests to run put any.
pub(super) type StarBound = Option<(Bound<Value>, Bound<Value>)>;

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
        // Only a constant of the attribute's own type has a meaningful place in its index;
        // for a tuple, each element of its element's type (`[1.0 "a"]` compares with `[1 "b"]`
        // by number, but sorts after every long-first tuple in the index).
        if k.value_type() != Some(attr.value_type) {
            continue;
        }
        if let Value::Tuple(items) = k {
            let type_of = |x: &crate::codec::Keyword| schema.by_ident(x).map(|a| a.value_type);
            let typed = items.iter().enumerate().all(|(i, item)| match item {
                Some(x) => {
                    let t = attr.tuple_element_type(i, type_of);
                    t.is_some() && x.value_type() == t
                }
                None => true,
            });
            if !typed {
                continue;
            }
        }
        // Fixed-width encodings order exactly like the values; long strings and the like may
        // be giants, whose order inside a shared prefix is by hash. A prefix test is never
        // answered by its bounds alone.
        let exact = op != "clojure.string/starts-with?"
            && matches!(
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
            // Every string that starts with the prefix sorts from it to the next prefix.
            "clojure.string/starts-with?" => match (&k, matches!(x, Term::Var(_))) {
                (Value::String(prefix), true) => (
                    Bound::Included(k.clone()),
                    match next_prefix(prefix) {
                        Some(next) => Bound::Excluded(Value::String(next.into())),
                        None => Bound::Unbounded,
                    },
                ),
                _ => continue,
            },
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

/// The smallest string greater than every string that starts with `prefix` (UTF-8 orders like
/// code points, and the index orders like UTF-8): its last character incremented, dropping
/// characters that cannot be; `None` when no such string exists.
fn next_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
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
