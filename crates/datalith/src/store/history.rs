//! The history index: every assertion and retraction, by entity, in time order (see
//! ARCHITECTURE.md, "Time: the history index").
//!
//! # Byte layout
//!
//! | table | kind | key | value(s) |
//! |---|---|---|---|
//! | `history` | list | entity id (u64 BE) | attribute id (u32 BE) ++ tx id (u64 BE) ++ added (u8) ++ value form, sorted |
//! | `history_attr` | fixed-width list (8) | attribute id (u32 BE) | entity ids that ever lost a value of it |
//!
//! The value form is the value's order-preserving encoding when it is at most
//! [`HISTORY_INLINE_VALUE_BYTES`]; a longer one is its first `HISTORY_INLINE_VALUE_BYTES`
//! bytes and a 16-byte hash of the whole ([`HISTORY_MAX_VALUE_BYTES`] in all), and the whole
//! encoding is in the transaction log entry of the event's transaction. Encodings are
//! prefix-free, so the length alone tells the two apart.
//!
//! An entity's events of one attribute lie together in time order (retractions of a
//! transaction before its assertions), so the state of `(e, a)` at `t` is a walk of the
//! group up to `t` ([`TimeFilter`]).

use rustc_hash::FxHashMap as HashMap;

use super::ids::{AttrId, EntityId};
use super::keys;
use super::reader::IndexReader;
use super::StoreError;
use crate::codec::{self, Value};
use crate::limits::{
    GIANT_HASH_BYTES, HISTORY_EVENT_HEAD_BYTES, HISTORY_INLINE_VALUE_BYTES, HISTORY_MAX_VALUE_BYTES,
};

/// Appends the history event of `(a, enc)` asserted (`added`) or retracted in `tx`, where
/// `enc` is the value's full encoding.
pub fn event_bytes(a: AttrId, tx: EntityId, added: bool, enc: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&a.to_be_bytes());
    out.extend_from_slice(&tx.to_be_bytes());
    out.push(added as u8);
    if enc.len() <= HISTORY_INLINE_VALUE_BYTES {
        out.extend_from_slice(enc);
    } else {
        out.extend_from_slice(&enc[..HISTORY_INLINE_VALUE_BYTES]);
        out.extend_from_slice(&codec::index_key::giant_hash(enc));
    }
    debug_assert!(out.len() <= HISTORY_EVENT_HEAD_BYTES + HISTORY_MAX_VALUE_BYTES);
}

/// [`event_bytes`] from a value's index form (the bytes after the attribute in EAV and AVE:
/// a giant's is its encoding's first bytes and the hash of the whole, the same hash a history
/// event keeps), for writers that hold only the index form (a bulk load).
pub fn event_bytes_from_index_form(
    a: AttrId,
    tx: EntityId,
    added: bool,
    index_form: &[u8],
    out: &mut Vec<u8>,
) {
    if index_form.len() <= crate::limits::MAX_INLINE_VALUE_BYTES {
        return event_bytes(a, tx, added, index_form, out);
    }
    out.extend_from_slice(&a.to_be_bytes());
    out.extend_from_slice(&tx.to_be_bytes());
    out.push(added as u8);
    out.extend_from_slice(&index_form[..HISTORY_INLINE_VALUE_BYTES]);
    out.extend_from_slice(&index_form[index_form.len() - GIANT_HASH_BYTES..]);
}

/// The `history_attr` key of attribute `a`.
pub fn attr_key(a: AttrId) -> [u8; keys::ATTR_BYTES] {
    a.to_be_bytes()
}

/// One event of the history index, its value still in its stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// Attribute.
    pub a: AttrId,
    /// The transaction that asserted or retracted it.
    pub tx: EntityId,
    /// Assertion or retraction.
    pub added: bool,
    /// The value form (see the module doc).
    pub value: &'a [u8],
}

impl<'a> Event<'a> {
    /// Parses a stored event (bytes from disk: `None` for anything malformed).
    pub fn parse(raw: &'a [u8]) -> Option<Event<'a>> {
        let head = raw.get(..HISTORY_EVENT_HEAD_BYTES)?;
        let value = &raw[HISTORY_EVENT_HEAD_BYTES..];
        if value.is_empty() || value.len() > HISTORY_MAX_VALUE_BYTES {
            return None;
        }
        let added = match head[12] {
            0 => false,
            1 => true,
            _ => return None,
        };
        Some(Event {
            a: AttrId::from_be_bytes(head[..4].try_into().ok()?),
            tx: EntityId::from_be_bytes(head[4..12].try_into().ok()?),
            added,
            value,
        })
    }

    /// Whether the value form is a prefix and hash (the whole is in the log).
    pub fn is_shrunk(&self) -> bool {
        self.value.len() > HISTORY_INLINE_VALUE_BYTES
    }
}

fn corrupt(what: &str, e: EntityId) -> StoreError {
    StoreError::Corrupt {
        detail: format!("history event of entity {e}: {what}"),
    }
}

/// Which datoms a time view shows (Datomic's `as-of`, `since`, `history`, combined).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TimeFilter {
    /// Only transactions at or before this one.
    pub as_of: Option<EntityId>,
    /// Only datoms asserted (for history: events) after this one.
    pub since: Option<EntityId>,
    /// Every event, assertions and retractions, instead of the state.
    pub history: bool,
}

