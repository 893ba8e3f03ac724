//! Raw index access (seed 001): `datoms`, `seek_datoms`, `rseek_datoms`, `index_range`,
//! `count_datoms`. Index names `:eav :ave` and Datomic's `:eavt :aevt :avet :vaet`.

use std::ops::Bound;

use crate::codec::Value;
use crate::db::Db;
use crate::kv::Direction;
use crate::store::{AttrId, Datom, EntityId};
use crate::tx::TxError;

/// Which index to walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// Entity, attribute, value (`:eav`, `:eavt`).
    Eav,
    /// Attribute, entity, value (`:aevt`): answered from AVE, re-sorted by entity.
    Aev,
    /// Attribute, value, entity (`:ave`, `:avet`).
    Ave,
    /// Value, attribute, entity (`:vaet`): the references to an entity, through the ref
    /// attributes; answered from AVE (a ref attribute's value is the entity it names).
    Vae,
}

impl Index {
    /// Parses `:eav`, `:eavt`, `:aevt`, `:ave`, `:avet`, `:vaet` (with or without the colon).
    pub fn parse(name: &str) -> Option<Index> {
        match name.trim_start_matches(':') {
            "eav" | "eavt" => Some(Index::Eav),
            "aev" | "aevt" => Some(Index::Aev),
            "ave" | "avet" => Some(Index::Ave),
            "vae" | "vaet" => Some(Index::Vae),
            _ => None,
        }
    }
}

/// Leading components of an index walk: entity, attribute and value as the index orders them.
#[derive(Debug, Clone, Default)]
pub struct Components {
    /// Entity (for EAV, AEV).
    pub e: Option<EntityId>,
    /// Attribute.
    pub a: Option<AttrId>,
    /// Value.
    pub v: Option<Value>,
    /// The transaction (Datomic's fourth component).
    pub tx: Option<EntityId>,
}

impl Index {
    /// The components of a walk in this index's order (`:eavt`: entity, attribute, value).
    pub fn order(self) -> [ComponentKind; 3] {
        use ComponentKind::{Attribute as A, Entity as E, Value as V};
        match self {
            Index::Eav => [E, A, V],
            Index::Aev => [A, E, V],
            Index::Ave => [A, V, E],
            Index::Vae => [V, A, E],
        }
    }
}

/// What a position of an index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentKind {
    /// The entity.
    Entity,
    /// The attribute.
    Attribute,
    /// The value.
    Value,
}

