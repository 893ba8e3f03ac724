//! Reads of an attribute whose datoms have no AVE entries (`store::value_index`): its
//! entities come from `attr_entities`, in id order, and their values from EAV. The
//! [`IndexReader`] methods that read AVE come here first for such an attribute, so that every
//! caller gets the same answers from either layout; what AVE gives in value order (scans,
//! distinct values) is sorted here.

use std::ops::Bound;

use super::error::StoreError;
use super::ids::{AttrId, EntityId};
use super::keys::{self, ENTITY_BYTES};
use super::reader::{attr_value_bytes, IndexReader};
use super::value_index::ValueIndex;
use crate::codec::Value;
use rustc_hash::FxHashMap as HashMap;

/// The value part of a bound on an attribute's values, encoded as in an index key.
type ValueBound = Bound<Vec<u8>>;

/// A listed attribute's holders of each value (by its index form), ascending.
pub(super) type Holders<'a> = HashMap<&'a [u8], Vec<EntityId>>;

/// The memory a read of a listed attribute in value order holds a datom, at most: a sorted
/// row is a value's slice and an entity id (24 bytes); a map of holders (a value cursor's)
/// keeps a slice, a vector and a hash slot a distinct value and 8 bytes a holder, 56 bytes
/// when every value is distinct. Queries charge it to their memory budget before such a read
/// (`query::exec`'s `hold_listed`).
pub const LISTED_BYTES_PER_DATOM: u64 = 56;

impl<'a> IndexReader<'a> {
    /// Whether attribute `a`'s datoms are listed in `attr_entities` instead of AVE: only in a
    /// database that keeps AVE for declared attributes, and only once the attribute has a
    /// list (an attribute's datoms are all in one place or the other, so an attribute with
    /// neither has no datoms, and AVE answers for it).
    pub fn is_listed(&self, a: AttrId) -> Result<bool, StoreError> {
        if self.t.value_index == ValueIndex::All {
            return Ok(false);
        }
        let Some(ae) = &self.t.attr_entities else {
            return Ok(false);
        };
        let in_ave = |s: &super::Schema| s.get(a).is_some_and(|x| self.t.value_index.in_ave(x));
        if self.schema.is_some_and(in_ave) {
            return Ok(false);
        }
        Ok(self.view.get(ae, &a.to_be_bytes())?.is_some())
    }

