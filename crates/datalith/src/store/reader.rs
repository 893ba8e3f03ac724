//! Reading datoms out of the indexes, over any [`View`] (a snapshot or the committer's batch
//! transaction). Bytes from disk are decoded defensively: a malformed entry is a
//! [`StoreError::Corrupt`], never a panic.

use std::ops::Bound;

use super::error::StoreError;
use super::ids::{AttrId, EntityId};
use super::keys::{self, ATTR_BYTES, ENTITY_BYTES};
use super::listed;
use super::sketch::{self, Sketch};
use super::tables::{self, AttrStats, Tables};
use crate::codec::{self, Value};
use crate::kv::{Direction, KvError, ListReader, View};
use rustc_hash::FxHashMap as HashMap;

/// Index access for one consistent state.
#[derive(Clone, Copy)]
pub struct IndexReader<'a> {
    pub(crate) view: View<'a>,
    pub(crate) t: &'a Tables,
    /// This state's schema, when the reader's maker has it (a transaction's): an attribute
    /// it keeps in AVE is then known not to be listed without a read of `attr_entities`
    /// (`is_listed`), whose writes a batch may defer to the LMDB writer, so that a read of
    /// it would send a large batch into LMDB on the committer's thread.
    pub(crate) schema: Option<&'a super::schema::Schema>,
}

fn corrupt(what: &str, bytes: &[u8]) -> StoreError {
    StoreError::Corrupt {
        detail: format!(
            "{what}: {} bytes {:02x?}",
            bytes.len(),
            &bytes[..bytes.len().min(24)]
        ),
    }
}

/// Encodes `attr ++ index key of value` (the AVE key and the EAV list value). A value too long
/// to index inline is keyed by a prefix and a hash (`codec::index_key`); its full encoding lives
/// in the `giants` table under `giant_key`.
pub fn attr_value_bytes(a: AttrId, v: &Value, out: &mut Vec<u8>) -> Option<codec::Giant> {
    keys::attr_prefix(a, out);
    codec::encode_index_key(v, out)
}

/// The `giants` table key of a giant value of attribute `a`.
pub fn giant_key(a: AttrId, hash: &codec::GiantHash) -> [u8; ATTR_BYTES + 16] {
    let mut k = [0u8; ATTR_BYTES + 16];
    k[..ATTR_BYTES].copy_from_slice(&a.to_be_bytes());
    k[ATTR_BYTES..].copy_from_slice(hash);
    k
}

/// A long, instant, ref or double encoding (9 bytes), decoded directly; `None` for anything
/// else (and for a double's bytes no encoder writes, which the general decoder refuses).
#[inline]
pub fn decode_fixed(vb: &[u8]) -> Option<Value> {
    use codec::encode::tag;
    let (&t, rest) = vb.split_first()?;
    let bytes: [u8; 8] = rest.try_into().ok()?;
    let n = u64::from_be_bytes(bytes);
    match t {
        tag::LONG => Some(Value::Long((n ^ (1 << 63)) as i64)),
        tag::INSTANT => Some(Value::Instant((n ^ (1 << 63)) as i64)),
        tag::REF => Some(Value::Ref(n)),
        // Refused (to the general decoder's error) unless it is what the encoder writes.
        tag::DOUBLE => codec::F64::new(codec::decode::decode_f64(bytes))
            .filter(|x| codec::encode::encode_f64(x.get()) == bytes)
            .map(Value::Double),
        _ => None,
    }
}

/// Decodes an encoded value that must fill `bytes` exactly.
pub fn decode_exact(bytes: &[u8]) -> Result<Value, StoreError> {
    match codec::decode(bytes) {
        Ok((v, n)) if n == bytes.len() => Ok(v),
        Ok(_) => Err(corrupt("trailing bytes after an index value", bytes)),
        Err(e) => Err(StoreError::Corrupt {
            detail: format!("undecodable index value: {e}"),
        }),
    }
}

impl<'a> IndexReader<'a> {
    /// A reader over `view`.
    pub fn new(view: View<'a>, t: &'a Tables) -> Self {
        IndexReader {
            view,
            t,
            schema: None,
        }
    }

    /// This reader, knowing that `schema` is its state's.
    pub(crate) fn with_schema(self, schema: &'a super::schema::Schema) -> Self {
        IndexReader {
            schema: Some(schema),
            ..self
        }
    }

