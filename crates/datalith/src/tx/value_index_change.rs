//! A schema change that moves an attribute's datoms in or out of AVE (`store::value_index`):
//! `:db/index`, `:db/unique` or the value type altered in a database that keeps AVE only for
//! declared attributes. The move is staged in the same transaction, so no state has the
//! attribute half in one place.

use super::datoms::NetDatoms;
use super::error::TxError;
use crate::kv::Stage;
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::sketch::Sketch;
use crate::store::{AttrId, Schema, ValueIndex};

/// Stages the moves of the attributes whose AVE membership differs between `before` and
/// `after`; returns the sketches of the values of the attributes moved out of AVE
/// (`store::sketch`). A transaction that moves an attribute and also asserts or retracts its
/// datoms is refused: its datoms would have to be placed against a state the move is still
/// making.
pub(crate) fn stage_moves(
    r: &IndexReader<'_>,
    before: &Schema,
    after: &Schema,
    datoms: &NetDatoms,
    stage: &mut Stage,
) -> Result<Vec<(AttrId, Sketch)>, TxError> {
    let mut sketches = Vec::new();
    let policy = r.t.value_index;
    if policy == ValueIndex::All || std::ptr::eq(before, after) {
        return Ok(sketches);
    }
    let Some(ae) = &r.t.attr_entities else {
        return Ok(sketches);
    };
    let moved: Vec<(AttrId, bool)> = after
        .attributes()
        .into_iter()
        .filter_map(|attr| {
            let old = before.get(attr.id)?;
            let into_ave = policy.in_ave(&attr);
            (policy.in_ave(old) != into_ave).then_some((attr.id, into_ave))
        })
        .collect();
    for (a, into_ave) in moved {
        if datoms.datoms.iter().any(|d| d.a == a) {
            return Err(TxError::SchemaChange {
                attr: after
                    .get(a)
                    .map_or_else(|| a.to_string(), |x| x.ident.to_string()),
                reason: "a change that adds or drops its AVE entries (`:db/index`, `:db/unique`, \
                         the value type) goes in a transaction without its datoms"
                    .into(),
            });
        }
        let attr_key = a.to_be_bytes();
        if into_ave {
            // Listed -> AVE: each datom's AVE entry (counted under the attribute's tally),
            // then the list goes.
            if !r.is_listed(a)? {
                continue;
            }
            let mut key = Vec::with_capacity(64);
            r.each_listed_datom(a, |e, vb| {
                key.clear();
                key.extend_from_slice(&attr_key);
                key.extend_from_slice(vb);
                stage.list_change_tallied(true, &r.t.ave, &key, &keys::eav_key(e), Some(a));
                Ok(true)
            })?;
            stage.delete(ae, &attr_key);
        } else {
            // AVE -> listed: each entity listed, each AVE entry removed.
            let mut rows: Vec<(Vec<u8>, u64)> = Vec::new();
            r.scan_attr(
                a,
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                crate::kv::Direction::Forward,
                |vb, e| {
                    rows.push((vb.to_vec(), e));
                    Ok(true)
                },
            )?;
            let mut sketch = Sketch::default();
            for (vb, _) in &rows {
                sketch.add(vb);
            }
            sketches.push((a, sketch));
            let mut entities: Vec<u64> = rows.iter().map(|(_, e)| *e).collect();
            entities.sort_unstable();
            entities.dedup();
            for e in entities {
                stage.list_add(ae, &attr_key, &keys::eav_key(e));
            }
            let mut key = Vec::with_capacity(64);
            for (vb, e) in rows {
                key.clear();
                key.extend_from_slice(&attr_key);
                key.extend_from_slice(&vb);
                stage.list_change_tallied(false, &r.t.ave, &key, &keys::eav_key(e), Some(a));
            }
        }
    }
    Ok(sketches)
}
