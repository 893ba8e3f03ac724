//! Stage 3: terms with ids. Lookup refs and idents are looked up, tempids upsert through
//! `:db.unique/identity` attributes (two tempids asserting the same identity value become one
//! entity), and the rest get fresh ids.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::av;
use super::data::Tempid;
use super::error::TxError;
use super::terms::{defines_attribute, is_identity, Term, E, V};
use crate::codec::Value;
use crate::kv::Direction;
use crate::store::ids::{AttrId, EntityId, ATTR_PARTITION_END, TX_PARTITION_START};
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::schema::{Attribute, Schema};
use crate::store::StoreError;
use std::ops::Bound;

/// A term whose entities are ids.
#[derive(Debug)]
pub enum Resolved {
    /// Assert `[e a v]`.
    Add(EntityId, Arc<Attribute>, Value),
    /// Retract `[e a v]`, or every value of `a` on `e`.
    Retract(EntityId, Arc<Attribute>, Option<Value>),
    /// Retract the entity.
    RetractEntity(EntityId),
    /// A `:db/cas` (compare and swap): its new value, or why that value names nothing, which matters only if the
    /// compare holds (Datomic compares first).
    Cas(
        EntityId,
        Arc<Attribute>,
        Option<Value>,
        Box<Result<Value, TxError>>,
    ),
    /// Nothing: the retraction of an entity that a lookup ref or ident names but that does
    /// not exist (Datomic makes it a no-op).
    Nothing,
}

/// Id allocation state carried from the store's counters.
#[derive(Debug, Clone, Copy)]
pub struct Counters {
    /// Next free user entity id.
    pub next_entity: EntityId,
    /// Next free attribute id.
    pub next_attr: EntityId,
    /// This transaction's entity id.
    pub tx: EntityId,
}

/// Ids allocated by one transaction (and its tx id): they have no datoms yet, so the datom
/// stage need not look them up. Allocation takes ids in order from the counters, so they are
/// two ranges and the tx id.
#[derive(Debug, Clone, Copy)]
pub struct Fresh {
    entities: (EntityId, EntityId),
    attrs: (EntityId, EntityId),
    tx: EntityId,
}

impl Fresh {
    /// Whether `e` was allocated by the transaction.
    #[inline]
    pub fn contains(&self, e: EntityId) -> bool {
        e == self.tx
            || (self.entities.0 <= e && e < self.entities.1)
            || (self.attrs.0 <= e && e < self.attrs.1)
    }

    /// How many entity ids (attribute ids and the tx id aside) were allocated.
    pub fn entity_count(&self) -> usize {
        (self.entities.1 - self.entities.0) as usize
    }

    /// `e`'s number among the allocated entity ids (attribute ids and the tx id aside).
    #[inline]
    pub fn entity_index(&self, e: EntityId) -> Option<usize> {
        (self.entities.0 <= e && e < self.entities.1).then(|| (e - self.entities.0) as usize)
    }

    /// The transaction's own entity id.
    pub fn tx(&self) -> EntityId {
        self.tx
    }
}

/// Identity values a transaction's tempids assert, by av bytes: the first tempid asserting
/// each, the database's first holder of it (looked up once, reused by the datom stage's
/// uniqueness check), and the value's number in order of first appearance.
pub type Known = HashMap<av::AvBytes, (Tempid, Option<EntityId>, u32)>;