impl TimeFilter {
    /// The current state: no filter.
    pub fn is_current(&self) -> bool {
        self.as_of.is_none() && self.since.is_none() && !self.history
    }

    fn in_window(&self, tx: EntityId) -> bool {
        self.as_of.is_none_or(|t| tx <= t)
    }
}

/// A datom of a time view, its value in stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedDatom<'a> {
    /// Attribute.
    pub a: AttrId,
    /// Value form.
    pub value: &'a [u8],
    /// Its transaction (of the assertion, for a state; of the event, for history).
    pub tx: EntityId,
    /// Assertion or retraction (always true for a state).
    pub added: bool,
}

/// What `filter` shows of one attribute's events of one entity (`events` in stored order),
/// appended to `out`: the state at the filter's time (each value with the transaction that
/// asserted it last), or the events themselves for history.
pub fn apply_filter<'a>(filter: &TimeFilter, events: &[Event<'a>], out: &mut Vec<TimedDatom<'a>>) {
    if filter.history {
        for ev in events {
            if filter.in_window(ev.tx) && filter.since.is_none_or(|s| ev.tx > s) {
                out.push(TimedDatom {
                    a: ev.a,
                    value: ev.value,
                    tx: ev.tx,
                    added: ev.added,
                });
            }
        }
        return;
    }
    // The state: replay the window's events. Few values at once is the rule (a
    // cardinality-one attribute holds one), so a short list beats a map until it grows.
    let mut present: Vec<(&'a [u8], EntityId)> = Vec::new();
    let mut map: Option<HashMap<&'a [u8], EntityId>> = None;
    for ev in events.iter().take_while(|ev| filter.in_window(ev.tx)) {
        if let Some(m) = &mut map {
            if ev.added {
                m.insert(ev.value, ev.tx);
            } else {
                m.remove(ev.value);
            }
            continue;
        }
        match present.iter().position(|(v, _)| *v == ev.value) {
            Some(i) if ev.added => present[i].1 = ev.tx,
            Some(i) => {
                present.swap_remove(i);
            }
            None if ev.added => {
                present.push((ev.value, ev.tx));
                if present.len() > 16 {
                    map = Some(present.drain(..).collect());
                }
            }
            None => {}
        }
    }
    let mut state: Vec<(&'a [u8], EntityId)> = match map {
        Some(m) => m.into_iter().collect(),
        None => present,
    };
    state.retain(|(_, tx)| filter.since.is_none_or(|s| *tx > s));
    state.sort_unstable();
    let a = events.first().map_or(0, |ev| ev.a);
    out.extend(state.into_iter().map(|(value, tx)| TimedDatom {
        a,
        value,
        tx,
        added: true,
    }));
}

/// Many history reads through one kept LMDB cursor (entities read in ascending order mostly
/// stay on the leaf page of the previous one).
pub struct HistoryCursor<'a> {
    r: IndexReader<'a>,
    lists: crate::kv::ListReader<'a>,
}

