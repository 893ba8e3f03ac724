//! Stage 2: terms with tempids. Maps are flattened, attributes looked up in the schema, and
//! values checked against their attribute's type; entities are still unresolved.

use std::sync::Arc;

use super::data::{AttrName, EntityMap, EntityRef, Tempid, TxData, TxItem, TxOp, TxValue};
use super::error::TxError;
use super::print;
use crate::codec::{Keyword, Value, ValueType};
use crate::store::bootstrap::IdentProperty;
use crate::store::ids::AttrId;
use crate::store::schema::{builtin, Attribute, Schema, Unique};

/// An entity not yet resolved to an id.
#[derive(Debug, Clone, PartialEq)]
pub enum E {
    /// A known id.
    Id(u64),
    /// A tempid.
    Temp(Tempid),
    /// A lookup ref on a unique attribute (the value boxed: terms stay small).
    Lookup(AttrId, Box<Value>),
    /// An ident.
    Ident(Keyword),
}

/// A value not yet resolved (ref values may name entities).
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    /// A plain value (for ref attributes: already an id, `Value::Ref`).
    Val(Value),
    /// An entity to resolve.
    Ent(E),
}

/// One term of the transaction.
#[derive(Debug, Clone)]
pub enum Term {
    /// Assert.
    Add(E, Arc<Attribute>, V),
    /// Retract one value, or all values (`None`).
    Retract(E, Arc<Attribute>, Option<V>),
    /// Retract an entity, its components, and references to it.
    RetractEntity(E),
    /// Compare and swap: entity, attribute, old value (`None`: none), new value. Boxed, as
    /// rare: the list of a large transaction's terms is then half the size.
    Cas(Box<(E, Arc<Attribute>, Option<V>, V)>),
    /// Nothing but that a lookup ref or ident names an entity: a map with a `:db/id` whose
    /// entries assert nothing (Datomic resolves the id, and refuses one that names nothing).
    Names(E),
}

/// Flattens tx data into terms.
/// Where a value stands: the attribute it is for, and the tx form it came from (printed only
/// for an error).
#[derive(Clone, Copy)]
struct At<'a> {
    attr: &'a Arc<Attribute>,
    form: &'a dyn Fn() -> String,
}

impl<'a> At<'a> {
    fn new(attr: &'a Arc<Attribute>, form: &'a dyn Fn() -> String) -> At<'a> {
        At { attr, form }
    }
}

pub struct Expander<'s> {
    schema: &'s Schema,
    anonymous: u32,
    /// Registered transaction functions, consulted for `Call`.
    functions: &'s dyn Fn(&Keyword, &[Value]) -> Option<Result<TxData, String>>,
    depth: u32,
    /// Scratch for the values of one map entry.
    vals: Vec<V>,
    /// Keywords looked up so far (the first few) and their attributes.
    recent: Vec<(Keyword, Arc<Attribute>)>,
    /// Where the form that failed to expand begins among the terms, and the entity it names
    /// when that is a lookup ref or an ident (see [`FailedForm`]).
    failed: Option<FailedForm>,
}

/// The form of tx data that failed to expand: its terms begin at `start` (those it made
/// before failing stay after the earlier forms' terms), and `entity` is the entity it names
/// by a lookup ref or an ident, which Datomic resolves before reading the rest of the form.
#[derive(Debug)]
pub struct FailedForm {
    /// The index of its first term.
    pub start: usize,
    /// Its entity, when a lookup ref or ident names it.
    pub entity: Option<E>,
}

/// How many looked-up keywords [`Expander`] remembers.
const RECENT_ATTRS: usize = 16;

/// How deeply transaction functions may call each other (a loop guard).
const MAX_FUNCTION_DEPTH: u32 = 16;

impl<'s> Expander<'s> {
    /// An expander over `schema`, with `functions` resolving `[:db.fn/call ...]`.
    pub fn new(
        schema: &'s Schema,
        functions: &'s dyn Fn(&Keyword, &[Value]) -> Option<Result<TxData, String>>,
    ) -> Self {
        Expander {
            schema,
            anonymous: 0,
            functions,
            depth: 0,
            vals: Vec::new(),
            recent: Vec::new(),
            failed: None,
        }
    }

    /// The form that failed to expand, after [`Self::expand`] failed.
    pub fn failed_form(&mut self) -> Option<FailedForm> {
        self.failed.take()
    }