/// Fills in the database's first holder of every value of `known`. The values are looked up
/// in key order, and one seek past a value shows every value before the key it lands on to be
/// absent: a transaction of new ascending keys costs one B-tree search, not one per key.
fn first_holders(r: &IndexReader<'_>, known: &mut Known) -> Result<(), TxError> {
    let mut found: Vec<(av::AvBytes, EntityId)> = Vec::new();
    {
        let mut keys: Vec<(u32, &[u8])> = Vec::with_capacity(known.len());
        for (b, (_, _, seq)) in known.iter() {
            if av::is_inline(b) {
                keys.push((*seq, b));
            } else if let Some(h) = av::first_holder(r, &av::index_key(b))? {
                found.push((b.clone(), h));
            }
        }
        // The map gives its keys in no order, but values usually come in key order (new
        // ascending keys): ordered by first appearance (integers) they are then sorted
        // already, and the byte comparisons of a full sort (~2% of the committer's time at W
        // batch 1000) are skipped.
        keys.sort_unstable_by_key(|k| k.0);
        if !keys.is_sorted_by(|a, b| a.1 <= b.1) {
            keys.sort_unstable_by(|a, b| a.1.cmp(b.1));
        }
        let mut i = 0;
        while i < keys.len() {
            // Bounded by the last key sought: nothing past it can answer, and a read no wider
            // than needed meets fewer of the batch's pending writes (`kv::pending`).
            let seek = r
                .view
                .range(
                    &r.t.ave,
                    Bound::Included(keys[i].1),
                    Bound::Included(keys[keys.len() - 1].1),
                    Direction::Forward,
                )?
                .next();
            let Some(entry) = seek else { break };
            let (key, value) = entry?;
            while i < keys.len() && keys[i].1 < key {
                i += 1;
            }
            if i < keys.len() && keys[i].1 == key {
                let holder = keys::read_entity(value).ok_or_else(|| StoreError::Corrupt {
                    detail: format!("AVE entity: {} bytes", value.len()),
                })?;
                found.push((av::AvBytes::from_slice(keys[i].1), holder));
                i += 1;
            }
        }
    }
    for (b, h) in found {
        if let Some(entry) = known.get_mut(&b) {
            entry.1 = Some(h);
        }
    }
    Ok(())
}

/// Resolves entities against one state of the database.
pub struct Resolver<'a> {
    r: IndexReader<'a>,
    schema: &'a Schema,
    /// Counters as the transaction found them.
    start: Counters,
    /// Counters, advanced by allocation.
    pub counters: Counters,
    /// Final tempid -> id map (the report's tempids).
    pub tempids: HashMap<Tempid, EntityId>,
    /// Identity values looked up while resolving tempids.
    pub known: Known,
    /// A tempid the terms use only as a value, as EDN (refused after the terms are applied).
    only_value: Option<String>,
}

impl<'a> Resolver<'a> {
    /// A resolver.
    pub fn new(r: IndexReader<'a>, schema: &'a Schema, counters: Counters) -> Self {
        Resolver {
            r,
            schema,
            start: counters,
            counters,
            tempids: HashMap::default(),
            known: HashMap::default(),
            only_value: None,
        }
    }

    /// The ids allocated so far.
    pub fn fresh(&self) -> Fresh {
        Fresh {
            entities: (self.start.next_entity, self.counters.next_entity),
            attrs: (self.start.next_attr, self.counters.next_attr),
            tx: self.counters.tx,
        }
    }

    fn lookup(&self, a: AttrId, v: &Value) -> Result<EntityId, TxError> {
        match self.r.first_entity_with(a, v)? {
            Some(e) => Ok(e),
            None => Err(TxError::LookupNotFound {
                attr: self
                    .schema
                    .get(a)
                    .map(|x| x.ident.to_string())
                    .unwrap_or_else(|| a.to_string()),
                value: v.to_string(),
            }),
        }
    }

    fn ident(&self, k: &crate::codec::Keyword) -> Result<EntityId, TxError> {
        if let Some(attr) = self.schema.by_ident(k) {
            return Ok(attr.id as EntityId);
        }
        match crate::store::load::entity_of_ident(&self.r, k)? {
            Some(e) => Ok(e),
            None => Err(TxError::IdentNotFound {
                ident: k.to_string(),
            }),
        }
    }

    /// The entity `e` names, or `None` for a lookup ref or ident that names none.
    fn existing(&self, e: &E) -> Result<Option<EntityId>, TxError> {
        match e {
            E::Lookup(a, v) => Ok(self.r.first_entity_with(*a, v)?),
            E::Ident(k) => match self.ident(k) {
                Err(TxError::IdentNotFound { .. }) => Ok(None),
                other => other.map(Some),
            },
            other => self.entity(other).map(Some),
        }
    }