impl Components {
    /// The components a caller wrote as EDN, in the index's order, read as Datomic's
    /// `datoms` reads them: the attribute by its ident; an entity by id, ident (or a string
    /// spelling one, `":color/red"`) or lookup ref; a ref attribute's value (and any value of
    /// `:vaet`) as an entity the same way, and a long as the bigint a bigint attribute holds.
    /// `None` when an entity they name does not exist (the walk then finds nothing).
    pub fn from_edn(
        db: &Db,
        index: Index,
        given: &[crate::edn::Edn],
    ) -> Result<Option<Components>, crate::query::QueryError> {
        use crate::edn::{to_edn_string, Edn};
        use crate::query::QueryError;
        let mut c = Components::default();
        // Datomic reads at most four components (the fourth the transaction) and ignores
        // any after them; a nil leaves its position open, but a leading nil matches nothing.
        let given = &given[..given.len().min(4)];
        if given.first() == Some(&Edn::Nil) {
            return Ok(None);
        }
        let at = |kind: ComponentKind| {
            index
                .order()
                .iter()
                .position(|k| *k == kind)
                .and_then(|i| given.get(i))
                .filter(|f| **f != Edn::Nil)
        };
        let mut nothing = false;
        // Datomic reads the attribute first (a value needs it, so an attribute that names
        // none is refused when a value follows it, and matches nothing otherwise), then the
        // value, then the entity.
        let value_form = at(ComponentKind::Value);
        if let Some(form) = at(ComponentKind::Attribute) {
            let strict = value_form.is_some() && index != Index::Vae;
            match attribute_component(db, form, strict)? {
                Some(a) => c.a = Some(a),
                None => nothing = true,
            }
        }
        if let Some(form) = value_form {
            let attr = c.a.and_then(|a| db.schema().get(a));
            if index == Index::Vae || attr.is_some_and(|x| x.is_ref()) {
                let named = match form {
                    Edn::Long(n) if *n <= 0 => None,
                    _ => crate::pull::Eid::from_edn(form)?.resolve(db)?,
                };
                match named {
                    Some(e) => c.v = Some(Value::Ref(e)),
                    // A number names an entity none has; an ident or a lookup ref naming
                    // none is refused, as Datomic resolves a value strictly.
                    None if matches!(form, Edn::Long(_)) => nothing = true,
                    None => {
                        return Err(QueryError::NotAnEntity {
                            eid: to_edn_string(form),
                            reason: "names no entity in this database value".into(),
                        })
                    }
                }
            } else {
                let v =
                    crate::edn::value_from_edn(form).ok_or_else(|| QueryError::BadArguments {
                        name: "datoms".into(),
                        message: format!("{} is not a value", to_edn_string(form)),
                    })?;
                c.v = Some(match c.a {
                    Some(a) => db.index_value(a, v),
                    None => v,
                });
            }
        }
        if let Some(form) = at(ComponentKind::Entity) {
            // A number that is no id, a map, a double...: an entity none has.
            match form {
                _ if is_nil_lookup_ref(form) => nothing = true,
                Edn::Vector(_) | Edn::List(_) | Edn::Keyword(_) | Edn::String(_) => {
                    match crate::pull::Eid::from_edn(form)?.resolve(db)? {
                        Some(e) => c.e = Some(e),
                        None => nothing = true,
                    }
                }
                Edn::Long(n) if *n > 0 => c.e = Some(*n as EntityId),
                _ => nothing = true,
            }
        }
        match given.get(3) {
            None | Some(Edn::Nil) => {}
            Some(Edn::Long(n)) if *n > 0 => c.tx = Some(*n as EntityId),
            Some(_) => nothing = true,
        }
        Ok((!nothing).then_some(c))
    }
}

/// A lookup ref whose value is nil, `[:person/id nil]`: Datomic's `datoms` finds nothing
/// for it, where a transaction refuses it.
fn is_nil_lookup_ref(form: &crate::edn::Edn) -> bool {
    use crate::edn::Edn;
    matches!(form, Edn::Vector(items) | Edn::List(items)
        if matches!(items.as_slice(), [Edn::Keyword(_), Edn::Nil]))
}

/// The attribute a component names, as Datomic's `datoms` reads it: a keyword (or a string
/// spelling one); `None` when it names no attribute and nothing needs one (`strict` false:
/// no value follows). A lookup ref there names an entity, which is no attribute.
fn attribute_component(
    db: &Db,
    form: &crate::edn::Edn,
    strict: bool,
) -> Result<Option<AttrId>, crate::query::QueryError> {
    use crate::edn::{to_edn_string, Edn};
    use crate::query::QueryError;
    let unknown = || QueryError::NotAnEntity {
        eid: to_edn_string(form),
        reason: "not an attribute of this database".into(),
    };
    let ident = match form {
        Edn::Keyword(k) => k.clone(),
        Edn::String(s) => {
            crate::codec::Keyword::from_colon_text(s).ok_or_else(|| QueryError::NotAKeyword {
                value: to_edn_string(form),
            })?
        }
        Edn::Vector(_) | Edn::List(_) => {
            return match crate::pull::Eid::from_edn(form)?.resolve(db)? {
                Some(_) if strict => Err(QueryError::NotAnAttribute {
                    value: to_edn_string(form),
                }),
                None if strict => Err(unknown()),
                _ => Ok(None),
            }
        }
        _ if strict => return Err(unknown()),
        _ => return Ok(None),
    };
    match db.attr(&ident) {
        Some(attr) => Ok(Some(attr.id)),
        None if strict => Err(unknown()),
        None => Ok(None),
    }
}

