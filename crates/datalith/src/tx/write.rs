//! Stage 5: the net datoms become index writes (EAV, and AVE or `attr_entities`), statistics
//! and counters, staged for the committer.

use rustc_hash::FxHashMap as HashMap;

use super::av;
use super::batch::StoreBatch;
use super::datoms::NetDatoms;
use super::error::TxError;
use super::index_rebuild::IndexRebuild;
use crate::codec::{self, Giant};
use crate::kv::Stage;
use crate::limits::{HISTORY_EVENT_HEAD_BYTES, MAX_KEY_BYTES};
use crate::store::history;
use crate::store::ids::{AttrId, EntityId};
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::{giant_key, IndexReader};
use crate::store::sketch::Sketch;
use crate::store::tables::{meta_key, Tables};

/// What a transaction's index writes change in its attributes' statistics records.
#[derive(Default)]
pub struct AttrChanges {
    /// Per attribute: change in datoms and in distinct values.
    pub counts: HashMap<AttrId, (i64, i64)>,
    /// Per attribute without AVE entries: the sketch of the values asserted
    /// (`store::sketch`).
    pub sketches: HashMap<AttrId, Sketch>,
}

impl AttrChanges {
    /// Adds these changes to the batch's.
    pub(crate) fn add_to(self, slot: &mut StoreBatch) {
        for (a, (d, n)) in self.counts {
            let e = slot.stats.entry(a).or_default();
            e.0 += d;
            e.1 += n;
        }
        for (a, s) in self.sketches {
            slot.sketches.entry(a).or_default().merge(&s);
        }
    }
}