    /// Whether `e`, a lookup ref or an ident, names an entity (the error naming it if not).
    pub fn names(&self, e: &E) -> Result<(), TxError> {
        self.fixed(e).map(|_| ())
    }

    /// An entity that is not a tempid.
    fn fixed(&self, e: &E) -> Result<Option<EntityId>, TxError> {
        Ok(match e {
            E::Id(id) => Some(*id),
            E::Lookup(a, v) => Some(self.lookup(*a, v)?),
            E::Ident(k) => Some(self.ident(k)?),
            E::Temp(Tempid::CurrentTx) => Some(self.counters.tx),
            E::Temp(_) => None,
        })
    }

    /// Decides every tempid of `terms`.
    pub fn resolve_tempids(&mut self, terms: &[Term]) -> Result<(), TxError> {
        let mut parent: HashMap<Tempid, Tempid> = HashMap::default();
        fn find(parent: &mut HashMap<Tempid, Tempid>, t: &Tempid) -> Tempid {
            let mut cur = t.clone();
            while let Some(p) = parent.get(&cur) {
                if *p == cur {
                    break;
                }
                cur = p.clone();
            }
            cur
        }
        let mut by_value = std::mem::take(&mut self.known);
        by_value.clear();
        // Sized once: grown insert by insert, a thousand-entity transaction rehashes each
        // map about ten times.
        let (identity_terms, temp_terms) = terms.iter().fold((0, 0), |(i, t), term| match term {
            Term::Add(E::Temp(_), attr, _) => (i + usize::from(is_identity(attr)), t + 1),
            _ => (i, t),
        });
        by_value.reserve(identity_terms);
        self.tempids.reserve(temp_terms / 2);
        let mut attribute_tempids: Vec<Tempid> = Vec::new();
        for term in terms {
            if let Term::Add(E::Temp(t), _, _) = term {
                if defines_attribute(term) {
                    attribute_tempids.push(t.clone());
                }
            }
            let Term::Add(E::Temp(t), attr, v) = term else {
                continue;
            };
            if *t == Tempid::CurrentTx || !is_identity(attr) {
                continue;
            }
            let b = match v {
                V::Val(v) => av::av(attr.id, v),
                V::Ent(e) => match self.fixed(e)? {
                    Some(id) => av::av(attr.id, &Value::Ref(id)),
                    None => continue,
                },
            };
            match by_value.get(&b) {
                Some((other, _, _)) => {
                    let (ra, rb) = (find(&mut parent, t), find(&mut parent, other));
                    if ra != rb {
                        parent.insert(ra, rb);
                    }
                }
                None => {
                    let seq = by_value.len() as u32;
                    by_value.insert(b, (t.clone(), None, seq));
                }
            }
        }
        // Every tempid asserting a value is united with the value's first tempid, so the
        // first one stands for all of them (in order of first appearance).
        first_holders(&self.r, &mut by_value)?;
        let mut found: Vec<(u32, Tempid, EntityId)> = by_value
            .values()
            .filter_map(|(t, holder, seq)| holder.map(|h| (*seq, t.clone(), h)))
            .collect();
        found.sort_unstable_by_key(|f| f.0);
        let candidates = found.into_iter().map(|(_, t, h)| (t, h));
        self.known = by_value;
        let mut upserted: HashMap<Tempid, EntityId> = HashMap::default();
        for (t, existing) in candidates {
            let root = find(&mut parent, &t);
            match upserted.get(&root) {
                Some(&other) if other != existing => {
                    return Err(TxError::TempidConflict {
                        tempid: t.to_string(),
                        first: other,
                        second: existing,
                    })
                }
                _ => {
                    upserted.insert(root, existing);
                }
            }
        }
        let attribute_roots: Vec<Tempid> = attribute_tempids
            .iter()
            .map(|t| find(&mut parent, t))
            .collect();
        let mut allocated: HashMap<Tempid, EntityId> = HashMap::default();
        // The tempid visited last: the terms of one map share it, and a comparison (the
        // same `Arc` for a map's terms) is cheaper than hashing it again.
        let mut last: Option<&Tempid> = None;
        // No identity value was shared or found and no tempid names an attribute: every
        // tempid is its own root and new, so one map probe decides it.
        let plain = parent.is_empty() && upserted.is_empty() && attribute_roots.is_empty();
        // Tempids used as values, with their ids, and the fresh entity ids some term is about
        // (a bit per id from the first fresh one): a tempid used only as a value names an
        // entity nothing is asserted about, which Datomic refuses. Only a fresh id can be
        // such: a tempid upserts, or names an attribute, only as a term's entity.
        let mut value_tempids: Vec<(&Tempid, EntityId)> = Vec::new();
        let mut subjects: Vec<u64> = Vec::new();
        let first_fresh = self.start.next_entity;
        for term in terms {
            let mut visit = |t: &Tempid, this: &mut Self| -> Result<EntityId, TxError> {
                if plain && *t != Tempid::CurrentTx {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        this.tempids.entry(t.clone())
                    {
                        let id = this.counters.next_entity;
                        if id >= TX_PARTITION_START {
                            return Err(TxError::IdsExhausted);
                        }
                        this.counters.next_entity += 1;
                        return Ok(*slot.insert(id));
                    }
                    return Ok(this.tempids[t]);
                }
                if let Some(&id) = this.tempids.get(t) {
                    return Ok(id);
                }
                if *t == Tempid::CurrentTx {
                    this.tempids.insert(t.clone(), this.counters.tx);
                    return Ok(this.counters.tx);
                }
                let root = find(&mut parent, t);
                let id = if let Some(&id) = upserted.get(&root) {
                    id
                } else if let Some(&id) = allocated.get(&root) {
                    id
                } else {
                    let id = if attribute_roots.contains(&root) {
                        let id = this.counters.next_attr;
                        if id >= ATTR_PARTITION_END {
                            return Err(TxError::IdsExhausted);
                        }
                        this.counters.next_attr += 1;
                        id
                    } else {
                        let id = this.counters.next_entity;
                        if id >= TX_PARTITION_START {
                            return Err(TxError::IdsExhausted);
                        }
                        this.counters.next_entity += 1;
                        id
                    };
                    allocated.insert(root, id);
                    id
                };
                this.tempids.insert(t.clone(), id);
                Ok(id)
            };
            let (e, v) = match term {
                Term::Add(e, _, v) => (e, Some(v)),
                Term::Cas(c) => (&c.0, Some(&c.3)),
                Term::Retract(e, _, v) => (e, v.as_ref()),
                Term::RetractEntity(e) | Term::Names(e) => (e, None),
            };
            if let E::Temp(t) = e {
                if last != Some(t) {
                    let id = visit(t, self)?;
                    last = Some(t);
                    let fresh = id >= first_fresh && id < self.counters.next_entity;
                    if let Some(i) = id.checked_sub(first_fresh).filter(|_| fresh) {
                        let (word, bit) = ((i / 64) as usize, i % 64);
                        if subjects.len() <= word {
                            subjects.resize(word + 1, 0);
                        }
                        subjects[word] |= 1 << bit;
                    }
                }
            }
            if let Some(V::Ent(E::Temp(t))) = v {
                let id = visit(t, self)?;
                value_tempids.push((t, id));
            }
        }
        let fresh_end = self.counters.next_entity;
        let is_subject = |id: EntityId| match id.checked_sub(first_fresh) {
            Some(i) if id < fresh_end => subjects
                .get((i / 64) as usize)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            _ => true,
        };
        // Refused once the terms are applied (`check_only_values`): Datomic reports a failed
        // `:db/cas` or a lookup ref that names nothing first.
        self.only_value = value_tempids
            .iter()
            .find(|(_, id)| !is_subject(*id))
            .map(|(t, _)| t.to_string());
        Ok(())
    }

