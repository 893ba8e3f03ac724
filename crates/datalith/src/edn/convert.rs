//! Between EDN and stored values.

use std::sync::Arc;

use super::value::Edn;
use crate::codec::{Regex, Value, F64};

/// The value an EDN form denotes (`None` for nil, lists, nil inside a collection, an invalid
/// `#"..."` pattern and other non-values). Vectors become tuples; ratios, patterns, sets and
/// maps become the query-only values (`Value::is_storable`).
pub fn value_from_edn(e: &Edn) -> Option<Value> {
    let all = |items: &[Edn]| items.iter().map(value_from_edn).collect::<Option<Vec<_>>>();
    Some(match e {
        Edn::Ratio(r) => Value::Ratio(Box::new(*r)),
        Edn::Regex(source) => Value::Regex(Regex::parse(source).ok()?),
        Edn::Set(items) => Value::set(all(items)?),
        Edn::Map(pairs) => Value::map(
            pairs
                .iter()
                .map(|(k, v)| Some((value_from_edn(k)?, value_from_edn(v)?)))
                .collect::<Option<Vec<_>>>()?,
        ),
        Edn::Bool(b) => Value::Boolean(*b),
        Edn::Long(n) => Value::Long(*n),
        Edn::BigInt(n) => Value::BigInt(Box::new(*n)),
        Edn::Double(x) => Value::Double(F64::new(*x)?),
        Edn::BigDec(d) => Value::BigDec(d.clone()),
        Edn::String(s) => Value::String(Arc::from(s.as_str())),
        Edn::Char(c) => Value::Char(*c),
        Edn::Keyword(k) => Value::Keyword(k.clone()),
        Edn::Symbol(s) => Value::Symbol(s.clone()),
        Edn::Inst(ms) => Value::Instant(*ms),
        Edn::Uuid(u) => Value::Uuid(*u),
        Edn::Vector(items) => Value::Tuple(
            items
                .iter()
                .map(|i| {
                    if *i == Edn::Nil {
                        Ok(None)
                    } else {
                        value_from_edn(i).map(Some).ok_or(())
                    }
                })
                .collect::<Result<_, _>>()
                .ok()?,
        ),
        Edn::Tagged(t, inner) if t.name() == "bytes" => match inner.as_ref() {
            Edn::Vector(items) => Value::Bytes(
                items
                    .iter()
                    .map(|i| match i {
                        Edn::Long(n) if (0..=255).contains(n) => Some(*n as u8),
                        _ => None,
                    })
                    .collect::<Option<Vec<u8>>>()?
                    .into(),
            ),
            _ => return None,
        },
        _ => return None,
    })
}

/// The value an input of a query denotes: as [`value_from_edn`], but a list given as a value
/// (`'(1 2 3)`) is a sequence for Datomic's functions, as a vector is (in query text a list
/// is a call, and `value_from_edn` refuses one for that reason).
pub fn value_from_input(e: &Edn) -> Option<Value> {
    if holds_list(e) {
        value_from_edn(&lists_as_vectors(e))
    } else {
        value_from_edn(e)
    }
}

/// Whether `e` is or holds a list, at any depth.
fn holds_list(e: &Edn) -> bool {
    match e {
        Edn::List(_) => true,
        Edn::Vector(items) | Edn::Set(items) => items.iter().any(holds_list),
        Edn::Map(pairs) => pairs.iter().any(|(k, v)| holds_list(k) || holds_list(v)),
        _ => false,
    }
}

/// `e` with its lists, at any depth, as vectors.
fn lists_as_vectors(e: &Edn) -> Edn {
    let all = |items: &[Edn]| items.iter().map(lists_as_vectors).collect();
    match e {
        Edn::List(items) | Edn::Vector(items) => Edn::Vector(all(items)),
        Edn::Set(items) => Edn::Set(all(items)),
        Edn::Map(pairs) => Edn::Map(
            pairs
                .iter()
                .map(|(k, v)| (lists_as_vectors(k), lists_as_vectors(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The EDN that prints a stored value (refs print as their entity id).
pub fn edn_from_value(v: &Value) -> Edn {
    match v {
        Value::Boolean(b) => Edn::Bool(*b),
        Value::Long(n) => Edn::Long(*n),
        Value::BigInt(n) => Edn::BigInt(**n),
        // The double nearest the float's shortest decimal form, so `0.1f32` prints `0.1`
        // (as Datomic prints it) and reads back as the same float.
        Value::Float(x) => Edn::Double(x.get().to_string().parse().unwrap_or(x.get() as f64)),
        Value::Double(x) => Edn::Double(x.get()),
        Value::BigDec(d) => Edn::BigDec(d.clone()),
        Value::Instant(ms) => Edn::Inst(*ms),
        Value::Uuid(u) => Edn::Uuid(*u),
        Value::String(s) => Edn::String(s.to_string()),
        Value::Keyword(k) => Edn::Keyword(k.clone()),
        Value::Symbol(s) => Edn::Symbol(s.clone()),
        Value::Ref(e) => Edn::Long(*e as i64),
        Value::Bytes(b) => Edn::Tagged(
            crate::codec::Keyword::new(None, "bytes"),
            Box::new(Edn::Vector(
                b.iter().map(|x| Edn::Long(*x as i64)).collect(),
            )),
        ),
        Value::Tuple(items) => Edn::Vector(
            items
                .iter()
                .map(|i| i.as_ref().map_or(Edn::Nil, edn_from_value))
                .collect(),
        ),
        Value::Ratio(r) => Edn::Ratio(**r),
        Value::Regex(r) => Edn::Regex(r.source().to_string()),
        Value::Char(c) => Edn::Char(*c),
        Value::Set(items) => Edn::Set(items.iter().map(edn_from_value).collect()),
        Value::Map(entries) => Edn::Map(
            entries
                .iter()
                .map(|(k, v)| (edn_from_value(k), edn_from_value(v)))
                .collect(),
        ),
    }
}
