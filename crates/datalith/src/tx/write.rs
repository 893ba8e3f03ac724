//! Stage 5: the net datoms become index writes (EAV and AVE), statistics and counters,
//! staged for the committer.

use rustc_hash::FxHashMap as HashMap;

use super::av;
use super::datoms::NetDatoms;
use super::error::TxError;
use crate::codec::{self, Giant};
use crate::kv::Stage;
use crate::limits::MAX_KEY_BYTES;
use crate::store::ids::AttrId;
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::{giant_key, IndexReader};
use crate::store::tables::{meta_key, Tables};

/// How the distinct-value statistics of staged datoms are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinct {
    /// Here, by looking up whether each value gaining or losing holders had any before (for
    /// stages that never reach LMDB: speculative database values).
    Lookup,
    /// By LMDB itself when the stage is applied: each AVE insert says whether it created its
    /// key and each removal whether it emptied it (`Stage::list_change_tallied`, tally = the
    /// attribute id), read back by the batch's `StoreBatch`. The committer's way: the insert
    /// searches for the key anyway, so no lookup comes before it.
    Tally,
}

/// Stages the index entries of `datoms` (each with its av bytes, see `tx::av`), and the
/// `giants` records of values too long to index inline; returns the change of each
/// attribute's statistics (datoms, distinct values; with [`Distinct::Tally`] the distinct
/// change is left to the stage's tallies and returned as 0).
pub fn stage_datoms(
    r: &IndexReader<'_>,
    t: &Tables,
    datoms: &NetDatoms,
    stage: &mut Stage,
    unique: impl Fn(AttrId) -> bool,
    distinct: Distinct,
) -> Result<HashMap<AttrId, (i64, i64)>, TxError> {
    let tally = distinct == Distinct::Tally;
    // Index keys of giants (an inline value's av bytes are its index key), by datom.
    let mut giants: Vec<(usize, Vec<u8>, Giant)> = Vec::new();
    for (i, (_, b)) in datoms.iter().enumerate() {
        if !av::is_inline(b) {
            let mut key = b.to_vec();
            if let Some(g) = codec::index_key::shrink_to_index_key(&mut key, ATTR_BYTES) {
                giants.push((i, key, g));
            }
        }
    }
    let bytes: usize = datoms.iter().map(|(_, b)| 2 * (b.len() + 8)).sum();
    stage.reserve(2 * datoms.len(), bytes);
    // Per AVE key: attribute, net change in holders, giant record.
    let mut per_value: HashMap<&[u8], (AttrId, i64, Option<&Giant>)> = HashMap::default();
    if !tally {
        per_value.reserve(datoms.len());
    }
    let mut run: Option<(AttrId, i64)> = None;
    let mut stats: HashMap<AttrId, (i64, i64)> = HashMap::default();
    let mut next_giant = giants.iter().peekable();
    for (i, (d, b)) in datoms.iter().enumerate() {
        let (key, giant): (&[u8], Option<&Giant>) = match next_giant.peek() {
            Some((gi, k, g)) if *gi == i => {
                next_giant.next();
                (k, Some(g))
            }
            _ => (b, None),
        };
        debug_assert!(
            key.len() <= MAX_KEY_BYTES,
            "index keys fit LMDB's key limit"
        );
        let e = keys::eav_key(d.e);
        if d.added {
            stage.list_add(&t.eav, &e, key);
        } else {
            stage.list_remove(&t.eav, &e, key);
        }
        let delta = if d.added { 1 } else { -1 };
        // Tallied, only giants need their value's net change (for their records).
        if !tally || giant.is_some() {
            let entry = per_value.entry(key).or_insert((d.a, 0, None));
            entry.1 += delta;
            if entry.2.is_none() {
                entry.2 = giant;
            }
        }
        // Runs of one attribute are common (a transaction's datoms come grouped by entity
        // and attribute): add up a run before touching the map.
        match &mut run {
            Some((a, n)) if *a == d.a => *n += delta,
            _ => {
                if let Some((a, n)) = run.take() {
                    stats.entry(a).or_default().0 += n;
                }
                run = Some((d.a, delta));
            }
        }
    }
    if let Some((a, n)) = run {
        stats.entry(a).or_default().0 += n;
    }
    // AVE after every EAV entry: the datoms of new entities come in entity order, so the EAV
    // ops form one ascending run that the stage's sort passes over (interleaved with AVE
    // ops, they would have to be sorted too). AVE ops go attribute by attribute (a stable
    // counting sort of the datoms by attribute): the stage's sort then finds each attribute's
    // ops in one stretch of its arena, not strewn over all of it.
    let giant_keys: HashMap<usize, &[u8]> = giants.iter().map(|(i, k, _)| (*i, &k[..])).collect();
    for i in by_attribute(datoms) {
        let (d, b) = (&datoms.datoms[i], &datoms.av[i]);
        let key: &[u8] = giant_keys.get(&i).copied().unwrap_or(b);
        let e = keys::eav_key(d.e);
        // Tallied, the AVE write counts the keys it creates or empties (see `Distinct`).
        let tag = tally.then_some(d.a);
        stage.list_change_tallied(d.added, &t.ave, key, &e, tag);
    }
    // Values gaining holders: only whether they had any before matters, for every one of them
    // at once, in key order. Tallied, only giants need it (for their records).
    let mut gaining: Vec<&[u8]> = per_value
        .iter()
        .filter(|(_, (a, delta, giant))| *delta > 0 && !unique(*a) && (!tally || giant.is_some()))
        .map(|(k, _)| *k)
        .collect();
    let held = held_keys(r, t, &mut gaining)?;
    for (key, (a, delta, giant)) in per_value {
        if delta == 0 || (tally && giant.is_none()) {
            continue;
        }
        let (before, after) = if unique(a) {
            // A unique attribute's values each have one holder.
            let after = i64::from(delta > 0);
            (1 - after, after)
        } else if delta > 0 {
            let before = i64::from(held.binary_search(&key).is_ok());
            (before, before + delta)
        } else {
            // Exact and cheap: whether the value had holders before, and whether it has after.
            let cap = delta.unsigned_abs() + 1;
            let before = count_key(r, t, key, cap)? as i64;
            (before, before + delta)
        };
        let change = i64::from(after > 0) - i64::from(before > 0);
        if change != 0 && !tally {
            stats.entry(a).or_default().1 += change;
        }
        if let Some(g) = giant {
            let gk = giant_key(a, &g.hash);
            if after > 0 {
                match r.view.get(&t.giants, &gk)? {
                    Some(existing) if existing == g.full.as_slice() => {}
                    Some(_) => {
                        return Err(TxError::Malformed {
                            detail: "two different long values share a 128-bit hash; refusing to store the second".into(),
                            form: format!("attribute {a}"),
                        })
                    }
                    None => stage.put(&t.giants, &gk, &g.full),
                }
            } else {
                stage.delete(&t.giants, &gk);
            }
        }
    }
    Ok(stats)
}