    /// Expands every item.
    pub fn expand(&mut self, data: &TxData, out: &mut Vec<Term>) -> Result<(), TxError> {
        for item in &data.items {
            // A form that fails leaves the terms it made before failing behind the earlier
            // forms' (`run_tx` reads them all for an error Datomic finds first).
            let before = out.len();
            let expanded = match item {
                // An empty map at the top says nothing: Datomic transacts it as no datoms.
                TxItem::Map(m) if m.id.is_none() && m.attrs.is_empty() => Ok(()),
                TxItem::Map(m) => self.map(m, out).map(|_| ()),
                TxItem::Op(op) => self.op(op, out),
            };
            if let Err(e) = expanded {
                let entity = match item {
                    TxItem::Map(m) => m.id.as_ref(),
                    TxItem::Op(TxOp::Add { e, .. } | TxOp::Retract { e, .. })
                    | TxItem::Op(TxOp::Cas { e, .. }) => Some(e),
                    TxItem::Op(_) => None,
                };
                let entity = entity
                    .filter(|e| matches!(e, EntityRef::Lookup(..) | EntityRef::Ident(_)))
                    .and_then(|e| self.entity(e, &|| String::new()).ok());
                self.failed = Some(FailedForm {
                    start: before,
                    entity,
                });
                return Err(e);
            }
        }
        match &data.unread {
            Some(form) => {
                self.failed = Some(FailedForm {
                    start: out.len(),
                    entity: None,
                });
                Err(super::edn::unread_error(form))
            }
            None => Ok(()),
        }
    }

    fn attr(&mut self, k: &Keyword, form: &dyn Fn() -> String) -> Result<Arc<Attribute>, TxError> {
        // Tx data built in code clones a few keywords over and over: a pointer check against
        // the last ones looked up beats hashing their text again.
        if let Some((_, a)) = self.recent.iter().find(|(r, _)| r.same_allocation(k)) {
            return Ok(a.clone());
        }
        let a = self
            .schema
            .by_ident(k)
            .cloned()
            .ok_or_else(|| TxError::UnknownAttribute {
                attr: k.to_string(),
                form: form(),
            })?;
        if self.recent.len() < RECENT_ATTRS {
            self.recent.push((k.clone(), a.clone()));
        }
        Ok(a)
    }