impl<'a> HistoryCursor<'a> {
    /// The events of entity `e` (of attribute `a` only, when given; and then none after
    /// transaction `until`), in stored order.
    pub fn events(
        &mut self,
        e: EntityId,
        a: Option<AttrId>,
        until: Option<EntityId>,
    ) -> Result<Vec<Event<'a>>, StoreError> {
        let mut out = Vec::new();
        let mut failed = None;
        let from = a.map(|a| a.to_be_bytes());
        self.lists.each_from(
            &keys::eav_key(e),
            from.as_ref().map_or(&[][..], |f| &f[..]),
            |raw| {
                let Some(ev) = Event::parse(raw) else {
                    failed = Some(corrupt("malformed", e));
                    return Ok(false);
                };
                if a.is_some_and(|a| a != ev.a) || until.is_some_and(|t| ev.tx > t) {
                    return Ok(false);
                }
                out.push(ev);
                Ok(true)
            },
        )?;
        failed.map_or(Ok(out), Err)
    }

    /// The datoms `filter` shows of entity `e` (of attribute `a` only, when given), as
    /// [`IndexReader::timed_datoms`]. `one`: `a` is cardinality-one, so the state at a point
    /// is the last event before it (a transaction's retractions sort before its assertions):
    /// one search, however long the history.
    pub fn timed(
        &mut self,
        filter: &TimeFilter,
        e: EntityId,
        a: Option<AttrId>,
        one: bool,
    ) -> Result<Vec<TimedDatom<'a>>, StoreError> {
        if let (Some(a), true, false) = (a, one, filter.history) {
            if let Some(bound) = state_bound(a, filter.as_of) {
                let mut out = Vec::new();
                let Some(raw) = self.lists.last_below(&keys::eav_key(e), &bound)? else {
                    return Ok(out);
                };
                let ev = Event::parse(raw).ok_or_else(|| corrupt("malformed", e))?;
                if ev.a == a && ev.added && filter.since.is_none_or(|s| ev.tx > s) {
                    out.push(TimedDatom {
                        a,
                        value: ev.value,
                        tx: ev.tx,
                        added: true,
                    });
                }
                return Ok(out);
            }
        }
        let until = if filter.history { None } else { filter.as_of };
        let events = self.events(e, a, until.filter(|_| a.is_some()))?;
        let mut out = Vec::new();
        for group in events.chunk_by(|x, y| x.a == y.a) {
            apply_filter(filter, group, &mut out);
        }
        Ok(out)
    }

    /// The value of an event of entity `e` (see [`IndexReader::event_value`]).
    pub fn value(&self, e: EntityId, d: &TimedDatom<'_>) -> Result<Value, StoreError> {
        self.r.event_value(e, d)
    }
}

/// The bound below which the last event of attribute `a` is its state at `as_of` (now when
/// `None`): the first event key after `(a, as_of)`; `None` when there is no such key.
fn state_bound(a: AttrId, as_of: Option<EntityId>) -> Option<Vec<u8>> {
    let mut b = Vec::with_capacity(12);
    match as_of {
        Some(t) => {
            b.extend_from_slice(&a.to_be_bytes());
            b.extend_from_slice(&t.checked_add(1)?.to_be_bytes());
        }
        None => b.extend_from_slice(&a.checked_add(1)?.to_be_bytes()),
    }
    Some(b)
}

