//! Stage 4: datoms. Resolved terms are applied to an in-memory overlay of the database
//! (Datascript computes a transaction the same way): cardinality-one assertions retract the
//! old value, redundant assertions vanish, uniqueness and `:db/cas` are checked, and
//! `:db/retractEntity` expands to the entity's datoms, its components and references to it.
//! The result is the net change against the database: the datoms to write. Retractions,
//! `:db/retractEntity` and `:db/cas` are in `retract.rs`.

mod retract;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::hash_map::Entry as MapEntry;
use std::sync::Arc;

use super::av::{self, av, AvBytes};
use super::error::TxError;
use super::print::value_text;
use super::resolve::{Fresh, Known, Resolved};
use crate::codec::Value;
use crate::store::ids::{AttrId, EntityId};
use crate::store::reader::IndexReader;
use crate::store::schema::{builtin, Attribute, Schema};
use crate::store::Datom;

/// A transaction's net datoms and, at the same positions, their av bytes (see `av`): two
/// vectors, so the datoms become the report's tx data as they are and the bytes go back to be
/// freed, with no pass to take pairs apart.
#[derive(Debug, Default)]
pub struct NetDatoms {
    /// The net datoms, in the order the transaction made them.
    pub datoms: Vec<Datom>,
    /// Each datom's av bytes, at the datom's position.
    pub av: Vec<AvBytes>,
}

impl NetDatoms {
    /// Each datom with its av bytes.
    pub fn iter(&self) -> impl Iterator<Item = (&Datom, &AvBytes)> {
        debug_assert_eq!(self.datoms.len(), self.av.len());
        self.datoms.iter().zip(&self.av)
    }

    /// How many datoms.
    pub fn len(&self) -> usize {
        self.datoms.len()
    }
}

/// End of an entry chain.
const NONE: u32 = u32::MAX;

/// One datom the transaction looked at: whether the database holds it (`original`) and
/// whether it holds it after the transaction so far (`now`).
struct Entry {
    e: EntityId,
    a: AttrId,
    /// `a ++ encoded value` (see `av`).
    av: AvBytes,
    value: Value,
    original: bool,
    now: bool,
    /// Set by an assertion or retraction (not only noted as explicitly asserted).
    touched: bool,
    /// Asserted by a term of the transaction (held before or not).
    asserted: bool,
    /// Retracted by a term of the transaction (held before or not).
    retracted: bool,
    /// The next entry of the same `[e a]`, or `NONE`.
    next: u32,
}

impl Entry {
    /// A datom the database does not hold, asserted by the transaction (not yet chained).
    fn asserted(e: EntityId, a: AttrId, av: AvBytes, value: Value) -> Entry {
        Entry {
            e,
            a,
            av,
            value,
            original: false,
            now: true,
            touched: true,
            asserted: true,
            retracted: false,
            next: NONE,
        }
    }
}

/// Where the state of one datom is known from.
#[derive(Clone, Copy)]
enum Seen {
    /// An entry of the overlay.
    Entry(u32),
    /// The database, untouched by this transaction: whether it holds the datom.
    Db(bool),
}

/// The overlay of one transaction.
pub struct DatomBuilder<'a> {
    r: IndexReader<'a>,
    schema: &'a Schema,
    tx: EntityId,
    /// Every datom touched, in the order first touched (the report lists them in this order).
    /// One flat vector and chains per `[e a]`: no allocation per datom beyond its bytes.
    entries: Vec<Entry>,
    /// First and last entry of each `[e a]` touched.
    heads: HashMap<(EntityId, AttrId), (u32, u32)>,
    /// The entry of the cardinality-one value asserted explicitly for `[e a]`.
    asserted_one: HashMap<(EntityId, AttrId), u32>,
    /// The entry of the cardinality-one value retracted by `:db/retract` or
    /// `:db/retractEntity` from `[e a]` (empty, unallocated, in most transactions).
    retracted_one: HashMap<(EntityId, AttrId), u32>,
    /// Holders of unique values asserted in this transaction, by av bytes.
    unique_holders: HashMap<AvBytes, EntityId>,
    /// Entities the current `:db/retractEntity` expansion has visited (components may form
    /// cycles).
    retracted_entities: HashSet<EntityId>,
    /// Unique values asserted on `e` that another entity held when asserted: `[e a av v]`,
    /// a conflict only if that entity still holds the value at the end.
    contested: Vec<(EntityId, AttrId, AvBytes, Value)>,
    /// Entities created by this transaction: nothing of them is in the database yet.
    fresh: Fresh,
    /// Identity values the resolver already looked up in the database.
    known: &'a Known,
    /// The lazy path for new data (see [`Self::append_fresh`]); `None` once left.
    lazy: Option<Lazy>,
}