    /// Decodes the value part of an index entry of attribute `a`, fetching a giant's full
    /// encoding (checked against its prefix and hash) from the `giants` table.
    pub fn decode_value(&self, a: AttrId, vb: &[u8]) -> Result<Value, StoreError> {
        // Fixed-width numbers (most of what queries join and compare) without the general
        // decoder.
        if let Some(v) = decode_fixed(vb) {
            return Ok(v);
        }
        codec::decode_index_key(vb, |hash| -> Result<&[u8], StoreError> {
            self.view
                .get(&self.t.giants, &giant_key(a, hash))?
                .ok_or_else(|| StoreError::Corrupt {
                    detail: format!(
                        "giant value of attribute {a} is missing from the giants table"
                    ),
                })
        })
    }

    /// Every `(attribute, value)` of entity `e`, in attribute then value order.
    pub fn entity(&self, e: EntityId) -> Result<Vec<(AttrId, Value)>, StoreError> {
        let mut out = Vec::new();
        for raw in self.view.list(&self.t.eav, &keys::eav_key(e))? {
            let raw = raw?;
            let (a, vb) = keys::split_attr(raw).ok_or_else(|| corrupt("EAV value", raw))?;
            out.push((a, self.decode_value(a, vb)?));
        }
        Ok(out)
    }

    /// Calls `f` with each `(attribute, encoded value)` of `e`, without decoding.
    pub fn entity_raw(
        &self,
        e: EntityId,
        mut f: impl FnMut(AttrId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        // The callback's error travels out through `failed` (the walk speaks `KvError`).
        let mut failed = None;
        self.view.list_each(&self.t.eav, &keys::eav_key(e), |raw| {
            Ok(eav_step(raw, &mut f, &mut failed))
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// The values of attribute `a` on entity `e`.
    pub fn values(&self, e: EntityId, a: AttrId) -> Result<Vec<Value>, StoreError> {
        let mut out = Vec::new();
        self.entity_cursor()?.values_into(e, a, &mut out)?;
        Ok(out)
    }

    /// The values of attribute `a` on each entity of `entities`, appended to `out` in the
    /// order of `entities` (an entity's own values in value order).
    ///
    /// When `entities` name a large share of the attribute's datoms (at least 1 in
    /// `VALUES_SCAN_SHARE`), one scan of the attribute's AVE entries (entity ids read a page
    /// at a time, each value decoded once) replaces the per-entity lookups. Otherwise one
    /// cursor serves every EAV lookup: with `entities` ascending most lookups stay on the leaf
    /// page of the previous one.
    pub fn values_of_each(
        &self,
        entities: &[EntityId],
        a: AttrId,
        out: &mut Vec<Value>,
    ) -> Result<(), StoreError> {
        let datoms = self.estimated_stats(a)?.datoms;
        let n = entities.len() as u64;
        if n > 0
            && !self.is_listed(a)?
            && n.saturating_mul(crate::limits::VALUES_SCAN_SHARE) >= datoms
        {
            if let Some(()) = self.values_of_each_by_scan(entities, a, out)? {
                return Ok(());
            }
        }
        let mut c = self.entity_cursor()?;
        for &e in entities {
            c.values_into(e, a, out)?;
        }
        Ok(())
    }

    /// [`Self::values_of_each`] through one AVE scan; `None` (nothing appended) when the
    /// entities span too wide an id range for a direct slot table.
    fn values_of_each_by_scan(
        &self,
        entities: &[EntityId],
        a: AttrId,
        out: &mut Vec<Value>,
    ) -> Result<Option<()>, StoreError> {
        let (Some(&lo), Some(&hi)) = (entities.iter().min(), entities.iter().max()) else {
            return Ok(Some(()));
        };
        let span = hi - lo + 1;
        if span > (entities.len() as u64).saturating_mul(64).max(1024) {
            return Ok(None);
        }
        // Slot of each entity id (its first position in `entities`); u32::MAX: not asked.
        let mut slot = vec![u32::MAX; span as usize];
        for (i, &e) in entities.iter().enumerate() {
            let s = &mut slot[(e - lo) as usize];
            if *s == u32::MAX {
                *s = i as u32;
            }
        }
        // Each slot's first value (the smallest: the scan goes in value order) as a number
        // into `values` (each distinct value decoded once; u32::MAX: none); any further values
        // (cardinality many) in `extra`, in scan order. Numbers, not values: an entity found
        // costs a 4-byte store, and each value is cloned once, into `out`.
        let mut first: Vec<u32> = vec![u32::MAX; entities.len()];
        let mut extra: Vec<(u32, u32)> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        let mut last: Option<&[u8]> = None;
        self.scan_attr(
            a,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            #[inline(always)]
            |vb, e| {
                let Some(&s) = e.checked_sub(lo).and_then(|d| slot.get(d as usize)) else {
                    return Ok(true);
                };
                if s == u32::MAX {
                    return Ok(true);
                }
                // Runs of one value share its decoding (and, a page at a time, its bytes'
                // address, checked before the bytes).
                if !last.is_some_and(|b| std::ptr::eq(b, vb) || b == vb) {
                    values.push(self.decode_value(a, vb)?);
                    last = Some(vb);
                }
                let v = (values.len() - 1) as u32;
                match &mut first[s as usize] {
                    place if *place == u32::MAX => *place = v,
                    _ => extra.push((s, v)),
                }
                Ok(true)
            },
        )?;
        // Entity order (stable: an entity's further values stay in value order).
        extra.sort_by_key(|(s, _)| *s);
        let mut extra = extra.into_iter().peekable();
        out.reserve(entities.len());
        for (i, &e) in entities.iter().enumerate() {
            let at = slot[(e - lo) as usize];
            if at as usize == i {
                if first[i] != u32::MAX {
                    out.push(values[first[i] as usize].clone());
                }
                while let Some((_, v)) = extra.next_if(|(s, _)| *s == at) {
                    out.push(values[v as usize].clone());
                }
            } else {
                // A repeated entity: its values again.
                let mut c = self.entity_cursor()?;
                c.values_into(e, a, out)?;
            }
        }
        Ok(Some(()))
    }

    /// A cursor for many entity lookups (see [`EntityCursor`]).
    pub fn entity_cursor(&self) -> Result<EntityCursor<'a>, StoreError> {
        Ok(EntityCursor {
            r: *self,
            eav: self.view.list_reader(&self.t.eav)?,
        })
    }

    /// A cursor for many lookups of entities by value (see [`ValueCursor`]).
    pub fn value_cursor(&self) -> Result<ValueCursor<'a>, StoreError> {
        Ok(ValueCursor {
            r: *self,
            ave: self.view.list_reader(&self.t.ave)?,
            key: Vec::with_capacity(32),
            listed: HashMap::default(),
        })
    }

    /// Whether the datom `[e a v]` exists.
    pub fn contains(&self, e: EntityId, a: AttrId, v: &Value) -> Result<bool, StoreError> {
        let mut buf = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut buf);
        Ok(self
            .view
            .list_contains(&self.t.eav, &keys::eav_key(e), &buf)?)
    }

    /// Whether entity `e` has any datom.
    pub fn exists(&self, e: EntityId) -> Result<bool, StoreError> {
        Ok(self.view.get(&self.t.eav, &keys::eav_key(e))?.is_some())
    }

    /// The entities whose attribute `a` has value `v`, ascending.
    pub fn entities_with(&self, a: AttrId, v: &Value) -> Result<Vec<EntityId>, StoreError> {
        let mut key = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut key);
        self.entities_with_key(&key)
    }