    fn op(&mut self, op: &TxOp, out: &mut Vec<Term>) -> Result<(), TxError> {
        let form = || op.to_string();
        // An operation's value names an entity that exists or a tempid, never a nested map
        // (Datomic: not-an-entity, whatever the map holds); maps nest only in maps.
        let values = match op {
            TxOp::Add { v, .. } | TxOp::Retract { v: Some(v), .. } => [Some(v), None],
            TxOp::Cas { old, new, .. } => [old.as_ref(), Some(new)],
            _ => [None, None],
        };
        if let Some(TxValue::Map(m)) = values
            .into_iter()
            .flatten()
            .find(|v| matches!(v, TxValue::Map(_)))
        {
            return Err(TxError::UnresolvableEntity {
                entity: print::map_text(m),
                form: form(),
            });
        }
        match op {
            TxOp::Add { e, a, v } => {
                let attr = self.attr(a, &form)?;
                let e = self.entity(e, &form)?;
                for v in self.values(v, At::new(&attr, &form), out)? {
                    out.push(Term::Add(e.clone(), attr.clone(), v));
                }
            }
            TxOp::Retract { e, a, v } => {
                let attr = self.attr(a, &form)?;
                let e = self.entity(e, &form)?;
                match v {
                    // Every value of an existing entity: Datomic reads a string here as an
                    // ident, an error; a negative number names no entity, so nothing.
                    None => match e {
                        E::Temp(t @ Tempid::Named(_)) => {
                            return Err(TxError::TempidNamesNothing {
                                op: ":db/retract",
                                tempid: t.to_string(),
                                form: form(),
                            })
                        }
                        e => out.push(Term::Retract(e, attr, None)),
                    },
                    Some(v) => {
                        for v in self.values(v, At::new(&attr, &form), out)? {
                            out.push(Term::Retract(e.clone(), attr.clone(), Some(v)));
                        }
                    }
                }
            }
            TxOp::RetractEntity { e } => {
                // Datomic retracts only an entity that exists, and reads this position as an
                // existing entity, not a tempid: a negative number is an id none has, so
                // nothing is retracted (not even what a `-1` of the same transaction
                // asserts); a string is an ident that is not a keyword, an error.
                if let EntityRef::Temp(t) = e {
                    if matches!(t, Tempid::Negative(_)) {
                        return Ok(());
                    }
                    return Err(TxError::RetractEntityTempid {
                        tempid: t.to_string(),
                        form: form(),
                    });
                }
                let e = self.entity(e, &form)?;
                out.push(Term::RetractEntity(e));
            }
            TxOp::Cas { e, a, old, new } => {
                let attr = self.attr(a, &form)?;
                if attr.is_many() {
                    return Err(TxError::CasOnCardinalityMany {
                        attr: attr.ident.to_string(),
                        form: form(),
                    });
                }
                // The compared entity must exist: Datomic reads a string here as an ident,
                // an error, where a negative number stays a tempid (a new entity holds no
                // value, so only an old value of nil matches).
                if let EntityRef::Temp(t @ Tempid::Named(_)) = e {
                    return Err(TxError::TempidNamesNothing {
                        op: ":db/cas",
                        tempid: t.to_string(),
                        form: form(),
                    });
                }
                let e = self.entity(e, &form)?;
                let old = match old {
                    None => None,
                    Some(o) if attr.is_ref() => Some(V::Val(cas_old_ref(o, &form)?)),
                    Some(o) => Some(self.single(o, At::new(&attr, &form), out)?),
                };
                let new = self.single(new, At::new(&attr, &form), out)?;
                out.push(Term::Cas(Box::new((e, attr, old, new))));
            }
            TxOp::Call { function, args } => {
                if self.depth >= MAX_FUNCTION_DEPTH {
                    return Err(TxError::FunctionFailed {
                        function: function.to_string(),
                        message: "transaction functions nested too deeply".into(),
                    });
                }
                let data = match (self.functions)(function, args) {
                    None => {
                        return Err(TxError::UnknownFunction {
                            function: function.to_string(),
                        })
                    }
                    Some(Err(message)) => {
                        return Err(TxError::FunctionFailed {
                            function: function.to_string(),
                            message,
                        })
                    }
                    Some(Ok(d)) => d,
                };
                self.depth += 1;
                let r = self.expand(&data, out);
                self.depth -= 1;
                r?;
            }
        }
        Ok(())
    }

    /// Flattens a map; returns the entity it describes. Maps nest in maps as deep as the tx
    /// data does: each a stack step (`stack::deep`).
    fn map(&mut self, m: &EntityMap, out: &mut Vec<Term>) -> Result<E, TxError> {
        crate::stack::deep(|| self.map_here(m, out))
    }

    fn map_here(&mut self, m: &EntityMap, out: &mut Vec<Term>) -> Result<E, TxError> {
        let form = || m.to_string();
        let e = match &m.id {
            Some(r) => self.entity(r, &form)?,
            None => {
                self.anonymous += 1;
                E::Temp(Tempid::Anonymous(self.anonymous))
            }
        };
        if m.attrs.is_empty() && m.id.is_none() {
            return Err(TxError::Malformed {
                detail: "empty entity map".into(),
                form: form(),
            });
        }
        let start = out.len();
        for (AttrName { attr: k, reverse }, v) in &m.attrs {
            let attr = self.attr(k, &form)?;
            if *reverse {
                if !attr.is_ref() {
                    // Datomic: the value would be an entity in a non-ref attribute.
                    return Err(TxError::WrongType {
                        attr: format!(":{}/_{}", k.namespace().unwrap_or(""), k.name()),
                        expected: format!(
                            "a ref attribute (:{}/{} is {})",
                            k.namespace().unwrap_or(""),
                            k.name(),
                            attr.value_type.ident()
                        ),
                        got: print::map_text(m),
                        form: form(),
                    });
                }
                let owner = match self.owner(v, At::new(&attr, &form), out)? {
                    V::Ent(owner) => owner,
                    V::Val(Value::Ref(id)) => E::Id(id),
                    V::Val(other) => {
                        return Err(TxError::Malformed {
                            detail: format!("reverse attribute value {other} is not an entity"),
                            form: form(),
                        })
                    }
                };
                out.push(Term::Add(owner, attr.clone(), V::Ent(e.clone())));
                continue;
            }
            // One scratch vector for every entry's values (nested maps take a fresh one).
            let mut vals = std::mem::take(&mut self.vals);
            vals.clear();
            self.values_into(v, At::new(&attr, &form), out, &mut vals)?;
            for v in vals.drain(..) {
                out.push(Term::Add(e.clone(), attr.clone(), v));
            }
            self.vals = vals;
        }
        // A map whose entries assert nothing (none, or empty collections) still names its
        // entity: Datomic resolves a lookup ref or ident there, and refuses one naming none.
        if out.len() == start && matches!(e, E::Lookup(..) | E::Ident(_)) {
            out.push(Term::Names(e.clone()));
        }
        Ok(e)
    }