/// State of the lazy path: while every term so far asserted an attribute of a fresh entity
/// (a unique one only with a value no one holds), with each entity's assertions in one run,
/// no two on one attribute, entries are only appended: nothing can conflict, retract or
/// repeat, so `heads` and `asserted_one` are filled in only if a term off that path comes
/// ([`DatomBuilder::index_lazy`]). A transaction of new entities (an `add-all`, a W write)
/// then costs no map insert per datom (but one per unique value).
struct Lazy {
    /// The entity of the current run and where its entries start.
    run: Option<(EntityId, usize)>,
    /// Fresh entities (by [`Fresh::entity_index`]) whose run has ended.
    done: Vec<u64>,
    /// Whether the tx entity's run has ended.
    tx_done: bool,
}

/// Past this many assertions on one entity the lazy path's scan of its run for the same
/// attribute would cost more than a map probe.
const LAZY_RUN_MAX: usize = 32;

impl<'a> DatomBuilder<'a> {
    /// An empty overlay over `r`.
    pub fn new(
        r: IndexReader<'a>,
        schema: &'a Schema,
        tx: EntityId,
        fresh: Fresh,
        known: &'a Known,
    ) -> Self {
        let s = SCRATCH.with(|c| c.take()).unwrap_or_default();
        DatomBuilder {
            r,
            schema,
            tx,
            entries: s.entries,
            heads: s.heads,
            asserted_one: s.asserted_one,
            retracted_one: HashMap::default(),
            unique_holders: s.unique_holders,
            retracted_entities: s.retracted_entities,
            contested: Vec::new(),
            fresh,
            known,
            lazy: Some(Lazy {
                run: None,
                done: Vec::new(),
                tx_done: false,
            }),
        }
    }

    /// The lazy path (see [`Lazy`]): appends `[e a v]` if it qualifies, else gives `v` back.
    fn append_fresh(&mut self, e: EntityId, attr: &Attribute, v: Value) -> Result<(), Value> {
        let Some(lazy) = &mut self.lazy else {
            return Err(v);
        };
        let slot = match self.fresh.entity_index(e) {
            Some(i) => Some(i),
            None if e == self.fresh.tx() => None,
            None => return Err(v),
        };
        let done = |lazy: &Lazy, slot: Option<usize>| match slot {
            Some(i) => lazy
                .done
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            None => lazy.tx_done,
        };
        match lazy.run {
            Some((run_e, start)) if run_e == e => {
                let run = &self.entries[start..];
                if run.len() >= LAZY_RUN_MAX || run.iter().any(|en| en.a == attr.id) {
                    return Err(v);
                }
            }
            previous => {
                if done(lazy, slot) {
                    return Err(v);
                }
                if let Some((prev, _)) = previous {
                    match self.fresh.entity_index(prev) {
                        Some(i) => {
                            if lazy.done.len() <= i / 64 {
                                let words = self.fresh.entity_count().div_ceil(64);
                                lazy.done.resize(words.max(i / 64 + 1), 0);
                            }
                            lazy.done[i / 64] |= 1 << (i % 64);
                        }
                        None => lazy.tx_done = true,
                    }
                }
                lazy.run = Some((e, self.entries.len()));
            }
        }
        let b = av(attr.id, &v);
        if attr.unique.is_some() {
            // Only an identity value the resolver found no holder of in the database (else
            // the tempid would have upserted to it), asserted by no other entity of the
            // transaction; anything else goes the general way, which reports conflicts.
            if !matches!(self.known.get(&b[..]), Some((_, None, _))) {
                return Err(v);
            }
            match self.unique_holders.entry(b.clone()) {
                MapEntry::Occupied(_) => return Err(v),
                MapEntry::Vacant(slot) => {
                    slot.insert(e);
                }
            }
        }
        self.entries.push(Entry::asserted(e, attr.id, b, v));
        Ok(())
    }

