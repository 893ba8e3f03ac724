//! Truth and identity: `true? false? nil? some? not and or`, `identity` (and `ground`,
//! `untuple`, which are identity on a value), `type`, `meta`.
//!
//! A query variable is never bound to nil, so `nil?` of one is false and `some?` true.

use super::{truthy, Call, Out};
use crate::codec::{Keyword, Value};

fn boolean(b: bool) -> Out {
    Ok(Some(Value::Boolean(b)))
}

/// `true?`
pub fn is_true(c: &Call) -> Out {
    c.exactly(1)?;
    boolean(c.args[0] == Value::Boolean(true))
}

/// `false?`
pub fn is_false(c: &Call) -> Out {
    c.exactly(1)?;
    boolean(c.args[0] == Value::Boolean(false))
}

/// `nil?`
pub fn is_nil(c: &Call) -> Out {
    c.exactly(1)?;
    boolean(false)
}

/// `some?`
pub fn is_some(c: &Call) -> Out {
    c.exactly(1)?;
    boolean(true)
}

/// `not`
pub fn not(c: &Call) -> Out {
    c.exactly(1)?;
    boolean(!truthy(c.args.first()))
}

/// `and`: the first false argument, else the last (`(and)` is true).
pub fn and(c: &Call) -> Out {
    match c.args.iter().find(|a| !truthy(Some(a))) {
        Some(falsy) => Ok(Some(falsy.clone())),
        None => Ok(Some(c.args.last().cloned().unwrap_or(Value::Boolean(true)))),
    }
}

/// `or`: the first true argument, else the last (`(or)` is nil).
pub fn or(c: &Call) -> Out {
    match c.args.iter().find(|a| truthy(Some(a))) {
        Some(t) => Ok(Some(t.clone())),
        None => Ok(c.args.last().cloned()),
    }
}

/// `identity`, `ground`, `untuple`: the argument itself (a binding form destructures it).
pub fn identity(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(Some(c.args[0].clone()))
}

/// `type`: the Java class Datomic reports, as a symbol (`java.lang.Long`).
pub fn type_of(c: &Call) -> Out {
    c.exactly(1)?;
    let class = match &c.args[0] {
        Value::Boolean(_) => "java.lang.Boolean",
        Value::Long(_) | Value::Ref(_) => "java.lang.Long",
        Value::BigInt(_) => "clojure.lang.BigInt",
        Value::Float(_) => "java.lang.Float",
        Value::Double(_) => "java.lang.Double",
        Value::BigDec(_) => "java.math.BigDecimal",
        Value::Instant(_) => "java.util.Date",
        Value::Uuid(_) => "java.util.UUID",
        Value::String(_) => "java.lang.String",
        Value::Keyword(_) => "clojure.lang.Keyword",
        Value::Symbol(_) => "clojure.lang.Symbol",
        Value::Bytes(_) => "[B",
        Value::Tuple(_) => "clojure.lang.PersistentVector",
        Value::Ratio(_) => "clojure.lang.Ratio",
        Value::Regex(_) => "java.util.regex.Pattern",
        Value::Char(_) => "java.lang.Character",
        Value::Set(_) => "clojure.lang.PersistentHashSet",
        // Clojure keeps maps of up to 8 entries as array maps.
        Value::Map(m) if m.len() <= 8 => "clojure.lang.PersistentArrayMap",
        Value::Map(_) => "clojure.lang.PersistentHashMap",
    };
    Ok(Some(Value::Symbol(Keyword::new(None, class))))
}

/// `meta`: no value carries metadata here, so always nil.
pub fn meta(c: &Call) -> Out {
    c.exactly(1)?;
    Ok(None)
}