    /// Calls `f(entity, value bytes)` for every datom of the listed attribute `a`, in entity
    /// then value order, until it returns false. An entity listed without a value (it lost
    /// them) is passed over.
    pub fn each_listed_datom(
        &self,
        a: AttrId,
        mut f: impl FnMut(EntityId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let Some(ae) = &self.t.attr_entities else {
            return Ok(());
        };
        let mut eav = self.entity_cursor()?;
        // The callback's error travels out through `failed` (the walk speaks `KvError`).
        let mut failed = None;
        self.view
            .list_blocks(ae, &a.to_be_bytes(), |block, width| {
                if width != ENTITY_BYTES || block.len() % ENTITY_BYTES != 0 {
                    failed = Some(StoreError::Corrupt {
                        detail: format!(
                            "attr_entities of attribute {a}: an entry is not an entity id"
                        ),
                    });
                    return Ok(false);
                }
                for raw in block.chunks_exact(ENTITY_BYTES) {
                    let e = EntityId::from_be_bytes(raw.try_into().unwrap_or([0; ENTITY_BYTES]));
                    let mut go = true;
                    let walked = eav.entity_raw_from(e, a, |attr, vb| {
                        if attr != a {
                            return Ok(false);
                        }
                        go = f(e, vb)?;
                        Ok(go)
                    });
                    if let Err(err) = walked {
                        failed = Some(err);
                        return Ok(false);
                    }
                    if !go {
                        return Ok(false);
                    }
                }
                Ok(true)
            })?;
        failed.map_or(Ok(()), Err)
    }

    /// [`Self::each_listed_datom`] for the datoms whose values lie within the bounds.
    pub(super) fn each_listed_datom_within(
        &self,
        a: AttrId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(EntityId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let (lower, upper) = (value_bound(a, lower), value_bound(a, upper));
        self.each_listed_datom(a, |e, vb| match within(vb, &lower, &upper) {
            true => f(e, vb),
            false => Ok(true),
        })
    }

    /// Calls `f(entity, value bytes)` for the datoms of the listed attribute `a` whose
    /// entities are `from` or later and whose values lie within the bounds, in entity then
    /// value order, until it returns false: a walk that can stop and go on later from an
    /// entity (a first step read a part at a time), where a read in value order would sort the
    /// whole attribute again for every part.
    pub fn each_listed_datom_from(
        &self,
        a: AttrId,
        from: EntityId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(EntityId, &'a [u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let Some(ae) = &self.t.attr_entities else {
            return Ok(());
        };
        let (lower, upper) = (value_bound(a, lower), value_bound(a, upper));
        let mut eav = self.entity_cursor()?;
        let mut list = self.view.list_reader(ae)?;
        let mut failed = None;
        list.each_from(&a.to_be_bytes(), &from.to_be_bytes(), |raw| {
            let Ok(bytes) = <[u8; ENTITY_BYTES]>::try_from(raw) else {
                failed = Some(StoreError::Corrupt {
                    detail: format!("attr_entities of attribute {a}: an entry is not an entity id"),
                });
                return Ok(false);
            };
            let e = EntityId::from_be_bytes(bytes);
            let mut go = true;
            let walked = eav.entity_raw_from(e, a, |attr, vb| {
                if attr != a {
                    return Ok(false);
                }
                if within(vb, &lower, &upper) {
                    go = f(e, vb)?;
                }
                Ok(go)
            });
            if let Err(err) = walked {
                failed = Some(err);
                return Ok(false);
            }
            Ok(go)
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// The entities whose listed attribute `a` has the value whose index form is `vb`,
    /// ascending, handed to `f` until it returns false.
    pub(super) fn listed_entities_with(
        &self,
        a: AttrId,
        vb: &[u8],
        mut f: impl FnMut(EntityId) -> bool,
    ) -> Result<(), StoreError> {
        self.each_listed_datom(a, |e, held| Ok(held != vb || f(e)))
    }

    /// Every value of the listed attribute `a` with its holders.
    pub(super) fn listed_holders(&self, a: AttrId) -> Result<Holders<'a>, StoreError> {
        let mut holders = Holders::default();
        self.each_listed_datom(a, |e, vb| {
            holders.entry(vb).or_default().push(e);
            Ok(true)
        })?;
        Ok(holders)
    }

    /// The datoms of the listed attribute `a` whose values lie within the bounds, counted in
    /// one walk (unsorted: a count needs no order, and interpolating would need the ends,
    /// each a walk of its own).
    pub(super) fn listed_range_count(
        &self,
        a: AttrId,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<super::range_estimate::RangeEstimate, StoreError> {
        let mut datoms = 0u64;
        self.each_listed_datom_within(a, lo, hi, |_, _| {
            datoms += 1;
            Ok(true)
        })?;
        Ok(super::range_estimate::RangeEstimate {
            datoms,
            exact: true,
        })
    }

    /// The datoms of the listed attribute `a` whose values lie within the bounds, sorted by
    /// value then entity, as AVE holds them.
    pub(super) fn listed_sorted(
        &self,
        a: AttrId,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Result<Vec<(&'a [u8], EntityId)>, StoreError> {
        let mut rows = Vec::new();
        self.each_listed_datom_within(a, lower, upper, |e, vb| {
            rows.push((vb, e));
            Ok(true)
        })?;
        rows.sort_unstable();
        Ok(rows)
    }
}

/// The index form of a bound on `a`'s values.
fn value_bound(a: AttrId, b: Bound<&Value>) -> ValueBound {
    let form = |v: &Value| {
        let mut k = Vec::with_capacity(keys::ATTR_BYTES + 16);
        attr_value_bytes(a, v, &mut k);
        k.split_off(keys::ATTR_BYTES)
    };
    match b {
        Bound::Included(v) => Bound::Included(form(v)),
        Bound::Excluded(v) => Bound::Excluded(form(v)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Whether the index form `vb` lies within the bounds (the order of index keys: bytes).
fn within(vb: &[u8], lower: &ValueBound, upper: &ValueBound) -> bool {
    let above = match lower {
        Bound::Included(l) => vb >= l.as_slice(),
        Bound::Excluded(l) => vb > l.as_slice(),
        Bound::Unbounded => true,
    };
    let below = match upper {
        Bound::Included(u) => vb <= u.as_slice(),
        Bound::Excluded(u) => vb < u.as_slice(),
        Bound::Unbounded => true,
    };
    above && below
}
