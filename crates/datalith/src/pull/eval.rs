//! Evaluating pull patterns against a snapshot.

use std::collections::HashSet;

use super::error::PullError;
use super::pattern::{AttrSpec, PullPattern, Recursion};
use crate::codec::{Keyword, Value};
use crate::db::Db;
use crate::edn::{edn_from_value, Edn};
use crate::limits::MAX_PULL_DEPTH;
use crate::query::QueryError;
use crate::store::{AttrId, EntityId};

fn id_map(e: EntityId) -> Edn {
    Edn::Map(vec![(Edn::kw(":db/id"), Edn::Long(e as i64))])
}

struct Puller<'a> {
    db: &'a Db,
    /// Entities on the current path (a cycle of components is cut to `{:db/id e}`).
    path: HashSet<EntityId>,
    /// Entities that recursion (`...`, a depth) has entered on the current path, in the
    /// current pattern scope: the entity a nested pattern was entered at, and each entity a
    /// recursive attribute led to since. Met again through a recursive attribute, such an
    /// entity shows only the non-recursive part of the pattern (Datomic's answer: so the
    /// root of a pull is expanded once more when a cycle comes back to it).
    recursed: HashSet<EntityId>,
    depth: u32,
}

/// Pulls `pattern` for entity `e`; `Edn::Nil` when the entity has no datoms and the pattern
/// asks for nothing that would still show (Datascript's behaviour).
pub fn pull(db: &Db, pattern: &PullPattern, e: EntityId) -> Result<Edn, QueryError> {
    refuse_history(db)?;
    let mut p = Puller {
        db,
        path: HashSet::new(),
        recursed: HashSet::new(),
        depth: 0,
    };
    let m = p.entity(pattern, e, pattern)?;
    Ok(match &m {
        Edn::Map(pairs) if pairs.is_empty() => Edn::Nil,
        _ => m,
    })
}

/// What `pattern` pulls for an entity that is not there (a lookup ref or ident naming
/// nothing): its defaults, as Datomic gives them, or nil when it has none.
pub(crate) fn pull_nothing(pattern: &PullPattern) -> Edn {
    let defaults: Vec<(Edn, Edn)> = pattern
        .attrs
        .iter()
        .filter_map(|s| {
            s.default
                .as_ref()
                .map(|d| (s.key.clone(), edn_from_value(d)))
        })
        .collect();
    if defaults.is_empty() {
        Edn::Nil
    } else {
        Edn::Map(defaults)
    }
}

/// Refuses a history value, whatever entity is asked for (Datomic refuses it too: a history
/// value holds every value ever, not an entity).
pub(crate) fn refuse_history(db: &Db) -> Result<(), QueryError> {
    if db.time_filter().history {
        return Err(QueryError::BadArguments {
            name: "pull".into(),
            message: "pull is not supported on a history database".into(),
        });
    }
    Ok(())
}

/// [`pull`] for several entities.
pub fn pull_many(db: &Db, pattern: &PullPattern, es: &[EntityId]) -> Result<Vec<Edn>, QueryError> {
    es.iter().map(|e| pull(db, pattern, *e)).collect()
}