impl Db {
    /// `v` as attribute `a` holds it in its index, where Datomic's `datoms` reads it so: a
    /// long for a bigint attribute is that bigint, a whole double for a long one that long.
    /// Anything else is returned as it is.
    pub fn index_value(&self, a: AttrId, v: Value) -> Value {
        match (self.schema().get(a).map(|x| x.value_type), v) {
            (Some(crate::codec::ValueType::BigInt), Value::Long(n)) => {
                Value::BigInt(Box::new(i128::from(n)))
            }
            // A whole double for a long attribute is that long (Datomic's `datoms` finds
            // `5000` for `5000.0`).
            (Some(crate::codec::ValueType::Long), Value::Double(d))
                if d.get().fract() == 0.0 && d.get().abs() < 9.0e15 =>
            {
                Value::Long(d.get() as i64)
            }
            (_, v) => v,
        }
    }

    /// Every datom of `index` whose leading components equal `c` (Datomic's `datoms`).
    pub fn datoms(&self, index: Index, c: &Components) -> Result<Vec<Datom>, TxError> {
        let mut out = if index == Index::Vae {
            self.references(c)?
        } else if !self.time_filter().is_current() {
            self.timed_datoms(index, c, None)?
        } else {
            let mut out = self.current_datoms(index, c)?;
            self.stamp_tx(&mut out)?;
            out
        };
        if let Some(tx) = c.tx {
            out.retain(|d| d.tx == tx);
        }
        Ok(out)
    }

    /// `:vaet`: the datoms of ref attributes (`c.a`, or every one) whose value is `c.v` (an
    /// entity id; every value when `None`), from each attribute's AVE walk, in value,
    /// attribute, entity order (then time, for a history value).
    fn references(&self, c: &Components) -> Result<Vec<Datom>, TxError> {
        let v = match &c.v {
            Some(Value::Long(n)) if *n >= 0 => Some(Value::Ref(*n as u64)),
            other => other.clone(),
        };
        let attrs: Vec<AttrId> = match c.a {
            Some(a) => vec![a],
            None => self.schema().attributes().iter().map(|a| a.id).collect(),
        };
        let mut out = Vec::new();
        // Only ref attributes hold references (a given non-ref attribute holds none).
        for a in attrs {
            if !self.schema().get(a).is_some_and(|x| x.is_ref()) {
                continue;
            }
            let walk = Components {
                a: Some(a),
                v: v.clone(),
                ..Components::default()
            };
            let datoms = self.datoms(Index::Ave, &walk)?;
            out.extend(datoms.into_iter().filter(|d| c.e.is_none_or(|e| d.e == e)));
        }
        out.sort_by(|x, y| {
            x.v.partial_cmp(&y.v)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(x.a.cmp(&y.a))
                .then(x.e.cmp(&y.e))
                .then(x.tx.cmp(&y.tx))
        });
        Ok(out)
    }

    /// Each current datom's transaction (the last that asserted it), from the history index.
    fn stamp_tx(&self, datoms: &mut [Datom]) -> Result<(), TxError> {
        let r = self.reader();
        if !r.has_history() {
            return Ok(());
        }
        let now = crate::store::TimeFilter::default();
        let mut cursor = r.history_cursor()?;
        for d in datoms.iter_mut() {
            let one = self.schema().get(d.a).is_some_and(|x| !x.is_many());
            for t in cursor.timed(&now, d.e, Some(d.a), one)? {
                if cursor.value(d.e, &t)? == d.v {
                    d.tx = t.tx;
                    break;
                }
            }
        }
        Ok(())
    }

