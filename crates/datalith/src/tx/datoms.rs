//! Stage 4: datoms. Resolved terms are applied to an in-memory overlay of the database
//! (Datascript computes a transaction the same way): cardinality-one assertions retract the
//! old value, redundant assertions vanish, uniqueness and `:db/cas` are checked, and
//! `:db/retractEntity` expands to the entity's datoms, its components and references to it.
//! The result is the net change against the database: the datoms to write.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use super::error::TxError;
use super::resolve::Resolved;
use crate::codec::{self, Value};
use crate::store::ids::{AttrId, EntityId};
use crate::store::reader::{decode_exact, IndexReader};
use crate::store::schema::{Attribute, Schema};
use crate::store::Datom;

struct Presence {
    original: bool,
    now: bool,
    value: Value,
}

/// The overlay of one transaction.
pub struct DatomBuilder<'a> {
    r: IndexReader<'a>,
    schema: &'a Schema,
    tx: EntityId,
    /// Datoms touched, by entity and attribute (a short list of values each), so a lookup by
    /// borrowed value bytes needs no allocation.
    presence: HashMap<(EntityId, AttrId), Vec<(Vec<u8>, Presence)>>,
    /// Order in which datoms were first touched (the report lists them in this order): entity,
    /// attribute and index in that pair's list.
    order: Vec<(EntityId, AttrId, usize)>,
    /// Values added in this transaction, by entity: for retractEntity and cardinality one.
    added: HashMap<EntityId, Vec<(AttrId, Vec<u8>, Value)>>,
    /// Cardinality-one values asserted explicitly in this transaction.
    asserted_one: HashMap<(EntityId, AttrId), Vec<u8>>,
    /// Holders of unique values asserted in this transaction.
    unique_holders: HashMap<(AttrId, Vec<u8>), EntityId>,
    retracted_entities: Vec<EntityId>,
    /// Entities created by this transaction: nothing of them is in the database yet.
    fresh: HashSet<EntityId>,
}

fn enc(v: &Value) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    codec::encode(v, &mut b);
    b
}

impl<'a> DatomBuilder<'a> {
    /// An empty overlay over `r`.
    pub fn new(
        r: IndexReader<'a>,
        schema: &'a Schema,
        tx: EntityId,
        fresh: HashSet<EntityId>,
    ) -> Self {
        DatomBuilder {
            r,
            schema,
            tx,
            presence: HashMap::default(),
            order: Vec::new(),
            added: HashMap::default(),
            asserted_one: HashMap::default(),
            unique_holders: HashMap::default(),
            retracted_entities: Vec::new(),
            fresh,
        }
    }

    fn present(&mut self, e: EntityId, a: AttrId, v: &Value, b: &[u8]) -> Result<bool, TxError> {
        if let Some(p) = self.lookup(e, a, b) {
            return Ok(p.now);
        }
        if self.fresh.contains(&e) {
            return Ok(false);
        }
        Ok(self.r.contains(e, a, v)?)
    }

    fn set(
        &mut self,
        e: EntityId,
        a: AttrId,
        v: Value,
        b: Vec<u8>,
        now: bool,
    ) -> Result<(), TxError> {
        match self.lookup_mut(e, a, &b) {
            Some(p) => p.now = now,
            None => {
                let original = !self.fresh.contains(&e) && self.r.contains(e, a, &v)?;
                let list = self.presence.entry((e, a)).or_default();
                self.order.push((e, a, list.len()));
                list.push((
                    b.clone(),
                    Presence {
                        original,
                        now,
                        value: v.clone(),
                    },
                ));
            }
        }
        if now {
            self.added.entry(e).or_default().push((a, b, v));
        }
        Ok(())
    }

    /// Current values of `[e a]` (database plus overlay), as (bytes, value).
    fn current(&mut self, e: EntityId, a: AttrId) -> Result<Vec<(Vec<u8>, Value)>, TxError> {
        let mut out = Vec::new();
        let stored = if self.fresh.contains(&e) {
            Vec::new()
        } else {
            self.r.values(e, a)?
        };
        for v in stored {
            let b = enc(&v);
            if self.present(e, a, &v, &b)? {
                out.push((b, v));
            }
        }
        if let Some(added) = self.added.get(&e) {
            let extra: Vec<_> = added
                .iter()
                .filter(|(aa, _, _)| *aa == a)
                .cloned()
                .collect();
            for (_, b, v) in extra {
                if !out.iter().any(|(ob, _)| *ob == b)
                    && self.lookup(e, a, &b).is_some_and(|p| p.now)
                {
                    out.push((b, v));
                }
            }
        }
        Ok(out)
    }