impl<'a> IndexReader<'a> {
    /// One cursor for many history reads.
    pub fn history_cursor(&self) -> Result<HistoryCursor<'a>, StoreError> {
        Ok(HistoryCursor {
            r: *self,
            lists: self.view.list_reader(self.history_table()?)?,
        })
    }

    /// Whether this state keeps the history index (a database made before it, opened
    /// read-only, does not).
    pub fn has_history(&self) -> bool {
        self.t.history.is_some()
    }

    fn history_table(&self) -> Result<&'a crate::kv::Table, StoreError> {
        self.t.history.as_ref().ok_or_else(|| StoreError::Corrupt {
            detail: "this database keeps no history index (made before history was kept; open it for writing once to build it)".into(),
        })
    }

    /// The events of entity `e` (of attribute `a` only, when given), in stored order.
    pub fn history_events(
        &self,
        e: EntityId,
        a: Option<AttrId>,
    ) -> Result<Vec<Event<'a>>, StoreError> {
        let table = self.history_table()?;
        let mut out = Vec::new();
        let mut failed = None;
        let mut lists = self.view.list_reader(table)?;
        let from = a.map(|a| a.to_be_bytes());
        lists.each_from(
            &keys::eav_key(e),
            from.as_ref().map_or(&[][..], |f| &f[..]),
            |raw| {
                let Some(ev) = Event::parse(raw) else {
                    failed = Some(corrupt("malformed", e));
                    return Ok(false);
                };
                if a.is_some_and(|a| a != ev.a) {
                    return Ok(false);
                }
                out.push(ev);
                Ok(true)
            },
        )?;
        failed.map_or(Ok(out), Err)
    }

    /// The datoms `filter` shows of entity `e` (of attribute `a` only, when given), in
    /// attribute order (values in value order for a state, events in time order for history).
    pub fn timed_datoms(
        &self,
        filter: &TimeFilter,
        e: EntityId,
        a: Option<AttrId>,
    ) -> Result<Vec<TimedDatom<'a>>, StoreError> {
        let events = self.history_events(e, a)?;
        let mut out = Vec::new();
        for group in events.chunk_by(|x, y| x.a == y.a) {
            apply_filter(filter, group, &mut out);
        }
        Ok(out)
    }

    /// The transaction that asserted the current datom `(e, a, value form)`, if the history
    /// index holds its assertion.
    pub fn tx_of(
        &self,
        e: EntityId,
        a: AttrId,
        value: &[u8],
    ) -> Result<Option<EntityId>, StoreError> {
        let events = self.history_events(e, Some(a))?;
        Ok(events
            .iter()
            .rev()
            .find(|ev| ev.value == value)
            .filter(|ev| ev.added)
            .map(|ev| ev.tx))
    }

    /// Entities that ever lost a value of attribute `a` (with those AVE holds now: every
    /// entity that ever had it).
    pub fn entities_that_lost(&self, a: AttrId) -> Result<Vec<EntityId>, StoreError> {
        let Some(table) = &self.t.history_attr else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut bad = false;
        self.view.list_each(table, &attr_key(a), |raw| {
            match keys::read_entity(raw) {
                Some(e) => out.push(e),
                None => bad = true,
            }
            Ok(!bad)
        })?;
        if bad {
            return Err(StoreError::Corrupt {
                detail: format!("history_attr entry of attribute {a} is not an entity id"),
            });
        }
        Ok(out)
    }

    /// Every entity with events, in id order.
    pub fn history_entities(&self) -> Result<Vec<EntityId>, StoreError> {
        let table = self.history_table()?;
        let mut out = Vec::new();
        for entry in self.view.range(
            table,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            crate::kv::Direction::Forward,
        )? {
            let (k, _) = entry?;
            let e = keys::read_entity(k).ok_or_else(|| StoreError::Corrupt {
                detail: "history key is not an entity id".into(),
            })?;
            if out.last() != Some(&e) {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// [`Self::timed_datoms`] as `(attribute, value)` pairs.
    pub fn timed_values(
        &self,
        filter: &TimeFilter,
        e: EntityId,
        a: Option<AttrId>,
    ) -> Result<Vec<(AttrId, Value)>, StoreError> {
        self.timed_datoms(filter, e, a)?
            .iter()
            .map(|d| Ok((d.a, self.event_value(e, d)?)))
            .collect()
    }

    /// The value of a history event of entity `e`: decoded inline, or (a shrunk one) read
    /// whole from the transaction log entry of its transaction.
    pub fn event_value(&self, e: EntityId, d: &TimedDatom<'_>) -> Result<Value, StoreError> {
        if d.value.len() <= HISTORY_INLINE_VALUE_BYTES {
            return super::reader::decode_exact(d.value);
        }
        let hash = &d.value[HISTORY_INLINE_VALUE_BYTES..];
        debug_assert_eq!(hash.len(), GIANT_HASH_BYTES);
        // A current value is in the giants table (a bulk load's, which has no log entry).
        if let Ok(h) = <[u8; GIANT_HASH_BYTES]>::try_from(hash) {
            if let Some(full) = self
                .view
                .get(&self.t.giants, &super::reader::giant_key(d.a, &h))?
            {
                if full.starts_with(&d.value[..HISTORY_INLINE_VALUE_BYTES]) {
                    return super::reader::decode_exact(full);
                }
            }
        }
        let Some(log) = &self.t.tx_log else {
            return Err(corrupt(
                "a long value and no transaction log to read it from",
                e,
            ));
        };
        let entry = self
            .view
            .get(log, &d.tx.to_be_bytes())?
            .ok_or_else(|| corrupt("a long value whose transaction has no log entry", e))?;
        let datoms = log_entry_datoms(entry).ok_or_else(|| StoreError::CorruptTxLogEntry {
            tx: d.tx,
            detail: "malformed (read for a history value)".into(),
        })?;
        for (de, added, av) in datoms {
            let Some((a, enc)) = keys::split_attr(av) else {
                continue;
            };
            if de == e
                && a == d.a
                && added == d.added
                && enc.starts_with(&d.value[..HISTORY_INLINE_VALUE_BYTES])
                && codec::index_key::giant_hash(enc)[..] == *hash
            {
                return super::reader::decode_exact(enc);
            }
        }
        Err(corrupt(
            "a long value missing from its transaction's log entry",
            e,
        ))
    }
}

/// The datoms of a transaction log entry (`tx::log`'s format: count, then entity, added flag,
/// av length and av bytes each), lengths checked; `None` when malformed.
fn log_entry_datoms(b: &[u8]) -> Option<Vec<(EntityId, bool, &[u8])>> {
    let count = u32::from_be_bytes(b.get(..4)?.try_into().ok()?) as usize;
    if count > b.len() / 13 {
        return None;
    }
    let mut at = 4;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let e = EntityId::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?);
        let (added, _) = super::value_index::log_flags(*b.get(at + 8)?)?;
        let len = u32::from_be_bytes(b.get(at + 9..at + 13)?.try_into().ok()?) as usize;
        at += 13;
        let av = b.get(at..at.checked_add(len)?)?;
        at += len;
        out.push((e, added, av));
    }
    (at == b.len()).then_some(out)
}