/// Positions of `datoms`, grouped by attribute (in order of first appearance), each group in
/// the datoms' order.
fn by_attribute(datoms: &NetDatoms) -> Vec<usize> {
    let mut attrs: Vec<(AttrId, usize)> = Vec::new();
    let slot_of =
        |a: AttrId, attrs: &mut Vec<(AttrId, usize)>| match attrs.iter().position(|(x, _)| *x == a)
        {
            Some(s) => s,
            None => {
                attrs.push((a, 0));
                attrs.len() - 1
            }
        };
    // Few attributes per transaction: a short list beats a map; past a few dozen, the
    // datoms' own order is kept (grouping would cost more than it saves).
    const MAX_GROUPS: usize = 32;
    let mut slots = Vec::with_capacity(datoms.len());
    for d in &datoms.datoms {
        let s = slot_of(d.a, &mut attrs);
        if attrs.len() > MAX_GROUPS {
            return (0..datoms.len()).collect();
        }
        attrs[s].1 += 1;
        slots.push(s as u8);
    }
    let mut start = Vec::with_capacity(attrs.len());
    let mut at = 0;
    for (_, n) in &attrs {
        start.push(at);
        at += n;
    }
    let mut out = vec![0; datoms.len()];
    for (i, s) in slots.into_iter().enumerate() {
        let at = &mut start[s as usize];
        out[*at] = i;
        *at += 1;
    }
    out
}

/// The keys of `keys` the AVE index holds, sorted. Keys past the index's last key are absent
/// without a search (new ascending values, the usual shape of fresh data, cost one lookup in
/// all); the others are looked up one by one in key order, which keeps the pages a lookup
/// touches warm for the next. (A cursor seek per key instead cost more than a plain lookup:
/// on W's random values, opening a cursor per key was 16% of the committer's time.)
fn held_keys<'k>(
    r: &IndexReader<'_>,
    t: &Tables,
    keys: &mut [&'k [u8]],
) -> Result<Vec<&'k [u8]>, TxError> {
    keys.sort_unstable();
    let mut held = Vec::new();
    let Some((last, _)) = r.view.last(&t.ave)? else {
        return Ok(held);
    };
    for &k in keys.iter() {
        if k > last {
            break;
        }
        if r.view.get(&t.ave, k)?.is_some() {
            held.push(k);
        }
    }
    Ok(held)
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