    fn assert(&mut self, e: EntityId, attr: &Arc<Attribute>, v: Value) -> Result<(), TxError> {
        let a = attr.id;
        let b = enc(&v);
        if attr.unique.is_some() {
            self.check_unique(e, attr, &v, &b)?;
        }
        if !attr.is_many() {
            if let Some(first) = self.asserted_one.get(&(e, a)) {
                if *first != b {
                    let first = decode_exact(first)
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_default();
                    return Err(TxError::DatomConflict {
                        entity: e,
                        attr: attr.ident.to_string(),
                        first,
                        second: format!("{v:?}"),
                    });
                }
            }
            self.asserted_one.insert((e, a), b.clone());
            for (ob, ov) in self.current(e, a)? {
                if ob != b {
                    self.set(e, a, ov, ob, false)?;
                }
            }
        }
        if !self.present(e, a, &v, &b)? {
            self.set(e, a, v, b, true)?;
        }
        Ok(())
    }

    fn check_unique(
        &mut self,
        e: EntityId,
        attr: &Attribute,
        v: &Value,
        b: &[u8],
    ) -> Result<(), TxError> {
        let conflict = |existing| TxError::UniqueConflict {
            attr: attr.ident.to_string(),
            value: format!("{v:?}"),
            existing,
            entity: e,
        };
        if let Some(&holder) = self.unique_holders.get(&(attr.id, b.to_vec())) {
            if holder != e {
                return Err(conflict(holder));
            }
        }
        for holder in self.r.entities_with(attr.id, v)? {
            if holder != e && self.present(holder, attr.id, v, b)? {
                return Err(conflict(holder));
            }
        }
        self.unique_holders.insert((attr.id, b.to_vec()), e);
        Ok(())
    }

    fn retract(&mut self, e: EntityId, a: AttrId, v: Value) -> Result<(), TxError> {
        let b = enc(&v);
        if self.present(e, a, &v, &b)? {
            self.set(e, a, v, b, false)?;
        }
        Ok(())
    }

    fn retract_entity(&mut self, e: EntityId) -> Result<(), TxError> {
        if self.retracted_entities.contains(&e) {
            return Ok(());
        }
        self.retracted_entities.push(e);
        // Its own datoms (and its components, recursively).
        let mut own: Vec<(AttrId, Value)> = self.r.entity(e)?;
        if let Some(added) = self.added.get(&e) {
            own.extend(added.iter().map(|(a, _, v)| (*a, v.clone())));
        }
        for (a, v) in own {
            let component = self
                .schema
                .get(a)
                .is_some_and(|x| x.is_component && x.is_ref());
            let b = enc(&v);
            if !self.present(e, a, &v, &b)? {
                continue;
            }
            self.set(e, a, v.clone(), b, false)?;
            if let (true, Value::Ref(child)) = (component, &v) {
                self.retract_entity(*child)?;
            }
        }
        // References to it, through every ref attribute's AVE entries.
        let target = Value::Ref(e);
        let tb = enc(&target);
        let ref_attrs: Vec<AttrId> = self
            .schema
            .attributes()
            .iter()
            .filter(|x| x.is_ref())
            .map(|x| x.id)
            .collect();
        for a in ref_attrs {
            for holder in self.r.entities_with(a, &target)? {
                self.retract(holder, a, target.clone())?;
            }
        }
        let incoming: Vec<(EntityId, AttrId)> = self
            .added
            .iter()
            .flat_map(|(h, vs)| {
                vs.iter()
                    .filter(|(_, b, _)| *b == tb)
                    .map(move |(a, _, _)| (*h, *a))
            })
            .collect();
        for (holder, a) in incoming {
            self.retract(holder, a, target.clone())?;
        }
        Ok(())
    }