impl Puller<'_> {
    fn entity(
        &mut self,
        pattern: &PullPattern,
        e: EntityId,
        parent: &PullPattern,
    ) -> Result<Edn, QueryError> {
        if self.depth >= MAX_PULL_DEPTH {
            return Err(PullError::TooDeep {
                entity: e,
                limit: MAX_PULL_DEPTH,
            }
            .into());
        }
        self.depth += 1;
        // An entity already on the path (pulled again through a cycle) stays on it until
        // its first visit ends.
        let first_visit = self.path.insert(e);
        // Each entity inside another is a stack step (`stack::deep`).
        let r = crate::stack::deep(|| self.entity_inner(pattern, e, parent));
        if first_visit {
            self.path.remove(&e);
        }
        self.depth -= 1;
        r
    }

    fn entity_inner(
        &mut self,
        pattern: &PullPattern,
        e: EntityId,
        parent: &PullPattern,
    ) -> Result<Edn, QueryError> {
        let schema = self.db.schema().clone();
        let mut out: Vec<(Edn, Edn)> = Vec::new();
        let datoms = self.db.entity_datoms(e)?;
        if pattern.wildcard {
            if !datoms.is_empty() {
                out.push((Edn::kw(":db/id"), Edn::Long(e as i64)));
            }
            let mut i = 0;
            while i < datoms.len() {
                let a = datoms[i].0;
                let mut vals = Vec::new();
                while i < datoms.len() && datoms[i].0 == a {
                    vals.push(datoms[i].1.clone());
                    i += 1;
                }
                let Some(attr) = schema.get(a) else { continue };
                // An explicit spec for the same attribute wins over the wildcard.
                if pattern
                    .attrs
                    .iter()
                    .any(|s| !s.reverse && s.attr == attr.ident)
                {
                    continue;
                }
                let spec = AttrSpec {
                    attr: attr.ident.clone(),
                    reverse: false,
                    key: Edn::Keyword(attr.ident.clone()),
                    limit: None,
                    default: None,
                    nested: None,
                };
                if let Some(v) = self.values(&spec, a, vals, parent)? {
                    out.push((spec.key.clone(), v));
                }
            }
        }
        for spec in &pattern.attrs {
            // Two specs may give one key (`:as` aliases, the wildcard's `:db/id`): as in
            // Datomic, the first one stays.
            if out.iter().any(|(k, _)| *k == spec.key) {
                continue;
            }
            if spec.attr == Keyword::new(Some("db"), "id") {
                out.push((spec.key.clone(), Edn::Long(e as i64)));
                continue;
            }
            let Some(attr) = schema.by_ident(&spec.attr).cloned() else {
                if let Some(d) = &spec.default {
                    out.push((spec.key.clone(), edn_from_value(d)));
                }
                continue;
            };
            // A nested pattern reads the entities a ref attribute names; on any other
            // attribute it is a mistake (Datomic fails reading the values as entities).
            if spec.nested.is_some() && !spec.reverse && !attr.is_ref() {
                return Err(QueryError::Parse(format!(
                    "a nested pattern needs a ref attribute: {} is {}",
                    attr.ident,
                    attr.value_type.ident()
                )));
            }
            if spec.reverse {
                let holders = self.db.holders(attr.id, &Value::Ref(e))?;
                if holders.is_empty() {
                    if let Some(d) = &spec.default {
                        out.push((spec.key.clone(), edn_from_value(d)));
                    }
                    continue;
                }
                let mut items = Vec::new();
                for h in holders.into_iter().take(spec.limit.unwrap_or(usize::MAX)) {
                    let item = self.reference(spec, h, parent)?;
                    if !is_empty_map(&item) {
                        items.push(item);
                    }
                }
                // `:limit 0` keeps nothing, and an attribute with nothing is left out (kept
                // as nil beside a wildcard, as above).
                if items.is_empty() {
                    left_out(&mut out, spec, pattern.wildcard);
                    continue;
                }
                let v = if attr.is_component {
                    items.into_iter().next().unwrap_or(Edn::Nil)
                } else {
                    Edn::Vector(items)
                };
                out.push((spec.key.clone(), v));
                continue;
            }
            let vals: Vec<Value> = datoms
                .iter()
                .filter(|(a, _)| *a == attr.id)
                .map(|(_, v)| v.clone())
                .collect();
            if vals.is_empty() {
                if let Some(d) = &spec.default {
                    out.push((spec.key.clone(), edn_from_value(d)));
                }
                continue;
            }
            match self.values(spec, attr.id, vals, parent)? {
                Some(v) => out.push((spec.key.clone(), v)),
                // Every value left out: the attribute is, as if it had none; beside a
                // wildcard, which named it, Datomic keeps it as nil.
                None => left_out(&mut out, spec, pattern.wildcard),
            }
        }
        Ok(Edn::Map(out))
    }

    /// The attribute's values as pulled, or `None` when none is left: `:limit 0`, or every
    /// value an entity whose pull came out empty (Datomic leaves an empty map out, and the
    /// attribute with it when nothing else remains).
    fn values(
        &mut self,
        spec: &AttrSpec,
        a: AttrId,
        vals: Vec<Value>,
        parent: &PullPattern,
    ) -> Result<Option<Edn>, QueryError> {
        let schema = self.db.schema().clone();
        let attr = schema.get(a).cloned();
        let many = attr.as_ref().is_some_and(|x| x.is_many());
        let mut items = Vec::new();
        for v in vals.into_iter().take(if many {
            spec.limit.unwrap_or(usize::MAX)
        } else {
            1
        }) {
            let item = match (&v, &attr) {
                (Value::Ref(x), Some(at)) if at.is_ref() => {
                    if spec.nested.is_none() && at.is_component {
                        let all = PullPattern {
                            wildcard: true,
                            attrs: Vec::new(),
                        };
                        if self.path.contains(x) {
                            id_map(*x)
                        } else {
                            self.entity(&all, *x, &all)?
                        }
                    } else {
                        self.reference(spec, *x, parent)?
                    }
                }
                _ => edn_from_value(&v),
            };
            if !is_empty_map(&item) {
                items.push(item);
            }
        }
        Ok(match (many, items.is_empty()) {
            (_, true) => None,
            (true, false) => Some(Edn::Vector(items)),
            (false, false) => items.into_iter().next(),
        })
    }

    /// A referenced entity: nested pattern, recursion, or just its id.
    ///
    /// Recursion as Datomic does it: `{:attr n}` follows `:attr` n levels, and on the entity
    /// at the limit `:attr` is left out; an entity recursion already entered on this path (a
    /// cycle, see `recursed`) is pulled with the pattern's recursive attributes left out.
    fn reference(
        &mut self,
        spec: &AttrSpec,
        x: EntityId,
        parent: &PullPattern,
    ) -> Result<Edn, QueryError> {
        match &spec.nested {
            None => Ok(id_map(x)),
            // A nested pattern without recursive attributes never reads `recursed` (its own
            // nested patterns start their own scopes): no scope to start.
            Some(Recursion::Pattern(p)) if !has_recursion(p) => self.entity(p, x, p),
            Some(Recursion::Pattern(p)) => {
                let outer = std::mem::replace(&mut self.recursed, HashSet::from([x]));
                let r = self.entity(p, x, p);
                self.recursed = outer;
                r
            }
            Some(Recursion::Unbounded | Recursion::Depth(_)) if self.recursed.contains(&x) => {
                let flat = without_recursion(parent);
                self.entity(&flat, x, &flat)
            }
            Some(Recursion::Unbounded) => self.recurse(parent, x),
            Some(Recursion::Depth(n)) => {
                // One level used: the same attribute continues with one level fewer, or
                // not at all.
                let mut next = parent.clone();
                next.attrs.retain_mut(|s| {
                    if s.attr != spec.attr || s.reverse != spec.reverse {
                        return true;
                    }
                    match n.checked_sub(1) {
                        Some(left) if left > 0 => {
                            s.nested = Some(Recursion::Depth(left));
                            true
                        }
                        _ => false,
                    }
                });
                self.recurse(&next, x)
            }
        }
    }

    /// Pulls `x`, reached through a recursive attribute, with `pattern`.
    fn recurse(&mut self, pattern: &PullPattern, x: EntityId) -> Result<Edn, QueryError> {
        self.recursed.insert(x);
        let r = self.entity(pattern, x, pattern);
        self.recursed.remove(&x);
        r
    }
}