    /// The entity a reverse attribute's value names: the value is in entity position (as
    /// Datomic reads it), so it is one entity, a vector is one lookup ref, and a map (a
    /// nested entity) names none.
    fn owner(&mut self, v: &TxValue, at: At<'_>, out: &mut Vec<Term>) -> Result<V, TxError> {
        let form = at.form;
        match v {
            TxValue::Map(m) => Err(TxError::UnresolvableEntity {
                entity: print::map_text(m),
                form: form(),
            }),
            TxValue::Many(items) if lookup_shape(items).is_some() => self.ref_value(v, at, out),
            TxValue::Many(items) => Err(not_a_lookup_ref(v, items, form)),
            one => self.ref_value(one, at, out),
        }
    }

    fn entity(&mut self, r: &EntityRef, form: &dyn Fn() -> String) -> Result<E, TxError> {
        Ok(match r {
            EntityRef::Id(id) => E::Id(*id),
            EntityRef::Temp(t) => E::Temp(t.clone()),
            EntityRef::Ident(k) => E::Ident(k.clone()),
            EntityRef::Lookup(k, v) => {
                let attr = self.attr(k, form)?;
                if attr.unique.is_none() {
                    return Err(TxError::LookupNotUnique {
                        attr: k.to_string(),
                    });
                }
                let v = if attr.is_ref() {
                    match v {
                        Value::Long(n) if *n >= 0 => Value::Ref(*n as u64),
                        other => other.clone(),
                    }
                } else {
                    check_type(&attr, v.clone(), form)?
                };
                E::Lookup(attr.id, Box::new(v))
            }
        })
    }

    /// The values of an operation's value position (`[:db/add e a v]`): one value, where a
    /// vector is a lookup ref (ref attributes) or a tuple (tuple attributes); other
    /// collections of a cardinality-many attribute give several values.
    fn values(&mut self, v: &TxValue, at: At<'_>, out: &mut Vec<Term>) -> Result<Vec<V>, TxError> {
        let attr = at.attr;
        let one_value = match v {
            TxValue::Many(items) => {
                attr.value_type == ValueType::Tuple
                    || (attr.is_ref() && lookup_shape(items).is_some())
                    || !attr.is_many()
            }
            _ => true,
        };
        let mut vals = Vec::new();
        if one_value {
            vals.push(self.single(v, at, out)?);
        } else {
            self.values_into(v, at, out, &mut vals)?;
        }
        Ok(vals)
    }

    /// The values of one map entry. As in Datomic, a collection given to a cardinality-many
    /// attribute is always several values (`[:person/id "x"]` there is two values, an ident
    /// and a tempid); to a cardinality-one attribute it is one value (a lookup ref or tuple).
    fn values_into(
        &mut self,
        v: &TxValue,
        at: At<'_>,
        out: &mut Vec<Term>,
        vals: &mut Vec<V>,
    ) -> Result<(), TxError> {
        let attr = at.attr;
        match v {
            TxValue::Many(items) if attr.is_many() => {
                for i in items {
                    vals.push(self.single(i, at, out)?);
                }
            }
            one => vals.push(self.single(one, at, out)?),
        }
        Ok(())
    }