    /// Like [`Self::entities_with`] for an already encoded AVE key.
    pub fn entities_with_key(&self, key: &[u8]) -> Result<Vec<EntityId>, StoreError> {
        let mut out = Vec::new();
        self.ave_entities(key, |e| {
            out.push(e);
            true
        })?;
        Ok(out)
    }

    /// Calls `f` with each entity of the AVE key `key`, ascending, until it returns false;
    /// the entity ids come a page at a time from LMDB.
    fn ave_entities(
        &self,
        key: &[u8],
        mut f: impl FnMut(EntityId) -> bool,
    ) -> Result<(), StoreError> {
        if let Some((a, vb)) = keys::split_attr(key) {
            if self.is_listed(a)? {
                return self.listed_entities_with(a, vb, f);
            }
        }
        let mut bad = None;
        self.view.list_blocks(
            &self.t.ave,
            key,
            #[inline(always)]
            |block, width| {
                if width != ENTITY_BYTES {
                    bad = Some(corrupt("AVE entity", block));
                    return Ok(false);
                }
                for raw in block.chunks_exact(ENTITY_BYTES) {
                    let e = EntityId::from_be_bytes(raw.try_into().unwrap_or([0; ENTITY_BYTES]));
                    if !f(e) {
                        return Ok(false);
                    }
                }
                Ok(true)
            },
        )?;
        match bad {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Like [`Self::entities_with`], but `None` as soon as there are more than `limit`.
    pub fn entities_with_at_most(
        &self,
        a: AttrId,
        v: &Value,
        limit: u64,
    ) -> Result<Option<Vec<EntityId>>, StoreError> {
        let mut key = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut key);
        let mut out = Vec::new();
        let mut over = false;
        self.ave_entities(&key, |e| {
            if out.len() as u64 >= limit {
                over = true;
                return false;
            }
            out.push(e);
            true
        })?;
        Ok((!over).then_some(out))
    }

    /// The first (lowest) entity whose `a` is `v`: one B-tree lookup.
    pub fn first_entity_with(&self, a: AttrId, v: &Value) -> Result<Option<EntityId>, StoreError> {
        let mut key = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut key);
        if self.is_listed(a)? {
            let mut first = None;
            self.ave_entities(&key, |e| {
                first = Some(e);
                false
            })?;
            return Ok(first);
        }
        match self.view.get(&self.t.ave, &key)? {
            None => Ok(None),
            Some(raw) => Ok(Some(
                keys::read_entity(raw).ok_or_else(|| corrupt("AVE entity", raw))?,
            )),
        }
    }