    /// Leaves the lazy path: the entries it appended go into `heads` and `asserted_one`, as
    /// the general path would have put them.
    fn index_lazy(&mut self) {
        if self.lazy.take().is_none() {
            return;
        }
        // The lazy path is taken from the first term on, so every entry so far is its.
        for i in 0..self.entries.len() {
            let (e, a) = (self.entries[i].e, self.entries[i].a);
            let i = i as u32;
            let previous = self.heads.insert((e, a), (i, i));
            debug_assert!(
                previous.is_none(),
                "the lazy path appends one entry per [e a]"
            );
            if self.schema.get(a).is_some_and(|x| !x.is_many()) {
                self.asserted_one.insert((e, a), i);
            }
        }
    }

    /// Reserves room for about `n` datoms.
    pub fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
        self.heads.reserve(n);
    }

    fn find(&self, e: EntityId, a: AttrId, b: &[u8]) -> Option<u32> {
        let mut i = self.heads.get(&(e, a))?.0;
        while i != NONE {
            let en = &self.entries[i as usize];
            if en.av[..] == *b {
                return Some(i);
            }
            i = en.next;
        }
        None
    }

    fn in_db(&self, e: EntityId, b: &[u8]) -> Result<bool, TxError> {
        if self.fresh.contains(e) {
            return Ok(false);
        }
        Ok(av::holds(&self.r, e, &av::index_key(b))?)
    }

    fn seen(&self, e: EntityId, a: AttrId, b: &[u8]) -> Result<Seen, TxError> {
        match self.find(e, a, b) {
            Some(i) => Ok(Seen::Entry(i)),
            None => Ok(Seen::Db(self.in_db(e, b)?)),
        }
    }

    fn is_now(&self, s: Seen) -> bool {
        match s {
            Seen::Entry(i) => self.entries[i as usize].now,
            Seen::Db(held) => held,
        }
    }

    fn present(&self, e: EntityId, a: AttrId, b: &[u8]) -> Result<bool, TxError> {
        Ok(self.is_now(self.seen(e, a, b)?))
    }

    /// Records `[e a v]` as held (`now`) or not after the transaction; `touched` says it
    /// was asserted or retracted rather than only noted.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        s: Seen,
        e: EntityId,
        a: AttrId,
        v: Value,
        b: AvBytes,
        now: bool,
        touched: bool,
    ) -> u32 {
        match s {
            Seen::Entry(i) => {
                let en = &mut self.entries[i as usize];
                en.now = now;
                en.touched |= touched;
                i
            }
            Seen::Db(original) => {
                let i = self.entries.len() as u32;
                self.entries.push(Entry {
                    e,
                    a,
                    av: b,
                    value: v,
                    original,
                    now,
                    touched,
                    asserted: false,
                    retracted: false,
                    next: NONE,
                });
                match self.heads.entry((e, a)) {
                    MapEntry::Occupied(mut o) => {
                        let last = o.get().1;
                        self.entries[last as usize].next = i;
                        o.get_mut().1 = i;
                    }
                    MapEntry::Vacant(slot) => {
                        slot.insert((i, i));
                    }
                }
                i
            }
        }
    }

    fn set(
        &mut self,
        e: EntityId,
        a: AttrId,
        v: Value,
        b: AvBytes,
        now: bool,
    ) -> Result<(), TxError> {
        let s = self.seen(e, a, &b)?;
        self.record(s, e, a, v, b, now, true);
        Ok(())
    }

    /// Current values of `[e a]` (database plus overlay), as (av bytes, value).
    fn current(&mut self, e: EntityId, a: AttrId) -> Result<Vec<(AvBytes, Value)>, TxError> {
        let mut out = Vec::new();
        if !self.fresh.contains(e) {
            for v in self.r.values(e, a)? {
                let b = av(a, &v);
                let held = match self.find(e, a, &b) {
                    Some(i) => self.entries[i as usize].now,
                    None => true,
                };
                if held {
                    out.push((b, v));
                }
            }
        }
        // Values this transaction added (values the database held are listed above).
        let mut i = self.heads.get(&(e, a)).map_or(NONE, |h| h.0);
        while i != NONE {
            let en = &self.entries[i as usize];
            if en.now && !en.original {
                out.push((en.av.clone(), en.value.clone()));
            }
            i = en.next;
        }
        Ok(out)
    }

    fn assert(&mut self, e: EntityId, attr: &Arc<Attribute>, v: Value) -> Result<(), TxError> {
        let a = attr.id;
        let b = av(a, &v);
        let one = !attr.is_many();
        if attr.unique.is_some() {
            // Two values for one cardinality-one attribute is the conflict Datomic names
            // first, before either value's uniqueness.
            if one {
                self.conflict_one(e, attr, &b, &v)?;
            }
            self.check_unique(e, attr, &v, &b)?;
        }
        // The first value of an attribute on an entity this transaction created: the
        // database has nothing of it and the transaction nothing of this [e a] yet, so there
        // is nothing to retract or compare; one map probe instead of five. (The usual shape
        // of new data: every datom of an `add-all` or of a W write.)
        if self.fresh.contains(e) {
            if let MapEntry::Vacant(slot) = self.heads.entry((e, a)) {
                let i = self.entries.len() as u32;
                slot.insert((i, i));
                self.entries.push(Entry::asserted(e, a, b, v));
                if one {
                    self.asserted_one.insert((e, a), i);
                }
                return Ok(());
            }
        }
        if one {
            // A unique attribute's was checked above, before its uniqueness.
            if attr.unique.is_none() {
                self.conflict_one(e, attr, &b, &v)?;
            }
            for (ob, ov) in self.current(e, a)? {
                if ob != b {
                    self.set(e, a, ov, ob, false)?;
                }
            }
        }
        let s = self.seen(e, a, &b)?;
        // Already held: nothing to write, but the assertion is remembered (a retraction of
        // the same datom conflicts with it).
        let held = self.is_now(s);
        let i = self.record(s, e, a, v, b, true, !held);
        let en = &mut self.entries[i as usize];
        en.asserted = true;
        if en.retracted {
            return Err(self.assert_retract_conflict(i));
        }
        if one {
            self.asserted_one.insert((e, a), i);
        }
        Ok(())
    }

    /// Refuses a second value of the cardinality-one `[e a]` in one transaction.
    fn conflict_one(
        &self,
        e: EntityId,
        attr: &Attribute,
        b: &[u8],
        v: &Value,
    ) -> Result<(), TxError> {
        if let Some(&first) = self.asserted_one.get(&(e, attr.id)) {
            let first = &self.entries[first as usize];
            if first.av[..] != *b {
                return Err(TxError::DatomConflict {
                    entity: e,
                    attr: attr.ident.to_string(),
                    first: first.value.to_string(),
                    second: v.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Takes back the transaction's own assertion of the cardinality-one `[e a]`, as if it
    /// had not been made: its datom is held again only if the database held it. For a
    /// composite tuple asserted by hand, which its parts then make again.
    fn withdraw_asserted_one(&mut self, e: EntityId, a: AttrId) {
        let Some(i) = self.asserted_one.remove(&(e, a)) else {
            return;
        };
        let en = &mut self.entries[i as usize];
        en.asserted = false;
        en.now = en.original;
    }

    fn assert_retract_conflict(&self, i: u32) -> TxError {
        let en = &self.entries[i as usize];
        TxError::DatomConflictAssertRetract {
            entity: en.e,
            attr: self
                .schema
                .get(en.a)
                .map_or_else(|| en.a.to_string(), |x| x.ident.to_string()),
            value: value_text(&en.value),
        }
    }

    /// Notes entry `i`, just retracted by `:db/retract` or `:db/retractEntity`: a second
    /// value retracted from the same cardinality-one `[e a]` conflicts with it, held or not,
    /// as in Datomic (which judges retractions as it judges assertions).
    fn retracted_one(&mut self, i: u32) -> Result<(), TxError> {
        let en = &self.entries[i as usize];
        let (e, a) = (en.e, en.a);
        let Some(attr) = self.schema.get(a).filter(|x| !x.is_many()) else {
            return Ok(());
        };
        match self.retracted_one.get(&(e, a)) {
            None => {
                self.retracted_one.insert((e, a), i);
                Ok(())
            }
            Some(&first) if self.entries[first as usize].av[..] == en.av[..] => Ok(()),
            Some(&first) => Err(TxError::DatomConflictRetractions {
                entity: e,
                attr: attr.ident.to_string(),
                first: value_text(&self.entries[first as usize].value),
                second: value_text(&en.value),
            }),
        }
    }

    /// Marks entry `i`, just retracted by a `:db/retractEntity`, as retracted if the
    /// database held it. Datomic expands the retraction against the database before the
    /// transaction: re-asserting such a datom conflicts, while what the transaction itself
    /// asserted is simply retracted again.
    fn retracted_from_db(&mut self, i: u32) -> Result<(), TxError> {
        let en = &mut self.entries[i as usize];
        if !en.original {
            return Ok(());
        }
        en.retracted = true;
        if en.asserted {
            return Err(self.assert_retract_conflict(i));
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
        if let Some(&holder) = self.unique_holders.get(b) {
            if holder != e {
                // Both assertions are this transaction's: Datomic calls it a datoms conflict.
                return Err(TxError::UniqueValueTwice {
                    attr: attr.ident.to_string(),
                    value: v.to_string(),
                    first: holder,
                    second: e,
                });
            }
        }
        // Another entity may hold the value now; whether it still does when the transaction
        // ends (a swap, a move, a retraction later in the transaction) is decided then
        // (`check_contested`), as Datomic checks uniqueness against the database after it.
        // The resolver may already know the database has no holder of this value.
        if !matches!(self.known.get(b), Some((_, None, _))) {
            for holder in self.r.entities_with_key(&av::index_key(b))? {
                if holder != e && self.present(holder, attr.id, b)? {
                    self.contested
                        .push((e, attr.id, AvBytes::from_slice(b), v.clone()));
                    break;
                }
            }
        }
        if !self.unique_holders.contains_key(b) {
            self.unique_holders.insert(AvBytes::from_slice(b), e);
        }
        Ok(())
    }

    /// Refuses a unique value that another entity still holds now that every term is
    /// applied (`check_unique` noted each value it found held).
    pub fn check_contested(&mut self) -> Result<(), TxError> {
        for (e, a, b, v) in std::mem::take(&mut self.contested) {
            for holder in self.r.entities_with_key(&av::index_key(&b))? {
                if holder != e && self.present(holder, a, &b)? {
                    return Err(TxError::UniqueConflict {
                        attr: self
                            .schema
                            .get(a)
                            .map_or_else(|| a.to_string(), |x| x.ident.to_string()),
                        value: v.to_string(),
                        existing: holder,
                        entity: e,
                    });
                }
            }
        }
        Ok(())
    }

    /// Applies one resolved term.
    pub fn apply(&mut self, term: Resolved) -> Result<(), TxError> {
        let term = match term {
            Resolved::Add(e, attr, v) if self.lazy.is_some() => {
                match self.append_fresh(e, &attr, v) {
                    Ok(()) => return Ok(()),
                    Err(v) => Resolved::Add(e, attr, v),
                }
            }
            other => other,
        };
        self.index_lazy();
        match term {
            Resolved::Add(e, attr, v) => self.assert(e, &attr, v),
            Resolved::Retract(e, attr, Some(v)) => self.retract_term(e, attr.id, v),
            Resolved::Retract(e, attr, None) => {
                // Every value the database holds (Datomic expands it against the database
                // before the transaction: values the transaction adds stay).
                for (b, v) in self.current(e, attr.id)? {
                    let added_here = self
                        .find(e, attr.id, &b)
                        .is_some_and(|i| !self.entries[i as usize].original);
                    if !added_here {
                        self.retract_term(e, attr.id, v)?;
                    }
                }
                Ok(())
            }
            Resolved::RetractEntity(e) => {
                // The set guards one expansion against component cycles. A later
                // `:db/retractEntity` of the same entity expands again against the
                // database before the transaction, and finds its datoms already retracted.
                self.retracted_entities.clear();
                self.retract_entity(e)
            }
            Resolved::Cas(e, attr, old, new) => self.cas(e, &attr, old, *new),
            Resolved::Nothing => Ok(()),
        }
    }

    /// Keeps composite tuple attributes (`:db/tupleAttrs`) equal to their components, for every
    /// entity whose components this transaction touched (Datomic maintains them the same way).
    pub fn update_composites(&mut self) -> Result<(), TxError> {
        let composites: Vec<Arc<Attribute>> = self.schema.composite_attributes().cloned().collect();
        if composites.is_empty() {
            return Ok(());
        }
        self.index_lazy();
        let touched: Vec<(EntityId, AttrId)> = self
            .entries
            .iter()
            .filter(|en| en.touched)
            .map(|en| (en.e, en.a))
            .collect();
        for c in composites {
            let parts: Vec<Option<AttrId>> = c
                .tuple_attrs
                .as_ref()
                .expect("filtered")
                .iter()
                .map(|k| self.schema.by_ident(k).map(|a| a.id))
                .collect();
            // Entities whose parts changed, and those the composite was asserted or retracted
            // on directly: Datomic keeps a composite what its parts make it, so a value
            // asserted by hand (used to find an entity to upsert) is made again from them.
            let mut entities: Vec<EntityId> = touched
                .iter()
                .filter(|(_, a)| *a == c.id || parts.contains(&Some(*a)))
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
                self.withdraw_asserted_one(e, c.id);
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

    /// Checks every entity this transaction asserted `:db/ensure` on against each spec it
    /// names (Datomic's entity specs): each attribute of the spec's `:db.entity/attrs` must
    /// have a value on the entity after the transaction. A spec with `:db.entity/preds`
    /// (Clojure functions) cannot be checked here and is refused.
    pub fn check_entity_specs(&mut self) -> Result<(), TxError> {
        if !self.entries.iter().any(|en| en.a == builtin::ENSURE) {
            return Ok(());
        }
        self.index_lazy();
        let ensured: Vec<(EntityId, EntityId)> = self
            .entries
            .iter()
            .filter(|en| en.a == builtin::ENSURE && en.asserted && en.now)
            .filter_map(|en| match en.value {
                Value::Ref(spec) => Some((en.e, spec)),
                _ => None,
            })
            .collect();
        for (e, spec) in ensured {
            // The spec by its ident, also one this transaction gave it.
            let name = match self.current(spec, builtin::IDENT)?.first() {
                Some((_, v)) => v.to_string(),
                None => spec.to_string(),
            };
            if !self.current(spec, builtin::ENTITY_PREDS)?.is_empty() {
                return Err(TxError::EntityPredsUnsupported { spec: name });
            }
            let mut missing = Vec::new();
            for (_, required) in self.current(spec, builtin::ENTITY_ATTRS)? {
                let Value::Keyword(k) = &required else {
                    continue;
                };
                let present = match self.schema.by_ident(k) {
                    Some(attr) => !self.current(e, attr.id)?.is_empty(),
                    None => false,
                };
                if !present {
                    missing.push(k.to_string());
                }
            }
            if !missing.is_empty() {
                missing.sort();
                return Err(TxError::EntityAttrsMissing {
                    entity: e,
                    spec: name,
                    missing,
                });
            }
        }
        Ok(())
    }

    /// The net change against the database, in the order datoms were first touched, each with
    /// its av bytes.
    pub fn finish(mut self) -> NetDatoms {
        let tx = self.tx;
        let n = self
            .entries
            .iter()
            .filter(|en| en.original != en.now)
            .count();
        let mut out = NetDatoms {
            datoms: Vec::with_capacity(n),
            av: Vec::with_capacity(n),
        };
        for en in self.entries.drain(..) {
            if en.original != en.now {
                out.datoms.push(Datom {
                    e: en.e,
                    a: en.a,
                    v: en.value,
                    tx,
                    added: en.now,
                });
                out.av.push(en.av);
            }
        }
        out
    }
}

/// The builder's collections, kept for the next transaction on the same thread: the committer
/// runs thousands of transactions a second, and fresh maps sized for each one cost an
/// allocation apiece (and, for large transactions, fresh pages).
#[derive(Default)]
struct Scratch {
    entries: Vec<Entry>,
    heads: HashMap<(EntityId, AttrId), (u32, u32)>,
    asserted_one: HashMap<(EntityId, AttrId), u32>,
    unique_holders: HashMap<AvBytes, EntityId>,
    retracted_entities: HashSet<EntityId>,
}

/// Past this many datoms a transaction's collections are freed rather than kept.
const SCRATCH_KEEP_DATOMS: usize = 1 << 16;

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

impl Drop for DatomBuilder<'_> {
    fn drop(&mut self) {
        if self.entries.capacity() > SCRATCH_KEEP_DATOMS
            || self.heads.capacity() > SCRATCH_KEEP_DATOMS
        {
            return;
        }
        let mut s = Scratch {
            entries: std::mem::take(&mut self.entries),
            heads: std::mem::take(&mut self.heads),
            asserted_one: std::mem::take(&mut self.asserted_one),
            unique_holders: std::mem::take(&mut self.unique_holders),
            retracted_entities: std::mem::take(&mut self.retracted_entities),
        };
        s.entries.clear();
        s.heads.clear();
        s.asserted_one.clear();
        s.unique_holders.clear();
        s.retracted_entities.clear();
        SCRATCH.with(|c| c.set(Some(s)));
    }
}
