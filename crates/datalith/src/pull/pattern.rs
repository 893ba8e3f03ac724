//! Pull patterns.

use crate::codec::{Keyword, Value};
use crate::edn::{to_edn_string, value_from_edn, Edn};
use crate::query::QueryError;

use super::PullError;

/// How a nested attribute continues.
#[derive(Debug, Clone, PartialEq)]
pub enum Recursion {
    /// A sub-pattern.
    Pattern(PullPattern),
    /// `...`: recurse with the enclosing pattern without limit (cycles are cut).
    Unbounded,
    /// A number: recurse this many levels (at least one).
    Depth(u32),
}

/// One attribute of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrSpec {
    /// The attribute.
    pub attr: Keyword,
    /// `:_attr`: follow references to this entity.
    pub reverse: bool,
    /// Key in the result (default: the attribute as written).
    pub key: Edn,
    /// At most this many values (cardinality many; Datomic's default is 1000).
    pub limit: Option<usize>,
    /// Value when the entity has none.
    pub default: Option<Value>,
    /// Nested pattern for refs.
    pub nested: Option<Recursion>,
}

/// A pull pattern.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PullPattern {
    /// `*`: every attribute.
    pub wildcard: bool,
    /// Listed attributes.
    pub attrs: Vec<AttrSpec>,
}

fn perr(m: impl Into<String>) -> QueryError {
    QueryError::Parse(m.into())
}

fn attr_name(k: &Keyword) -> (Keyword, bool) {
    match k.name().strip_prefix('_') {
        Some(rest) if !rest.is_empty() => (Keyword::new(k.namespace(), rest), true),
        _ => (k.clone(), false),
    }
}

fn spec(k: &Keyword) -> AttrSpec {
    let (attr, reverse) = attr_name(k);
    AttrSpec {
        attr,
        reverse,
        key: Edn::Keyword(k.clone()),
        limit: Some(1000),
        default: None,
        nested: None,
    }
}

fn options(s: &mut AttrSpec, opts: &[Edn]) -> Result<(), QueryError> {
    if opts.len() % 2 != 0 {
        return Err(perr("attribute options come in pairs"));
    }
    for pair in opts.chunks(2) {
        match (&pair[0], &pair[1]) {
            // A negative limit keeps nothing, as `:limit 0` (Datomic).
            (Edn::Keyword(k), Edn::Long(n)) if k.name() == "limit" => {
                s.limit = Some(usize::try_from(*n).unwrap_or(0))
            }
            (Edn::Keyword(k), Edn::Nil) if k.name() == "limit" => s.limit = None,
            (Edn::Keyword(k), v) if k.name() == "limit" => {
                return Err(perr(format!(
                    ":limit takes a number or nil, not {}",
                    to_edn_string(v)
                )))
            }
            (Edn::Keyword(k), v) if k.name() == "default" => {
                s.default = Some(
                    value_from_edn(v)
                        .ok_or_else(|| perr(format!("bad :default {}", to_edn_string(v))))?,
                )
            }
            (Edn::Keyword(k), v) if k.name() == "as" => s.key = v.clone(),
            (k, _) => {
                return Err(perr(format!(
                    "unknown attribute option {}",
                    to_edn_string(k)
                )))
            }
        }
    }
    Ok(())
}

fn attr_expr(e: &Edn) -> Result<AttrSpec, QueryError> {
    match e {
        Edn::Keyword(k) => Ok(spec(k)),
        // [:attr :limit 10 :as "x"] or (:attr :limit 10)
        Edn::Vector(items) | Edn::List(items) if matches!(items.first(), Some(Edn::Keyword(_))) => {
            let Some(Edn::Keyword(k)) = items.first() else {
                unreachable!()
            };
            let mut s = spec(k);
            options(&mut s, &items[1..])?;
            Ok(s)
        }
        // (limit :attr 10), (default :attr x)
        Edn::List(items) => match items.as_slice() {
            [Edn::Symbol(f), Edn::Keyword(k), arg] if f.name() == "limit" => {
                let mut s = spec(k);
                options(&mut s, &[Edn::kw(":limit"), arg.clone()])?;
                Ok(s)
            }
            [Edn::Symbol(f), Edn::Keyword(k), arg] if f.name() == "default" => {
                let mut s = spec(k);
                options(&mut s, &[Edn::kw(":default"), arg.clone()])?;
                Ok(s)
            }
            _ => Err(perr(format!(
                "bad attribute expression {}",
                to_edn_string(e)
            ))),
        },
        other => Err(perr(format!(
            "bad attribute expression {}",
            to_edn_string(other)
        ))),
    }
}

/// Parses a pull pattern.
pub fn parse_pattern(e: &Edn) -> Result<PullPattern, QueryError> {
    let Edn::Vector(items) = e else {
        return Err(perr(format!(
            "a pull pattern is a vector, not {}",
            to_edn_string(e)
        )));
    };
    let mut p = PullPattern::default();
    let mut specs = Vec::new();
    for it in items {
        match it {
            Edn::Symbol(s) if s.name() == "*" => p.wildcard = true,
            Edn::String(s) if s == "*" => p.wildcard = true,
            Edn::Map(pairs) => {
                for (k, v) in pairs {
                    let mut s = attr_expr(k)?;
                    s.nested = Some(match v {
                        Edn::Symbol(x) if x.name() == "..." => Recursion::Unbounded,
                        Edn::Long(n) if *n > 0 => {
                            Recursion::Depth(u32::try_from(*n).unwrap_or(u32::MAX))
                        }
                        Edn::Vector(_) => Recursion::Pattern(parse_pattern(v)?),
                        other => {
                            return Err(PullError::InvalidRecurLimit {
                                attr: to_edn_string(k),
                                limit: to_edn_string(other),
                            }
                            .into())
                        }
                    });
                    specs.push(s);
                }
            }
            other => specs.push(attr_expr(other)?),
        }
    }
    for s in specs {
        let again = p
            .attrs
            .iter()
            .any(|seen| seen.attr == s.attr && seen.reverse == s.reverse);
        // `:db/id` may repeat: as in Datomic, the first spec of it is the one that counts.
        if again && s.attr == Keyword::new(Some("db"), "id") {
            continue;
        }
        if again {
            return Err(PullError::DuplicateAttribute {
                attr: written_name(&s).to_string(),
            }
            .into());
        }
        p.attrs.push(s);
    }
    Ok(p)
}

/// The attribute of a spec as a pattern writes it (`:ns/_name` when reverse).
fn written_name(s: &AttrSpec) -> Keyword {
    if s.reverse {
        Keyword::new(s.attr.namespace(), &format!("_{}", s.attr.name()))
    } else {
        s.attr.clone()
    }
}