    /// How many entities have `a` = `v`: LMDB's count of the AVE key's values, without a
    /// walk (`View::list_len`).
    pub fn entities_with_count(&self, a: AttrId, v: &Value) -> Result<u64, StoreError> {
        let mut key = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut key);
        if self.is_listed(a)? {
            let mut n = 0;
            self.ave_entities(&key, |_| {
                n += 1;
                true
            })?;
            return Ok(n);
        }
        Ok(self.view.list_len(&self.t.ave, &key)?)
    }

    /// How many entities have `a` = `v`, counting at most `cap` (an estimate needs no more).
    pub fn count_with(&self, a: AttrId, v: &Value, cap: u64) -> Result<u64, StoreError> {
        let mut key = Vec::with_capacity(32);
        attr_value_bytes(a, v, &mut key);
        let mut n = 0;
        self.ave_entities(&key, |_| {
            n += 1;
            n < cap
        })?;
        Ok(n)
    }

    /// How many entities hold the AVE key `key` (attribute ++ value index form), counting at
    /// most `cap`.
    pub fn count_key(&self, key: &[u8], cap: u64) -> Result<u64, StoreError> {
        let mut n = 0;
        self.ave_entities(key, |_| {
            n += 1;
            n < cap
        })?;
        Ok(n)
    }

    /// Calls `f(value bytes, entity ids)` for the AVE entries of `a` within the bounds,
    /// forward, until it returns false: each value's entities (8 bytes each, ascending) a
    /// page at a time, so that a caller can work on a page's ids together (decode the value
    /// once, fetch what the ids point at ahead of use).
    pub fn scan_attr_blocks(
        &self,
        a: AttrId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(&'a [u8], &[u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        if self.is_listed(a)? {
            let rows = self.listed_sorted(a, lower, upper)?;
            let mut block = Vec::new();
            for run in rows.chunk_by(|x, y| x.0 == y.0) {
                block.clear();
                for (_, e) in run {
                    block.extend_from_slice(&e.to_be_bytes());
                }
                if !f(run[0].0, &block)? {
                    break;
                }
            }
            return Ok(());
        }
        let lo = bound_key(a, lower, false);
        let hi = bound_key(a, upper, true);
        // The callback's error travels out through `failed` (the walk speaks `KvError`).
        let mut failed = None;
        self.view.range_blocks(
            &self.t.ave,
            as_ref_bound(&lo),
            as_ref_bound(&hi),
            #[inline(always)]
            |k, block, width| {
                let step = match keys::split_attr(k) {
                    None => Err(corrupt("AVE key", k)),
                    Some(_) if width != ENTITY_BYTES || block.len() % ENTITY_BYTES != 0 => {
                        Err(corrupt("AVE entity", block))
                    }
                    Some((_, vb)) => f(vb, block),
                };
                match step {
                    Ok(go) => Ok(go),
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                }
            },
        )?;
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// [`Self::scan_attr_blocks`] for a caller that needs no order: an attribute without AVE
    /// entries (`store::value_index`) is walked in entity order, a block of one entity a
    /// datom, instead of sorted by value in memory first.
    pub fn scan_attr_blocks_any_order(
        &self,
        a: AttrId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(&'a [u8], &[u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        if !self.is_listed(a)? {
            return self.scan_attr_blocks(a, lower, upper, f);
        }
        self.each_listed_datom_within(a, lower, upper, |e, vb| f(vb, &e.to_be_bytes()))
    }

    /// Calls `f(value bytes, entity)` for every AVE entry of attribute `a` whose value lies
    /// within the bounds, in value order; `f` returns false to stop.
    pub fn scan_attr(
        &self,
        a: AttrId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        direction: Direction,
        mut f: impl FnMut(&'a [u8], EntityId) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let lo = bound_key(a, lower, false);
        let hi = bound_key(a, upper, true);
        let lo_ref = as_ref_bound(&lo);
        let hi_ref = as_ref_bound(&hi);
        if direction == Direction::Forward {
            return self.scan_attr_blocks(
                a,
                lower,
                upper,
                #[inline(always)]
                |vb, block| {
                    for raw in block.chunks_exact(ENTITY_BYTES) {
                        let e =
                            EntityId::from_be_bytes(raw.try_into().unwrap_or([0; ENTITY_BYTES]));
                        if !f(vb, e)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                },
            );
        }
        if self.is_listed(a)? {
            let rows = self.listed_sorted(a, lower, upper)?;
            for (vb, e) in rows.into_iter().rev() {
                if !f(vb, e)? {
                    break;
                }
            }
            return Ok(());
        }
        for entry in self.view.range(&self.t.ave, lo_ref, hi_ref, direction)? {
            let (k, ev) = entry?;
            let (_, vb) = keys::split_attr(k).ok_or_else(|| corrupt("AVE key", k))?;
            let e = keys::read_entity(ev).ok_or_else(|| corrupt("AVE entity", ev))?;
            if !f(vb, e)? {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f(value bytes)` once for every distinct value of attribute `a` that at least one
    /// entity accepted by `member` holds, in value order. Each value's entity list is walked
    /// only until its first member, then the walk jumps past the value: cheap when members are
    /// common (a semijoin that needs only the values, not which entities hold them).
    pub fn values_held(
        &self,
        a: AttrId,
        mut member: impl FnMut(EntityId) -> bool,
        mut f: impl FnMut(&'a [u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if self.is_listed(a)? {
            let rows = self.listed_sorted(a, Bound::Unbounded, Bound::Unbounded)?;
            for run in rows.chunk_by(|x, y| x.0 == y.0) {
                if run.iter().any(|(_, e)| member(*e)) {
                    f(run[0].0)?;
                }
            }
            return Ok(());
        }
        let start = a.to_be_bytes();
        let end = a.checked_add(1).map(|n| n.to_be_bytes());
        let upper = match &end {
            Some(e) => Bound::Excluded(&e[..]),
            None => Bound::Unbounded,
        };
        // Restart past each found value: an excluded key skips the rest of its entity list.
        let mut lower: Bound<&[u8]> = Bound::Included(&start[..]);
        // The last value found: a key too long for the skip to be exact may come back.
        let mut prev: Option<&'a [u8]> = None;
        loop {
            let mut found: Option<&'a [u8]> = None;
            for entry in self
                .view
                .range(&self.t.ave, lower, upper, Direction::Forward)?
            {
                let (k, ev) = entry?;
                if prev == Some(k) {
                    continue;
                }
                let e = keys::read_entity(ev).ok_or_else(|| corrupt("AVE entity", ev))?;
                if member(e) {
                    found = Some(k);
                    break;
                }
            }
            let Some(k) = found else { return Ok(()) };
            let (_, vb) = keys::split_attr(k).ok_or_else(|| corrupt("AVE key", k))?;
            f(vb)?;
            lower = Bound::Excluded(k);
            prev = Some(k);
        }
    }

    /// Statistics of attribute `a`.
    pub fn stats(&self, a: AttrId) -> Result<AttrStats, StoreError> {
        let mut s = self.counted_stats(a)?;
        let mut prefix = Vec::new();
        keys::attr_prefix(a, &mut prefix);
        let mut unheld = 0;
        self.view
            .overlay_key_balance(&self.t.ave, &prefix, |_, d| unheld += d)?;
        s.distinct = (s.distinct as i64 + unheld).max(0) as u64;
        self.listed_distinct(a, &mut s)?;
        Ok(s)
    }

    /// [`IndexReader::stats`] for the planner, whose estimates must not cost a lookup per
    /// waiting value: the datoms of every write, and the distinct values LMDB counted, scaled
    /// up by the share of the datoms it does not hold yet (transactions its writer has not
    /// written, speculative ones), whose values are not looked up. Unscaled, an attribute
    /// whose datoms all wait (a burst of writes the writer takes up to a second to write)
    /// would look like one value, and a plan would scan it where a lookup by entity is
    /// cheaper.
    pub fn estimated_stats(&self, a: AttrId) -> Result<AttrStats, StoreError> {
        let mut s = self.counted_stats(a)?;
        if self.listed_distinct(a, &mut s)? || !self.view.has_overlay() {
            return Ok(s);
        }
        let held = self.held_stats(a)?;
        if s.datoms > held.datoms {
            let counted = (held.distinct as i64 + self.distinct_tally(a)?).max(0) as u64;
            let scaled = match held.datoms {
                0 => s.datoms,
                n => (u128::from(counted) * u128::from(s.datoms) / u128::from(n)) as u64,
            };
            s.distinct = s.distinct.max(scaled.min(s.datoms));
        }
        Ok(s)
    }

    /// For a listed attribute, whose distinct values no AVE key counts: the estimate of its
    /// sketch (`store::sketch`), at most one a datom and at least one while it has any (a
    /// database made before the sketches: each datom a value of its own). Whether it is
    /// listed.
    fn listed_distinct(&self, a: AttrId, s: &mut AttrStats) -> Result<bool, StoreError> {
        let listed = self.is_listed(a)?;
        if listed {
            s.distinct = match self.stored_sketch(a)? {
                None => s.datoms,
                Some(sketch) => sketch.estimate().clamp(s.datoms.min(1), s.datoms),
            };
        }
        Ok(listed)
    }

    /// The sketch of a listed attribute's values, if one is stored (a database made before
    /// the sketches has none).
    pub fn stored_sketch(&self, a: AttrId) -> Result<Option<Sketch>, StoreError> {
        match self.view.get(&self.t.meta, &sketch::key(a))? {
            None => Ok(None),
            Some(b) => Sketch::from_bytes(b)
                .map(Some)
                .ok_or_else(|| corrupt("value sketch", b)),
        }
    }

    /// The statistics record through the view, with the distinct values LMDB counted (its
    /// tally): exact but for the values the overlay creates or empties.
    fn counted_stats(&self, a: AttrId) -> Result<AttrStats, StoreError> {
        let mut s = self.stored_stats(a)?;
        s.distinct = (s.distinct as i64 + self.distinct_tally(a)?).max(0) as u64;
        Ok(s)
    }

    /// The statistics record as LMDB holds it, without the overlay's writes.
    fn held_stats(&self, a: AttrId) -> Result<AttrStats, StoreError> {
        match self.view.base().get(&self.t.meta, &tables::stats_key(a))? {
            None => Ok(AttrStats::default()),
            Some(b) => AttrStats::from_bytes(b).ok_or_else(|| corrupt("attribute statistics", b)),
        }
    }

    /// The attribute's statistics record as stored: its datom count, and the part of its
    /// distinct-value count that is not in its tally (`distinct_tally`). Only writers of the
    /// record want this.
    pub fn stored_stats(&self, a: AttrId) -> Result<AttrStats, StoreError> {
        match self.view.get(&self.t.meta, &tables::stats_key(a))? {
            None => Ok(AttrStats::default()),
            Some(b) => AttrStats::from_bytes(b).ok_or_else(|| corrupt("attribute statistics", b)),
        }
    }

    /// Distinct values of the attribute that LMDB counted as it applied AVE writes (`kv::tally`,
    /// the tally being the attribute id), as of this snapshot's LMDB state: transactions that
    /// LMDB does not hold yet, and speculative ones, are not in it (`Db::check` adds them).
    pub fn distinct_tally(&self, a: AttrId) -> Result<i64, StoreError> {
        match self.view.tally(a)? {
            None => Ok(0),
            Some(b) => {
                crate::kv::tally::decode(b).ok_or_else(|| corrupt("distinct-value tally", b))
            }
        }
    }

    /// Calls `f(entity, attr, value bytes)` for every EAV entry with entity in `[lo, hi)`.
    pub fn scan_entities(
        &self,
        lo: EntityId,
        hi: EntityId,
        mut f: impl FnMut(EntityId, AttrId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let lo = keys::eav_key(lo);
        let hi = keys::eav_key(hi);
        for entry in self.view.range(
            &self.t.eav,
            Bound::Included(&lo[..]),
            Bound::Excluded(&hi[..]),
            Direction::Forward,
        )? {
            let (k, raw) = entry?;
            let e = keys::read_entity(k).ok_or_else(|| corrupt("EAV key", k))?;
            let (a, vb) = keys::split_attr(raw).ok_or_else(|| corrupt("EAV value", raw))?;
            if !f(e, a, vb)? {
                break;
            }
        }
        Ok(())
    }
}

/// One EAV list value of an entity walk handed to `f` as `(attribute, encoded value)`:
/// whether the walk goes on. `f`'s error (or a value too short to hold an attribute) parks in
/// `failed` and stops the walk, which itself can only fail with a `KvError`.
#[inline(always)]
fn eav_step<'a>(
    raw: &'a [u8],
    f: &mut impl FnMut(AttrId, &'a [u8]) -> Result<bool, StoreError>,
    failed: &mut Option<StoreError>,
) -> bool {
    let step = match keys::split_attr(raw) {
        Some((a, vb)) => f(a, vb),
        None => Err(corrupt("EAV value", raw)),
    };
    step.unwrap_or_else(|e| {
        *failed = Some(e);
        false
    })
}

/// Lookups of the entities holding a value, in the AVE index, through one LMDB cursor kept
/// across them (as [`EntityCursor`] in EAV): lookups in ascending value order mostly search
/// only the leaf page the previous one ended on. Any order is correct.
///
/// An attribute without AVE entries (`store::value_index`) is read whole at its first lookup
/// into a map from value to holders, which answers every later lookup of the cursor: one
/// walk of the attribute, however many values a step looks up.
pub struct ValueCursor<'a> {
    r: IndexReader<'a>,
    ave: ListReader<'a>,
    /// The key being looked up (kept to reuse its allocation).
    key: Vec<u8>,
    /// Per attribute looked up: `None` in AVE, else its values' holders.
    listed: HashMap<AttrId, Option<listed::Holders<'a>>>,
}

/// The holders of each value of `a` when it has no AVE entries, read once into `kept`.
fn listed_holders<'k, 'a>(
    r: &IndexReader<'a>,
    kept: &'k mut HashMap<AttrId, Option<listed::Holders<'a>>>,
    a: AttrId,
) -> Result<Option<&'k listed::Holders<'a>>, StoreError> {
    let holders = match kept.entry(a) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(match r.is_listed(a)? {
            true => Some(r.listed_holders(a)?),
            false => None,
        }),
    };
    Ok(holders.as_ref())
}

impl<'a> ValueCursor<'a> {
    /// Whether any entity's attribute `a` holds `v` (the first AVE entry answers).
    pub fn any_holds(&mut self, a: AttrId, v: &Value) -> Result<bool, StoreError> {
        self.key.clear();
        attr_value_bytes(a, v, &mut self.key);
        let mut found = false;
        if let Some(holders) = listed_holders(&self.r, &mut self.listed, a)? {
            return Ok(holders.contains_key(&self.key[ATTR_BYTES..]));
        }
        self.ave.each_from(&self.key, &[], |_| {
            found = true;
            Ok(false)
        })?;
        Ok(found)
    }

    /// Appends the entities whose attribute `a` holds `v`, ascending.
    pub fn entities_into(
        &mut self,
        a: AttrId,
        v: &Value,
        out: &mut Vec<EntityId>,
    ) -> Result<(), StoreError> {
        self.key.clear();
        attr_value_bytes(a, v, &mut self.key);
        if let Some(holders) = listed_holders(&self.r, &mut self.listed, a)? {
            if let Some(es) = holders.get(&self.key[ATTR_BYTES..]) {
                out.extend_from_slice(es);
            }
            return Ok(());
        }
        let mut bad = None;
        self.ave.each_from(&self.key, &[], |raw| {
            match <[u8; ENTITY_BYTES]>::try_from(raw) {
                Ok(b) => {
                    out.push(EntityId::from_be_bytes(b));
                    Ok(true)
                }
                Err(_) => {
                    bad = Some(corrupt("AVE entity", raw));
                    Ok(false)
                }
            }
        })?;
        bad.map_or(Ok(()), Err)
    }
}

/// Entity lookups in the EAV index through one LMDB cursor kept across them: lookups of
/// ascending entities mostly search only the leaf page the previous one ended on, instead of
/// descending the B-tree from the root each time. Any order is correct; ascending is fastest.
pub struct EntityCursor<'a> {
    r: IndexReader<'a>,
    eav: ListReader<'a>,
}

impl<'a> EntityCursor<'a> {
    /// Calls `f` with each `(attribute, encoded value)` of `e` whose attribute is at least
    /// `from` (in attribute then value order) until it returns false.
    pub fn entity_raw_from(
        &mut self,
        e: EntityId,
        from: AttrId,
        mut f: impl FnMut(AttrId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        // The callback's error travels out through `failed` (the walk speaks `KvError`).
        let mut failed = None;
        let start = from.to_be_bytes();
        let from_bytes: &[u8] = if from == 0 { &[] } else { &start };
        self.eav.each_from(
            &keys::eav_key(e),
            from_bytes,
            #[inline(always)]
            |raw| -> Result<bool, KvError> { Ok(eav_step(raw, &mut f, &mut failed)) },
        )?;
        failed.map_or(Ok(()), Err)
    }

    /// Calls `f` with each `(attribute, encoded value)` of `e` until it returns false (as
    /// [`IndexReader::entity_raw`]).
    pub fn entity_raw(
        &mut self,
        e: EntityId,
        f: impl FnMut(AttrId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        self.entity_raw_from(e, 0, f)
    }

    /// Appends the values of attribute `a` on entity `e` to `out`, in value order. LMDB finds
    /// the attribute's first value by searching the entity's sorted values.
    pub fn values_into(
        &mut self,
        e: EntityId,
        a: AttrId,
        out: &mut Vec<Value>,
    ) -> Result<(), StoreError> {
        let r = self.r;
        self.entity_raw_from(e, a, |attr, vb| {
            if attr != a {
                return Ok(false);
            }
            out.push(r.decode_value(a, vb)?);
            Ok(true)
        })
    }

    /// The values of attribute `a` on entity `e`.
    pub fn values(&mut self, e: EntityId, a: AttrId) -> Result<Vec<Value>, StoreError> {
        let mut out = Vec::new();
        self.values_into(e, a, &mut out)?;
        Ok(out)
    }
}

/// The AVE key bound for a value bound of attribute `a`. An unbounded end becomes the edge of
/// the attribute's key space: `a` alone sorts before all its keys, `a + 1` after.
fn bound_key(a: AttrId, b: Bound<&Value>, upper: bool) -> Bound<Vec<u8>> {
    let with = |v: &Value| {
        let mut k = Vec::with_capacity(ATTR_BYTES + 16);
        attr_value_bytes(a, v, &mut k);
        k
    };
    match b {
        Bound::Included(v) => Bound::Included(with(v)),
        Bound::Excluded(v) => Bound::Excluded(with(v)),
        Bound::Unbounded if !upper => Bound::Included(a.to_be_bytes().to_vec()),
        Bound::Unbounded => match a.checked_add(1) {
            Some(n) => Bound::Excluded(n.to_be_bytes().to_vec()),
            None => Bound::Unbounded,
        },
    }
}

fn as_ref_bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v),
        Bound::Excluded(v) => Bound::Excluded(v),
        Bound::Unbounded => Bound::Unbounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_decoding_matches_the_decoder() {
        let values = [
            Value::Long(0),
            Value::Long(-1),
            Value::Long(i64::MIN),
            Value::Long(i64::MAX),
            Value::Long(50_000),
            Value::Instant(-86_400_000),
            Value::Instant(1_700_000_000_000),
            Value::Ref(0),
            Value::Ref(1 << 44),
            Value::Ref(u64::MAX),
            Value::double(0.0).unwrap(),
            Value::double(-2.5).unwrap(),
            Value::double(f64::MAX).unwrap(),
            Value::double(f64::NEG_INFINITY).unwrap(),
            Value::double(5e-324).unwrap(),
        ];
        for v in values {
            let mut b = Vec::new();
            codec::encode::encode(&v, &mut b);
            assert_eq!(decode_fixed(&b), Some(v.clone()), "{v:?}");
            assert_eq!(decode_exact(&b).ok(), Some(v));
        }
        for other in [
            Value::string("abc"),
            Value::Boolean(true),
            Value::BigInt(Box::new(7)),
        ] {
            let mut b = Vec::new();
            codec::encode::encode(&other, &mut b);
            assert_eq!(decode_fixed(&b), None, "{other:?}");
        }
        // A double's bytes no encoder writes (NaN, negative zero) go to the general decoder,
        // which refuses them.
        for bits in [f64::NAN.to_bits(), (-0.0f64).to_bits()] {
            let mut b = vec![codec::encode::tag::DOUBLE];
            let flipped = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            b.extend_from_slice(&flipped.to_be_bytes());
            assert_eq!(decode_fixed(&b), None, "{bits:x}");
            assert!(decode_exact(&b).is_err(), "{bits:x}");
        }
    }
}