    fn single(&mut self, v: &TxValue, at: At<'_>, out: &mut Vec<Term>) -> Result<V, TxError> {
        let At { attr, form } = at;
        if attr.is_ref() {
            return self.ref_value(v, at, out);
        }
        match v {
            TxValue::Value(x) => Ok(V::Val(check_type(attr, x.clone(), form)?)),
            // One tuple written as a vector.
            TxValue::Many(items) if attr.value_type == ValueType::Tuple => {
                let mut elems = Vec::with_capacity(items.len());
                for i in items {
                    match i {
                        TxValue::Value(x) => elems.push(Some(x.clone())),
                        TxValue::Many(inner) => {
                            match self.single(&TxValue::Many(inner.clone()), at, out)? {
                                V::Val(t) => elems.push(Some(t)),
                                V::Ent(_) => unreachable!("tuples are plain values"),
                            }
                        }
                        other => {
                            return Err(TxError::WrongType {
                                attr: attr.ident.to_string(),
                                expected: "a tuple of plain values".into(),
                                got: other.to_string(),
                                form: form(),
                            })
                        }
                    }
                }
                Ok(V::Val(check_type(attr, Value::Tuple(elems), form)?))
            }
            TxValue::Many(_) if !attr.is_many() => Err(TxError::WrongType {
                attr: attr.ident.to_string(),
                expected: "a single value (the attribute is cardinality one)".into(),
                got: print::tx_value_text(v),
                form: form(),
            }),
            other => Err(TxError::WrongType {
                attr: attr.ident.to_string(),
                expected: attr.value_type.ident().to_string(),
                got: other.to_string(),
                form: form(),
            }),
        }
    }

    /// A value of a ref attribute: an id, a tempid, an ident, a lookup ref (a vector
    /// `[attribute value]`) or a nested map.
    fn ref_value(&mut self, v: &TxValue, at: At<'_>, out: &mut Vec<Term>) -> Result<V, TxError> {
        let At { attr, form } = at;
        // A schema property's ident (`:db/valueType :db.type/string`): its built-in entity,
        // or an error naming the value (it names no value of the property).
        if let Some(property) = IdentProperty::of_attr(attr.id) {
            if let TxValue::Value(Value::Keyword(k)) | TxValue::Entity(EntityRef::Ident(k)) = v {
                return match property.entity(k) {
                    Some(e) => Ok(V::Val(Value::Ref(e))),
                    None => Err(TxError::InvalidSchemaValue {
                        property: property.name().to_string(),
                        names_entity: self.schema.by_ident(k).is_some()
                            || crate::store::bootstrap::is_builtin_ident(k),
                        value: k.to_string(),
                        expected: property.expected(),
                        form: form(),
                    }),
                };
            }
        }
        Ok(match v {
            TxValue::Value(Value::Ref(id)) => V::Val(Value::Ref(*id)),
            TxValue::Value(Value::Long(n)) if *n >= 0 => V::Val(Value::Ref(*n as u64)),
            TxValue::Value(Value::Long(n)) if *n < 0 => V::Ent(E::Temp(Tempid::Negative(*n))),
            // A big integer is the entity id it spells, as Datomic reads a number there.
            TxValue::Value(Value::BigInt(n)) if i64::try_from(**n).is_ok() => {
                return self.ref_value(&TxValue::Value(Value::Long(**n as i64)), at, out)
            }
            TxValue::Value(Value::String(s)) if &**s == "datomic.tx" => {
                V::Ent(E::Temp(Tempid::CurrentTx))
            }
            // A string spelling an ident (`":color/red"`) names it, as in Datomic; any other
            // string is a tempid.
            TxValue::Value(Value::String(s)) => match crate::codec::Keyword::from_colon_text(s) {
                Some(k) => V::Ent(E::Ident(k)),
                None => V::Ent(E::Temp(Tempid::Named(s.clone()))),
            },
            TxValue::Value(Value::Keyword(k)) => V::Ent(E::Ident(k.clone())),
            TxValue::Entity(r) => V::Ent(self.entity(r, form)?),
            TxValue::Many(items) if lookup_shape(items).is_some() => {
                let (k, val) = lookup_shape(items).expect("checked");
                V::Ent(self.entity(&EntityRef::Lookup(k.clone(), val), form)?)
            }
            TxValue::Map(m) => {
                // A nested entity must be reachable other than through this one reference:
                // owned (a component), or named (`:db/id`, an identity value).
                if !attr.is_component && m.id.is_none() && !self.names_itself(m) {
                    return Err(TxError::InvalidNestedEntity {
                        attr: attr.ident.to_string(),
                        entity: print::map_text(m),
                        form: form(),
                    });
                }
                V::Ent(self.map(m, out)?)
            }
            // A collection that is no lookup ref, and any other value: Datomic reads a ref's
            // value in entity position, where these name no entity.
            TxValue::Many(items) => return Err(not_a_lookup_ref(v, items, form)),
            other => {
                return Err(TxError::UnresolvableEntity {
                    entity: other.to_string(),
                    form: form(),
                })
            }
        })
    }