    fn current_datoms(&self, index: Index, c: &Components) -> Result<Vec<Datom>, TxError> {
        let r = self.reader();
        let mut out = Vec::new();
        let datom = |e, a, v| Datom {
            e,
            a,
            v,
            tx: 0,
            added: true,
        };
        match index {
            Index::Eav => match c.e {
                // With the attribute known, decode only its values.
                Some(e) if c.a.is_some() => {
                    let a = c.a.expect("checked");
                    for v in r.values(e, a)? {
                        if c.v.as_ref().is_none_or(|x| *x == v) {
                            out.push(datom(e, a, v));
                        }
                    }
                }
                Some(e) => {
                    for (a, v) in r.entity(e)? {
                        if c.v.as_ref().is_some_and(|x| *x != v) {
                            continue;
                        }
                        out.push(datom(e, a, v));
                    }
                }
                None => {
                    r.scan_entities(0, u64::MAX, |e, a, vb| {
                        out.push(datom(e, a, self.reader().decode_value(a, vb)?));
                        Ok(true)
                    })?;
                }
            },
            // Answered by `references` before this walk.
            Index::Vae => return self.references(c),
            Index::Ave | Index::Aev => {
                let Some(a) = c.a else {
                    return Err(TxError::Malformed {
                        detail: "an AVE/AEV walk needs an attribute".into(),
                        form: match index {
                            Index::Aev => ":aevt",
                            _ => ":avet",
                        }
                        .to_string(),
                    });
                };
                match (&c.v, index) {
                    (Some(v), Index::Ave) => {
                        for e in r.entities_with(a, v)? {
                            if c.e.is_none_or(|x| x == e) {
                                out.push(datom(e, a, v.clone()));
                            }
                        }
                    }
                    _ => {
                        r.scan_attr(
                            a,
                            Bound::Unbounded,
                            Bound::Unbounded,
                            Direction::Forward,
                            |vb, e| {
                                if c.e.is_none_or(|x| x == e) {
                                    out.push(datom(e, a, self.reader().decode_value(a, vb)?));
                                }
                                Ok(true)
                            },
                        )?;
                        if index == Index::Aev {
                            out.sort_by_key(|x| x.e);
                            if let Some(v) = &c.v {
                                out.retain(|d| d.v == *v);
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Datoms of attribute `a` with values in `[start, end]` (either end open when `None`),
    /// in value order (Datomic's `index-range`).
    pub fn index_range(
        &self,
        a: AttrId,
        start: Option<&Value>,
        end: Option<&Value>,
    ) -> Result<Vec<Datom>, TxError> {
        let mut out = Vec::new();
        let lo = start.map_or(Bound::Unbounded, Bound::Included);
        let hi = end.map_or(Bound::Unbounded, Bound::Excluded);
        if !self.time_filter().is_current() {
            let c = Components {
                a: Some(a),
                ..Components::default()
            };
            return self.timed_datoms(Index::Ave, &c, Some((lo, hi)));
        }
        self.reader()
            .scan_attr(a, lo, hi, Direction::Forward, |vb, e| {
                out.push(Datom {
                    e,
                    a,
                    v: self.reader().decode_value(a, vb)?,
                    tx: 0,
                    added: true,
                });
                Ok(true)
            })?;
        self.stamp_tx(&mut out)?;
        Ok(out)
    }

    /// AVE datoms of attribute `a` from value `start` on (forward) or down from it (backward),
    /// at most `limit` (Datomic's `seek-datoms` / `rseek-datoms` on AVET).
    pub fn seek_datoms(
        &self,
        a: AttrId,
        start: Option<&Value>,
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Datom>, TxError> {
        let mut out = Vec::new();
        if !self.time_filter().is_current() {
            let c = Components {
                a: Some(a),
                ..Components::default()
            };
            let mut all = self.timed_datoms(Index::Ave, &c, None)?;
            if direction == Direction::Backward {
                all.reverse();
            }
            let from = |d: &Datom| {
                start.is_none_or(|s| match direction {
                    Direction::Forward => d.v >= *s,
                    Direction::Backward => d.v <= *s,
                })
            };
            return Ok(all.into_iter().filter(from).take(limit).collect());
        }
        let (lo, hi) = match direction {
            Direction::Forward => (
                start.map_or(Bound::Unbounded, Bound::Included),
                Bound::Unbounded,
            ),
            Direction::Backward => (
                Bound::Unbounded,
                start.map_or(Bound::Unbounded, Bound::Included),
            ),
        };
        self.reader().scan_attr(a, lo, hi, direction, |vb, e| {
            out.push(Datom {
                e,
                a,
                v: self.reader().decode_value(a, vb)?,
                tx: 0,
                added: true,
            });
            Ok(out.len() < limit)
        })?;
        self.stamp_tx(&mut out)?;
        Ok(out)
    }

    /// AVE datoms of attribute `a` from value `start` downwards (or from the last value when
    /// `None`), at most `limit`: Datalevin's and Datomic's `rseek-datoms`.
    pub fn rseek_datoms(
        &self,
        a: AttrId,
        start: Option<&Value>,
        limit: usize,
    ) -> Result<Vec<Datom>, TxError> {
        self.seek_datoms(a, start, Direction::Backward, limit)
    }

    /// `datoms` (and `index_range`, with `range` on the value) on a value in time: the
    /// candidate entities' events through the time filter (see `query::exec::time`), in the
    /// index's order; a history value's datoms carry their transaction and `added`.
    fn timed_datoms(
        &self,
        index: Index,
        c: &Components,
        range: Option<(Bound<&Value>, Bound<&Value>)>,
    ) -> Result<Vec<Datom>, TxError> {
        let r = self.reader();
        let filter = self.time_filter();
        let entities: Vec<EntityId> = match (c.e, c.a) {
            (Some(e), _) => vec![e],
            (None, Some(a)) => {
                let mut es = match &c.v {
                    Some(v) => r.entities_with(a, v)?,
                    None => {
                        let mut es = Vec::new();
                        r.scan_attr(
                            a,
                            Bound::Unbounded,
                            Bound::Unbounded,
                            Direction::Forward,
                            |_, e| {
                                es.push(e);
                                Ok(true)
                            },
                        )?;
                        es
                    }
                };
                es.extend(r.entities_that_lost(a)?);
                es.sort_unstable();
                es.dedup();
                es
            }
            (None, None) if index == Index::Eav => r.history_entities()?,
            (None, None) => {
                return Err(TxError::Malformed {
                    detail: "an AVE/AEV walk needs an attribute".into(),
                    form: ":avet".into(),
                })
            }
        };
        let mut out = Vec::new();
        let one =
            c.a.is_some_and(|a| self.schema().get(a).is_some_and(|x| !x.is_many()));
        let mut cursor = r.history_cursor()?;
        for e in entities {
            for d in cursor.timed(&filter, e, c.a, one)? {
                let v = cursor.value(e, &d)?;
                if c.v.as_ref().is_some_and(|x| *x != v) {
                    continue;
                }
                if let Some((lo, hi)) = &range {
                    let above = match lo {
                        Bound::Included(x) => v >= **x,
                        Bound::Excluded(x) => v > **x,
                        Bound::Unbounded => true,
                    };
                    let below = match hi {
                        Bound::Included(x) => v <= **x,
                        Bound::Excluded(x) => v < **x,
                        Bound::Unbounded => true,
                    };
                    if !(above && below) {
                        continue;
                    }
                }
                out.push(Datom {
                    e,
                    a: d.a,
                    v,
                    tx: d.tx,
                    added: d.added,
                });
            }
        }
        if index == Index::Ave {
            // Value order, then entity, then time (a stable sort keeps each one's events in order).
            out.sort_by(|x, y| {
                x.v.partial_cmp(&y.v)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(x.e.cmp(&y.e))
                    .then(x.tx.cmp(&y.tx))
            });
        }
        Ok(out)
    }

    /// How many datoms `datoms(index, c)` would return.
    pub fn count_datoms(&self, index: Index, c: &Components) -> Result<u64, TxError> {
        if !self.time_filter().is_current() {
            return Ok(self.datoms(index, c)?.len() as u64);
        }
        let r = self.reader();
        match (index, c.e, c.a, &c.v) {
            (Index::Ave, None, Some(a), Some(v)) => Ok(r.count_with(a, v, u64::MAX)?),
            (Index::Ave | Index::Aev, None, Some(a), None) => Ok(r.estimated_stats(a)?.datoms),
            _ => Ok(self.datoms(index, c)?.len() as u64),
        }
    }
}