    fn cas(
        &mut self,
        e: EntityId,
        attr: &Arc<Attribute>,
        old: Option<Value>,
        new: Value,
    ) -> Result<(), TxError> {
        let current = self.current(e, attr.id)?;
        let ok = match &old {
            None => current.is_empty(),
            Some(o) => current.len() == 1 && current[0].1 == *o,
        };
        if !ok {
            return Err(TxError::CasFailed {
                entity: e,
                attr: attr.ident.to_string(),
                expected: old
                    .map(|o| format!("{o:?}"))
                    .unwrap_or_else(|| "no value".into()),
                found: match current.first() {
                    Some((_, v)) => format!("{v:?}"),
                    None => "no value".into(),
                },
            });
        }
        self.assert(e, attr, new)
    }

    /// Applies one resolved term.
    pub fn apply(&mut self, term: Resolved) -> Result<(), TxError> {
        match term {
            Resolved::Add(e, attr, v) => self.assert(e, &attr, v),
            Resolved::Retract(e, attr, Some(v)) => self.retract(e, attr.id, v),
            Resolved::Retract(e, attr, None) => {
                for (_, v) in self.current(e, attr.id)? {
                    self.retract(e, attr.id, v)?;
                }
                Ok(())
            }
            Resolved::RetractEntity(e) => self.retract_entity(e),
            Resolved::Cas(e, attr, old, new) => self.cas(e, &attr, old, new),
        }
    }

    /// Keeps composite tuple attributes (`:db/tupleAttrs`) equal to their components, for every
    /// entity whose components this transaction touched (Datomic maintains them the same way).
    pub fn update_composites(&mut self) -> Result<(), TxError> {
        let composites: Vec<Arc<Attribute>> = self
            .schema
            .attributes()
            .into_iter()
            .filter(|a| a.tuple_attrs.is_some())
            .collect();
        if composites.is_empty() {
            return Ok(());
        }
        let touched: Vec<(EntityId, AttrId)> = self.presence.keys().copied().collect();
        for c in composites {
            let parts: Vec<Option<AttrId>> = c
                .tuple_attrs
                .as_ref()
                .expect("filtered")
                .iter()
                .map(|k| self.schema.by_ident(k).map(|a| a.id))
                .collect();
            let mut entities: Vec<EntityId> = touched
                .iter()
                .filter(|(_, a)| parts.contains(&Some(*a)))
                .map(|(e, _)| *e)
                .collect();
            entities.sort_unstable();
            entities.dedup();
            for e in entities {
                let mut items = Vec::with_capacity(parts.len());
                for p in &parts {
                    items.push(match p {
                        Some(a) => self.current(e, *a)?.into_iter().next().map(|(_, v)| v),
                        None => None,
                    });
                }
                if items.iter().all(Option::is_none) {
                    for (_, v) in self.current(e, c.id)? {
                        self.retract(e, c.id, v)?;
                    }
                } else {
                    self.assert(e, &c, Value::Tuple(items))?;
                }
            }
        }
        Ok(())
    }

    fn lookup(&self, e: EntityId, a: AttrId, b: &[u8]) -> Option<&Presence> {
        self.presence
            .get(&(e, a))?
            .iter()
            .find(|(x, _)| x == b)
            .map(|(_, p)| p)
    }

    fn lookup_mut(&mut self, e: EntityId, a: AttrId, b: &[u8]) -> Option<&mut Presence> {
        self.presence
            .get_mut(&(e, a))?
            .iter_mut()
            .find(|(x, _)| x == b)
            .map(|(_, p)| p)
    }

    /// The net change against the database, in the order datoms were first touched.
    pub fn finish(self) -> Vec<(Datom, Vec<u8>)> {
        let tx = self.tx;
        let mut presence = self.presence;
        let mut out = Vec::with_capacity(self.order.len());
        for (e, a, i) in self.order {
            let Some(list) = presence.get_mut(&(e, a)) else {
                continue;
            };
            let (b, p) = std::mem::replace(
                &mut list[i],
                (
                    Vec::new(),
                    Presence {
                        original: false,
                        now: false,
                        value: Value::Boolean(false),
                    },
                ),
            );
            if p.original != p.now {
                out.push((
                    Datom {
                        e,
                        a,
                        v: p.value,
                        tx,
                        added: p.now,
                    },
                    b,
                ));
            }
        }
        out
    }
}