    /// Whether a map asserts a `:db.unique/identity` attribute (so it upserts or is found by
    /// that value).
    fn names_itself(&self, m: &EntityMap) -> bool {
        m.attrs.iter().any(|(name, _)| {
            !name.reverse
                && self
                    .schema
                    .by_ident(&name.attr)
                    .is_some_and(|a| is_identity(a))
        })
    }
}

/// A `:db/cas` old value of a ref attribute, compared as given (as Datomic does): an entity
/// id matches the current reference; an ident, a lookup ref or a tempid is not resolved, so
/// it matches none and the cas fails, naming the value as written.
fn cas_old_ref(v: &TxValue, form: &dyn Fn() -> String) -> Result<Value, TxError> {
    Ok(match v {
        TxValue::Value(Value::Long(n)) if *n >= 0 => Value::Ref(*n as u64),
        TxValue::Value(x) => x.clone(),
        TxValue::Entity(EntityRef::Id(id)) => Value::Ref(*id),
        TxValue::Entity(EntityRef::Ident(k)) => Value::Keyword(k.clone()),
        TxValue::Entity(EntityRef::Lookup(k, x)) => {
            Value::Tuple(vec![Some(Value::Keyword(k.clone())), Some(x.clone())])
        }
        TxValue::Entity(EntityRef::Temp(Tempid::Named(t))) => Value::string(t),
        TxValue::Entity(EntityRef::Temp(Tempid::Negative(n))) => Value::Long(*n),
        TxValue::Entity(EntityRef::Temp(t)) => Value::string(&t.to_string()),
        TxValue::Many(items) => Value::Tuple(
            items
                .iter()
                .map(|i| match i {
                    TxValue::Value(x) => Ok(Some(x.clone())),
                    other => cas_old_ref(other, form).map(Some),
                })
                .collect::<Result<_, _>>()?,
        ),
        TxValue::Map(m) => {
            return Err(TxError::Malformed {
                detail: format!(
                    ":db/cas compares the old value as given: {} is a map, not a value",
                    print::map_text(m)
                ),
                form: form(),
            })
        }
    })
}

/// Why a collection in entity position (a ref's value, a reverse attribute's) is no lookup
/// ref, as Datomic tells it: a string first is no keyword, another first element no
/// attribute, and another length no lookup ref at all.
fn not_a_lookup_ref(v: &TxValue, items: &[TxValue], form: &dyn Fn() -> String) -> TxError {
    let lookup = || print::tx_value_text(v);
    match items {
        [first @ TxValue::Value(Value::String(_)), _] => TxError::NotAKeyword {
            value: print::tx_value_text(first),
            lookup: lookup(),
            form: form(),
        },
        [TxValue::Value(Value::Keyword(_)), _] => TxError::InvalidLookupRef {
            lookup: lookup(),
            form: form(),
        },
        [first, _] => TxError::NotAnAttribute {
            value: print::tx_value_text(first),
            lookup: lookup(),
            form: form(),
        },
        _ => TxError::InvalidLookupRef {
            lookup: lookup(),
            form: form(),
        },
    }
}