/// Stages the index entries of `datoms` (each with its av bytes, see `tx::av`), and the
/// `giants` records of values too long to index inline; returns the change of each
/// attribute's datom count (and 0 distinct values: those are counted by LMDB itself when the
/// stage is applied, whenever that is: each AVE insert says whether it created its key and
/// each removal whether it emptied it, `Stage::list_change_tallied` with the attribute id as
/// the tally, `kv::tally`; the insert searches for its key anyway, so no lookup comes first),
/// and the sketch of the values each attribute without AVE entries gains.
///
/// With `log` (the transaction log table, and `tx` the transaction's id), also its log entry:
/// then, as a rule, the index entries are what the log's derivation (`IndexRebuild`) makes of
/// that entry, staged with it (`Stage::put_deriving`), so that the write-ahead log leaves them
/// out of the record without deriving them a second time to compare. A retraction of a
/// `:db/noHistory` attribute needs a lookup the derivation cannot make: such a transaction
/// stages its entries itself, and its group is logged whole.
///
/// `in_ave` says which attributes' datoms have AVE entries (`store::value_index`); the
/// others' entities are listed in `attr_entities`.
#[allow(clippy::too_many_arguments)]
pub fn stage_datoms(
    r: &IndexReader<'_>,
    t: &Tables,
    datoms: &NetDatoms,
    stage: &mut Stage,
    unique: impl Fn(AttrId) -> bool,
    no_history: impl Fn(AttrId) -> bool,
    in_ave: &dyn Fn(AttrId) -> bool,
    log: Option<&crate::kv::Table>,
    tx: EntityId,
) -> Result<AttrChanges, TxError> {
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
    let bytes: usize = datoms.iter().map(|(_, b)| 4 * (b.len() + 16)).sum();
    stage.reserve(5 * datoms.len() + 1, bytes);
    let entry = log.map(|log| {
        let mut entry = Vec::with_capacity(16 + 24 * datoms.len());
        super::log::encode_entry(datoms, in_ave, &mut entry);
        (log, entry)
    });
    let derivable = !datoms.iter().any(|(d, _)| !d.added && no_history(d.a));
    let derived = match (&entry, &t.history, &t.history_attr, &t.attr_entities) {
        (Some((log, entry)), Some(h), Some(ha), Some(ae)) if derivable => {
            let tables = [&t.eav, &t.ave, h, ha, ae];
            let staged = stage.put_deriving(log, &tx.to_be_bytes(), entry, &IndexRebuild, &tables);
            // Our own entry always decodes; if it did not, the entries are staged below and
            // the log's comparison finds the difference.
            debug_assert!(staged.is_ok(), "a fresh log entry derives: {staged:?}");
            staged.is_ok()
        }
        _ => false,
    };
    if !derived {
        stage_entries(r, t, datoms, &giants, stage, &no_history, in_ave)?;
        if let Some((log, entry)) = &entry {
            stage.put(log, &tx.to_be_bytes(), entry);
        }
    }
    // Per giant's AVE key: attribute, net change in holders, giant record.
    let mut per_value: HashMap<&[u8], (AttrId, i64, Option<&Giant>)> = HashMap::default();
    // The attribute of the current run, its datoms' net change, and its sketch when it has
    // no AVE entries.
    let mut run: Option<(AttrId, i64, Option<Sketch>)> = None;
    let mut changes = AttrChanges::default();
    let mut end_run = |run: Option<(AttrId, i64, Option<Sketch>)>| {
        if let Some((a, n, sketch)) = run {
            changes.counts.entry(a).or_default().0 += n;
            if let Some(s) = sketch {
                changes.sketches.entry(a).or_default().merge(&s);
            }
        }
    };
    let mut next_giant = giants.iter().peekable();
    for (i, (d, b)) in datoms.iter().enumerate() {
        let delta = if d.added { 1 } else { -1 };
        // Giants need their value's net change (for their records).
        let mut index_key: &[u8] = b;
        if let Some((_, k, g)) = next_giant.next_if(|(gi, _, _)| *gi == i) {
            let entry = per_value.entry(k).or_insert((d.a, 0, None));
            entry.1 += delta;
            if entry.2.is_none() {
                entry.2 = Some(g);
            }
            index_key = k;
        }
        // Runs of one attribute are common (a transaction's datoms come grouped by entity
        // and attribute): add up a run before touching the map.
        match &mut run {
            Some((a, n, _)) if *a == d.a => *n += delta,
            _ => {
                let sketch = (!in_ave(d.a)).then(Sketch::default);
                end_run(run.replace((d.a, delta, sketch)));
            }
        }
        if let (Some((_, _, Some(s))), true) = (&mut run, d.added) {
            s.add(&index_key[ATTR_BYTES..]);
        }
    }
    end_run(run);
    for (key, (a, delta, giant)) in per_value {
        let Some(g) = giant.filter(|_| delta != 0) else {
            continue;
        };
        // Whether the value has holders after: a gain always leaves some; a unique attribute's
        // value has one holder, so a loss leaves none; else count (cheaply, up to the loss).
        let after = if delta > 0 {
            1
        } else if unique(a) {
            0
        } else {
            r.count_key(key, delta.unsigned_abs() + 1)? as i64 + delta
        };
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
    Ok(changes)
}

/// Stages the EAV, AVE and history entries of `datoms` one by one (what the derivation of
/// [`stage_datoms`] makes of a log entry, and a `:db/noHistory` retraction's removal of its
/// assertion). `giants`: the index keys of the giant values, by datom.
fn stage_entries(
    r: &IndexReader<'_>,
    t: &Tables,
    datoms: &NetDatoms,
    giants: &[(usize, Vec<u8>, Giant)],
    stage: &mut Stage,
    no_history: impl Fn(AttrId) -> bool,
    in_ave: &dyn Fn(AttrId) -> bool,
) -> Result<(), TxError> {
    let giant_keys: HashMap<usize, &[u8]> = giants.iter().map(|(i, k, _)| (*i, &k[..])).collect();
    let key_of = |i: usize| -> &[u8] { giant_keys.get(&i).copied().unwrap_or(&datoms.av[i]) };
    for (i, d) in datoms.datoms.iter().enumerate() {
        let key = key_of(i);
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
    }
    // AVE after every EAV entry: the datoms of new entities come in entity order, so the EAV
    // ops form one ascending run that the stage's sort passes over (interleaved with AVE
    // ops, they would have to be sorted too). AVE ops go attribute by attribute (a stable
    // counting sort of the datoms by attribute): the stage's sort then finds each attribute's
    // ops in one stretch of its arena, not strewn over all of it.
    for i in by_attribute(datoms.len(), |i| datoms.datoms[i].a) {
        let d = &datoms.datoms[i];
        let e = keys::eav_key(d.e);
        if in_ave(d.a) {
            // The AVE write counts the keys it creates or empties, under the attribute's
            // tally.
            stage.list_change_tallied(d.added, &t.ave, key_of(i), &e, Some(d.a));
        } else if let (Some(ae), true) = (&t.attr_entities, d.added) {
            // Listed instead; a retraction leaves the entity listed, as the derivation does.
            stage.list_add(ae, &d.a.to_be_bytes(), &e);
        }
    }
    stage_history(r, t, datoms, stage, no_history)
}

/// Stages the history events of `datoms` (`store::history`): one event a datom, in the
/// datoms' order, then one `history_attr` entry per retraction. A retraction of a
/// `:db/noHistory` attribute instead removes the assertion it retracts (looked up in the
/// history index: the log entry does not say when the value was asserted, so such a group is
/// logged whole, not derived).
fn stage_history(
    r: &IndexReader<'_>,
    t: &Tables,
    datoms: &NetDatoms,
    stage: &mut Stage,
    no_history: impl Fn(AttrId) -> bool,
) -> Result<(), TxError> {
    let Some(h) = &t.history else {
        return Ok(());
    };
    let mut ev = Vec::with_capacity(64);
    for (d, b) in datoms.iter() {
        ev.clear();
        let e = keys::eav_key(d.e);
        if !d.added && no_history(d.a) {
            history::event_bytes(d.a, 0, true, &b[ATTR_BYTES..], &mut ev);
            let value = &ev[HISTORY_EVENT_HEAD_BYTES..];
            if let Some(tx) = r.tx_of(d.e, d.a, value)? {
                let mut asserted = Vec::with_capacity(ev.len());
                history::event_bytes(d.a, tx, true, &b[ATTR_BYTES..], &mut asserted);
                stage.list_remove(h, &e, &asserted);
            }
            continue;
        }
        history::event_bytes(d.a, d.tx, d.added, &b[ATTR_BYTES..], &mut ev);
        stage.list_add(h, &e, &ev);
    }
    if let Some(ha) = &t.history_attr {
        for d in datoms
            .datoms
            .iter()
            .filter(|d| !d.added && !no_history(d.a))
        {
            stage.list_add(ha, &history::attr_key(d.a), &keys::eav_key(d.e));
        }
    }
    Ok(())
}

/// Positions `0..n` of datoms whose attributes are `attr(i)`, grouped by attribute (in order
/// of first appearance), each group in the datoms' order. `index_rebuild` orders AVE writes
/// rebuilt from the log with it too.
pub(super) fn by_attribute(n: usize, attr: impl Fn(usize) -> AttrId) -> Vec<usize> {
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
    let mut slots = Vec::with_capacity(n);
    for i in 0..n {
        let s = slot_of(attr(i), &mut attrs);
        if attrs.len() > MAX_GROUPS {
            return (0..n).collect();
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
    let mut out = vec![0; n];
    for (i, s) in slots.into_iter().enumerate() {
        let at = &mut start[s as usize];
        out[*at] = i;
        *at += 1;
    }
    out
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