    /// Refuses a tempid that the terms use only as a value (found by `resolve_tempids`).
    pub fn check_only_values(&self) -> Result<(), TxError> {
        match &self.only_value {
            Some(tempid) => Err(TxError::TempidOnlyValue {
                tempid: tempid.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses an assertion about entity id `id` when no id that high was ever made in its
    /// partition (Datomic's `:db.error/invalid-entity-id`): a new entity comes from a tempid,
    /// so an id past the counters is a mistake (a typo, an id of another database), not a
    /// new entity. The transaction's own id is made.
    fn made(&self, id: EntityId, a: &Attribute) -> Result<(), TxError> {
        use crate::store::ids::{partition_of, Partition};
        let made = match partition_of(id) {
            Partition::Attributes => id < self.counters.next_attr,
            Partition::User => id < self.counters.next_entity,
            Partition::Transactions => id <= self.counters.tx,
        };
        if made {
            return Ok(());
        }
        Err(TxError::NoSuchEntity {
            entity: id,
            form: format!("[:db/add {id} {} ...]", a.ident),
        })
    }

    fn entity(&self, e: &E) -> Result<EntityId, TxError> {
        match e {
            E::Temp(t) => self
                .tempids
                .get(t)
                .copied()
                .ok_or_else(|| TxError::Malformed {
                    detail: format!("tempid {t} was not resolved"),
                    form: t.to_string(),
                }),
            other => Ok(self
                .fixed(other)?
                .expect("non-temp entities resolve or fail")),
        }
    }

    fn value(&self, v: V) -> Result<Value, TxError> {
        match v {
            V::Val(v) => Ok(v),
            V::Ent(e) => Ok(Value::Ref(self.entity(&e)?)),
        }
    }

    /// Resolves `term` (after [`Self::resolve_tempids`]); `last` carries the last tempid
    /// resolved and its id from one call to the next (a map's terms share their tempid, and
    /// a comparison is cheaper than hashing it again).
    pub fn resolve(
        &self,
        term: Term,
        last: &mut Option<(Tempid, EntityId)>,
    ) -> Result<Resolved, TxError> {
        Ok(match term {
            Term::Add(E::Temp(t), a, v) => {
                let id = match last {
                    Some((lt, id)) if *lt == t => *id,
                    _ => {
                        let id = self.entity(&E::Temp(t.clone()))?;
                        *last = Some((t, id));
                        id
                    }
                };
                Resolved::Add(id, a, self.value(v)?)
            }
            Term::Add(e, a, v) => {
                if let E::Id(id) = e {
                    self.made(id, &a)?;
                }
                Resolved::Add(self.entity(&e)?, a, self.value(v)?)
            }
            Term::Retract(e, a, v) => {
                // Retracting a value that names no entity retracts nothing.
                let v = match v {
                    None => None,
                    Some(v) => Some(self.value(v)?),
                };
                Resolved::Retract(self.entity(&e)?, a, v)
            }
            Term::RetractEntity(e) => match self.existing(&e)? {
                Some(id) => Resolved::RetractEntity(id),
                None => Resolved::Nothing,
            },
            Term::Names(e) => {
                self.names(&e)?;
                Resolved::Nothing
            }
            Term::Cas(c) => {
                let (e, a, old, new) = *c;
                // A lookup ref that names nothing names an entity without values: Datomic's
                // compare then fails (`:db.error/cas-failed`) unless nil was expected, before
                // any later term is read.
                if let (E::Lookup(la, lv), Some(expected)) = (&e, &old) {
                    if self.existing(&e)?.is_none() {
                        let ident = self.schema.get(*la).map(|x| x.ident.to_string());
                        return Err(TxError::CasOnNothing {
                            entity: format!(
                                "[{} {}]",
                                ident.unwrap_or_else(|| la.to_string()),
                                crate::tx::print::value_text(lv)
                            ),
                            attr: a.ident.to_string(),
                            expected: match expected {
                                V::Val(v) => crate::tx::print::value_text(v),
                                V::Ent(x) => format!("{x:?}"),
                            },
                        });
                    }
                }
                let old = match old {
                    None => None,
                    Some(o) => Some(self.value(o)?),
                };
                Resolved::Cas(self.entity(&e)?, a, old, Box::new(self.value(new)))
            }
        })
    }
}