/// An attribute whose values were all left out: its default, nil beside a wildcard (which
/// named it), else nothing.
fn left_out(out: &mut Vec<(Edn, Edn)>, spec: &AttrSpec, wildcard: bool) {
    match &spec.default {
        Some(d) => out.push((spec.key.clone(), edn_from_value(d))),
        None if wildcard => out.push((spec.key.clone(), Edn::Nil)),
        None => {}
    }
}

/// An entity pulled as nothing (none of the pattern's attributes): left out where it would
/// be a value.
fn is_empty_map(v: &Edn) -> bool {
    matches!(v, Edn::Map(pairs) if pairs.is_empty())
}

fn is_recursive(s: &AttrSpec) -> bool {
    matches!(
        s.nested,
        Some(Recursion::Unbounded) | Some(Recursion::Depth(_))
    )
}

/// Whether `p` has a recursive attribute (`{:attr ...}`, `{:attr n}`) of its own.
fn has_recursion(p: &PullPattern) -> bool {
    p.attrs.iter().any(is_recursive)
}

/// `p` without its recursive attributes (`{:attr ...}`, `{:attr n}`).
fn without_recursion(p: &PullPattern) -> PullPattern {
    PullPattern {
        wildcard: p.wildcard,
        attrs: p
            .attrs
            .iter()
            .filter(|s| !is_recursive(s))
            .cloned()
            .collect(),
    }
}
