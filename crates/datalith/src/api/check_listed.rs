//! `check`'s part for the attributes whose datoms have no AVE entries (`store::value_index`):
//! every entity of such a datom is in `attr_entities`, no attribute is in both places, each
//! is where the schema puts it, and its value sketch holds every value it has.

use std::collections::{BTreeMap, BTreeSet};

use super::check::{every_entry, Inconsistency};
use crate::kv::Direction;
use crate::store::reader::IndexReader;
use crate::store::sketch::Sketch;
use crate::store::{keys, AttrId, Schema, StoreError, ValueIndex};

/// Checks `attr_entities` against EAV, AVE and the schema (`eav_counts`: each attribute's
/// datoms in EAV); returns the listed attributes.
pub(super) fn check_listed(
    r: &IndexReader<'_>,
    schema: &Schema,
    eav_counts: &BTreeMap<AttrId, u64>,
    problems: &mut Vec<Inconsistency>,
) -> Result<BTreeSet<AttrId>, StoreError> {
    let mut listed = BTreeSet::new();
    let Some(ae) = &r.t.attr_entities else {
        return Ok(listed);
    };
    let policy = r.t.value_index;
    let mut problem = |detail: String| problems.push(Inconsistency::ValueIndex { detail });
    for entry in every_entry(r.view, ae)? {
        let (k, v) = entry?;
        match (<[u8; keys::ATTR_BYTES]>::try_from(k), keys::read_entity(v)) {
            (Ok(a), Some(_)) => {
                listed.insert(AttrId::from_be_bytes(a));
            }
            _ => problem(format!(
                "an entry that is not an attribute and an entity: {} and {} bytes",
                k.len(),
                v.len()
            )),
        }
    }
    for &a in &listed {
        if policy == ValueIndex::All {
            problem(format!(
                "attribute {a} is listed in a database that keeps every datom in AVE"
            ));
        }
        if r.view
            .prefix(&r.t.ave, &a.to_be_bytes(), Direction::Forward)?
            .next()
            .is_some()
        {
            problem(format!("attribute {a} has datoms in AVE and is listed too"));
        }
        if schema.get(a).is_some_and(|attr| policy.in_ave(attr)) {
            problem(format!(
                "attribute {a} is listed, but its schema gives its datoms AVE entries"
            ));
        }
    }
    // An attribute with datoms that the schema keeps out of AVE is listed.
    for (&a, &n) in eav_counts {
        if n > 0 && !listed.contains(&a) && !policy.in_ave_of(schema, a) {
            problem(format!(
                "attribute {a} has {n} datoms and is not listed, but its schema keeps them out of AVE"
            ));
        }
    }
    if listed.is_empty() {
        return Ok(listed);
    }
    // Every datom of a listed attribute has its entity listed, and its value in the
    // attribute's sketch (`store::sketch`; a database made before the sketches has none).
    let mut sketches: BTreeMap<AttrId, Sketch> = BTreeMap::new();
    for entry in every_entry(r.view, &r.t.eav)? {
        let (k, raw) = entry?;
        let (Some(e), Some((a, vb))) = (keys::read_entity(k), keys::split_attr(raw)) else {
            continue;
        };
        if !listed.contains(&a) {
            continue;
        }
        sketches.entry(a).or_default().add(vb);
        if !r.view.list_contains(ae, &a.to_be_bytes(), k)? {
            problem(format!(
                "entity {e} has a datom of attribute {a} but is not listed"
            ));
        }
    }
    for (a, held) in sketches {
        match r.stored_sketch(a) {
            Ok(None) => {}
            Ok(Some(stored)) if stored.covers(&held) => {}
            Ok(Some(_)) => problems.push(Inconsistency::Sketch { a }),
            Err(e) => problems.push(Inconsistency::ValueIndex {
                detail: format!("the value sketch of attribute {a}: {e}"),
            }),
        }
    }
    Ok(listed)
}