/// The attribute and value of a vector shaped as a lookup ref, `[:attribute value]` (a
/// vector value becomes a tuple: a lookup on a tuple attribute).
fn lookup_shape(items: &[TxValue]) -> Option<(&Keyword, Value)> {
    match items {
        [TxValue::Value(Value::Keyword(k)), TxValue::Value(v)] => Some((k, v.clone())),
        [TxValue::Value(Value::Keyword(k)), TxValue::Many(inner)] => {
            let elems = inner
                .iter()
                .map(|i| match i {
                    TxValue::Value(v) => Some(Some(v.clone())),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some((k, Value::Tuple(elems)))
        }
        _ => None,
    }
}

/// Checks (and where lossless, widens) a value for its attribute's type.
pub fn check_type(attr: &Attribute, v: Value, form: &dyn Fn() -> String) -> Result<Value, TxError> {
    if !v.is_storable() {
        return Err(TxError::NotStorable {
            attr: attr.ident.to_string(),
            value: format!("{v:?}"),
            form: form(),
        });
    }
    if v.value_type() == Some(attr.value_type) {
        if let Value::Tuple(elems) = &v {
            if let Some(reason) = tuple_shape_error(attr, elems) {
                return Err(TxError::InvalidTupleValue {
                    attr: attr.ident.to_string(),
                    value: v.to_string(),
                    reason,
                    form: form(),
                });
            }
        }
        // Deeper tuples would be stored but refused when read back.
        if v.tuple_depth() > crate::limits::MAX_TUPLE_DEPTH {
            return Err(TxError::Malformed {
                detail: format!(
                    "tuples nest at most {} deep",
                    crate::limits::MAX_TUPLE_DEPTH
                ),
                form: form(),
            });
        }
        return Ok(v);
    }
    // A string or a symbol for a keyword attribute is read as a keyword, as Datomic reads
    // it: the symbol `dev` and the string `":dev"` are `:dev`; a string without the colon is
    // refused as no keyword.
    if let (ValueType::Keyword, Value::Symbol(k)) = (attr.value_type, &v) {
        return Ok(Value::Keyword(k.clone()));
    }
    if let (ValueType::Keyword, Value::String(s)) = (attr.value_type, &v) {
        return match crate::codec::Keyword::from_colon_text(s) {
            Some(k) => Ok(Value::Keyword(k)),
            None => Err(TxError::KeywordStringWithoutColon {
                attr: attr.ident.to_string(),
                value: v.to_string(),
                form: form(),
            }),
        };
    }
    // EDN has one floating-point type: a double written for a float attribute is narrowed
    // (as Datomic does), unless it is out of the float range.
    if let (ValueType::Float, Value::Double(x)) = (attr.value_type, &v) {
        let narrowed = x.get() as f32;
        if narrowed.is_finite() || !x.get().is_finite() {
            if let Some(f) = Value::float(narrowed) {
                return Ok(f);
            }
        }
    }
    Err(TxError::WrongType {
        attr: attr.ident.to_string(),
        expected: attr.value_type.ident().to_string(),
        got: v.to_string(),
        form: form(),
    })
}

/// Elements a homogeneous tuple (`:db/tupleType`) has at least and at most, as in Datomic.
const HOMOGENEOUS_TUPLE_ARITY: std::ops::RangeInclusive<usize> = 2..=8;

/// Why `elems` is no value of tuple attribute `attr`, if it is not: the arity or an element
/// type differs from `:db/tupleTypes`, or from `:db/tupleType`. An element may be nil.
/// Composite tuples (`:db/tupleAttrs`) are not checked here.
pub(crate) fn tuple_shape_error(attr: &Attribute, elems: &[Option<Value>]) -> Option<String> {
    let types: Vec<ValueType> = match (&attr.tuple_types, attr.tuple_type) {
        (Some(types), _) => {
            if elems.len() != types.len() {
                return Some(format!(
                    "{} elements where :db/tupleTypes has {}",
                    elems.len(),
                    types.len()
                ));
            }
            types.clone()
        }
        (None, Some(t)) => {
            if !HOMOGENEOUS_TUPLE_ARITY.contains(&elems.len()) {
                return Some(format!(
                    "{} elements where a :db/tupleType tuple has {} to {}",
                    elems.len(),
                    HOMOGENEOUS_TUPLE_ARITY.start(),
                    HOMOGENEOUS_TUPLE_ARITY.end()
                ));
            }
            vec![t; elems.len()]
        }
        (None, None) => return None,
    };
    elems
        .iter()
        .zip(types)
        .enumerate()
        .find_map(|(i, (elem, t))| match elem {
            Some(x) if x.value_type() != Some(t) => {
                Some(format!("element {} is {x}, not a {}", i + 1, t.ident()))
            }
            _ => None,
        })
}

/// Whether a term defines schema (its entity goes in the attribute partition).
pub fn defines_attribute(t: &Term) -> bool {
    matches!(t, Term::Add(_, a, _) if a.id == builtin::VALUE_TYPE)
}

/// Whether `attr` upserts.
pub fn is_identity(attr: &Attribute) -> bool {
    attr.unique == Some(Unique::Identity)
}
