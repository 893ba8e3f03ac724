//! Stage 5: the net datoms become index writes (EAV and AVE), statistics and counters,
//! staged for the committer.

use rustc_hash::FxHashMap as HashMap;

use super::error::TxError;
use crate::kv::Stage;
use crate::limits::MAX_KEY_BYTES;
use crate::store::ids::AttrId;
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::IndexReader;
use crate::store::tables::{meta_key, Tables};
use crate::store::Datom;

/// Stages the index entries of `datoms` (with their encoded values); returns the change of
/// each attribute's statistics (datoms, distinct values).
pub fn stage_datoms(
    r: &IndexReader<'_>,
    t: &Tables,
    datoms: &[(Datom, Vec<u8>)],
    stage: &mut Stage,
    unique: impl Fn(AttrId) -> bool,
) -> Result<HashMap<AttrId, (i64, i64)>, TxError> {
    let mut key = Vec::with_capacity(64);
    // Per (attr, value): net change in holders.
    let mut per_value: HashMap<(AttrId, &[u8]), i64> = HashMap::default();
    let mut stats: HashMap<AttrId, (i64, i64)> = HashMap::default();
    for (d, enc) in datoms {
        if ATTR_BYTES + enc.len() > MAX_KEY_BYTES {
            return Err(TxError::Malformed {
                detail: format!(
                    "value of {} bytes is too long to index (limit {} bytes)",
                    enc.len(),
                    MAX_KEY_BYTES - ATTR_BYTES
                ),
                form: format!("[{} {} ...]", d.e, d.a),
            });
        }
        key.clear();
        keys::attr_prefix(d.a, &mut key);
        key.extend_from_slice(enc);
        let e = keys::eav_key(d.e);
        if d.added {
            stage.list_add(&t.eav, &e, &key);
            stage.list_add(&t.ave, &key, &e);
        } else {
            stage.list_remove(&t.eav, &e, &key);
            stage.list_remove(&t.ave, &key, &e);
        }
        let delta = if d.added { 1 } else { -1 };
        *per_value.entry((d.a, enc.as_slice())).or_default() += delta;
        stats.entry(d.a).or_default().0 += delta;
    }
    for ((a, enc), delta) in per_value {
        if delta == 0 {
            continue;
        }
        // A unique attribute's values each have one holder: distinct moves with datoms.
        if unique(a) {
            stats.entry(a).or_default().1 += delta;
            continue;
        }
        key.clear();
        keys::attr_prefix(a, &mut key);
        key.extend_from_slice(enc);
        // Exact and cheap: whether the value had holders before, and whether it has after.
        let cap = delta.unsigned_abs() + 1;
        let before = count_key(r, t, &key, cap)?;
        let after = before as i64 + delta;
        let change = (after > 0) as i64 - (before > 0) as i64;
        if change != 0 {
            stats.entry(a).or_default().1 += change;
        }
    }
    Ok(stats)
}

fn count_key(r: &IndexReader<'_>, t: &Tables, key: &[u8], cap: u64) -> Result<u64, TxError> {
    let mut n = 0;
    for v in r.view.list(&t.ave, key)? {
        v?;
        n += 1;
        if n >= cap {
            break;
        }
    }
    Ok(n)
}

/// Stages a counter.
pub fn stage_counter(t: &Tables, stage: &mut Stage, key: &[u8], value: u64) {
    stage.put(&t.meta, key, &value.to_be_bytes());
}

/// Stages the id counters after allocation.
pub fn stage_counters(
    t: &Tables,
    stage: &mut Stage,
    next_entity: u64,
    next_attr: u64,
    next_tx: u64,
) {
    stage_counter(t, stage, meta_key::NEXT_ENTITY, next_entity);
    stage_counter(t, stage, meta_key::NEXT_ATTR, next_attr);
    stage_counter(t, stage, meta_key::NEXT_TX, next_tx);
}
