//! Excision (Datomic's `:db/excise`): removing facts for good, from the current indexes, the
//! history index and the transaction log, where a retraction only ends them.
//!
//! An excision is an entity of the transaction with `:db/excise` naming its target: an
//! entity (its datoms go: those with it in the entity position; datoms of other entities
//! that refer to it stay), or an attribute with no `:db.excise/attrs` (that attribute's datoms
//! on every entity go). `:db.excise/attrs` keeps to those attributes of the target entity;
//! `:db.excise/before` (an instant) and `:db.excise/beforeT` (a transaction id) keep to the
//! datoms whose transaction came before it. The excision entity itself stays, the record
//! that it happened. An excised event goes from the history index and from its
//! transaction's log entry; a current datom goes from EAV and AVE when the assertion that
//! made it current is excised. The group is logged whole (its writes are not those its log
//! entry derives).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::av::{self, AvBytes};
use super::datoms::NetDatoms;
use super::error::TxError;
use crate::codec::Value;
use crate::kv::Stage;
use crate::store::history::{apply_filter, Event, TimeFilter, TimedDatom};
use crate::store::ids::{AttrId, EntityId, ATTR_PARTITION_END};
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::schema::builtin::{
    DOC, EXCISE, EXCISE_ATTRS, EXCISE_BEFORE, EXCISE_BEFORE_T, TX_INSTANT,
};
use crate::store::{Datom, Schema, Tables};

/// One excision request of a transaction.
#[derive(Debug, Default)]
struct Request {
    target: Option<EntityId>,
    attrs: Vec<AttrId>,
    before_ms: Option<i64>,
    before_tx: Option<EntityId>,
}

/// The excision requests among a transaction's datoms, by excision entity.
fn requests(datoms: &NetDatoms) -> Vec<(EntityId, Request)> {
    let mut by_entity: Vec<(EntityId, Request)> = Vec::new();
    let excising: HashSet<EntityId> = datoms
        .datoms
        .iter()
        .filter(|d| d.added && d.a == EXCISE)
        .map(|d| d.e)
        .collect();
    for d in datoms
        .datoms
        .iter()
        .filter(|d| d.added && excising.contains(&d.e))
    {
        let i = match by_entity.iter().position(|(e, _)| *e == d.e) {
            Some(i) => i,
            None => {
                by_entity.push((d.e, Request::default()));
                by_entity.len() - 1
            }
        };
        let r = &mut by_entity[i].1;
        match (d.a, &d.v) {
            (EXCISE, Value::Ref(t)) => r.target = Some(*t),
            (EXCISE_ATTRS, Value::Ref(a)) if *a < ATTR_PARTITION_END => r.attrs.push(*a as AttrId),
            (EXCISE_BEFORE, Value::Instant(ms)) => r.before_ms = Some(*ms),
            (EXCISE_BEFORE_T, Value::Long(t)) if *t >= 0 => r.before_tx = Some(*t as EntityId),
            _ => {}
        }
    }
    by_entity
}

/// The name of entity `e` in a refusal: its ident when it has one.
fn entity_name(schema: &Schema, e: EntityId) -> String {
    let attribute = (e < ATTR_PARTITION_END)
        .then(|| schema.get(e as AttrId).map(|a| a.ident.clone()))
        .flatten();
    match attribute.or_else(|| crate::store::bootstrap::ident_of(e)) {
        Some(ident) => ident.to_string(),
        None => e.to_string(),
    }
}

/// A built-in entity (an attribute such as `:db/cardinality`, an ident such as
/// `:db.type/long`) is never a target: its datoms are the schema every database starts with,
/// which no transaction changes (`schema_change`), and an excision would take them out of the
/// indexes but not out of the bootstrap the log starts from.
fn refuse_schema_target(schema: &Schema, target: EntityId) -> Result<(), TxError> {
    if target < ATTR_PARTITION_END && Schema::is_builtin(target as AttrId) {
        return Err(TxError::InvalidExcision {
            target: entity_name(schema, target),
            reason: "a built-in entity cannot be excised".into(),
        });
    }
    Ok(())
}

/// An excision removes no datom of a built-in attribute but `:db/doc`: those are an
/// attribute's definition (its ident, type, cardinality...), an ident's name, a transaction's
/// instant and the records of excisions, which a retraction changes under the schema's rules
/// (or never) and which time views and the log are read by.
fn refuse_schema_datom(schema: &Schema, e: EntityId, a: AttrId) -> Result<(), TxError> {
    if Schema::is_builtin(a) && a != DOC {
        return Err(TxError::InvalidExcision {
            target: entity_name(schema, e),
            reason: format!(
                "its {} datoms cannot be excised (name the attributes to excise with \
                 :db.excise/attrs; retract an ident or a schema property instead)",
                entity_name(schema, EntityId::from(a))
            ),
        });
    }
    Ok(())
}

/// Stages the excisions `datoms` ask for; the change of each attribute's datom count.
pub(crate) fn stage_excisions(
    r: &IndexReader<'_>,
    t: &Tables,
    schema: &Schema,
    datoms: &NetDatoms,
    stage: &mut Stage,
    removed: &mut Vec<Datom>,
) -> Result<HashMap<AttrId, (i64, i64)>, TxError> {
    let mut stats: HashMap<AttrId, (i64, i64)> = HashMap::default();
    if !datoms.datoms.iter().any(|d| d.a == EXCISE && d.added) {
        return Ok(stats);
    }
    let Some(history) = &t.history else {
        return Err(TxError::Malformed {
            detail: "excision needs the history index, which this database does not keep".into(),
            form: "{:db/excise ...}".into(),
        });
    };
    // Excised events, by transaction (for the log) and as stored (for the history index).
    let mut by_tx: HashMap<EntityId, Vec<(EntityId, AttrId, Value, bool)>> = HashMap::default();
    let mut instants: HashMap<EntityId, Option<i64>> = HashMap::default();
    for (_, req) in requests(datoms) {
        let Some(target) = req.target else { continue };
        refuse_schema_target(schema, target)?;
        // An attribute with no attributes named: its values on every entity.
        let attribute = (target < ATTR_PARTITION_END && req.attrs.is_empty())
            .then(|| schema.get(target as AttrId).map(|a| a.id))
            .flatten();
        let entities: Vec<EntityId> = match attribute {
            Some(a) => {
                let mut es = Vec::new();
                r.scan_attr(
                    a,
                    std::ops::Bound::Unbounded,
                    std::ops::Bound::Unbounded,
                    crate::kv::Direction::Forward,
                    |_, e| {
                        es.push(e);
                        Ok(true)
                    },
                )?;
                es.extend(r.entities_that_lost(a)?);
                es.sort_unstable();
                es.dedup();
                es
            }
            None => vec![target],
        };
        let mut cursor = r.history_cursor()?;
        for e in entities {
            let events = cursor.events(e, attribute, None)?;
            let mut excised: HashSet<(AttrId, EntityId, bool, &[u8])> = HashSet::default();
            for ev in &events {
                if !req.attrs.is_empty() && !req.attrs.contains(&ev.a) {
                    continue;
                }
                if req.before_tx.is_some_and(|b| ev.tx >= b) {
                    continue;
                }
                if let Some(before) = req.before_ms {
                    let instant = match instants.get(&ev.tx) {
                        Some(i) => *i,
                        None => {
                            let i =
                                r.values(ev.tx, TX_INSTANT)?
                                    .into_iter()
                                    .find_map(|v| match v {
                                        Value::Instant(ms) => Some(ms),
                                        _ => None,
                                    });
                            instants.insert(ev.tx, i);
                            i
                        }
                    };
                    if instant.is_none_or(|i| i >= before) {
                        continue;
                    }
                }
                refuse_schema_datom(schema, e, ev.a)?;
                excised.insert((ev.a, ev.tx, ev.added, ev.value));
            }
            if excised.is_empty() {
                continue;
            }
            // The current datoms whose assertion is excised leave EAV and AVE.
            let now = TimeFilter::default();
            for group in events.chunk_by(|x, y| x.a == y.a) {
                let mut state: Vec<TimedDatom<'_>> = Vec::new();
                apply_filter(&now, group, &mut state);
                for d in state {
                    if !excised.contains(&(d.a, d.tx, true, d.value)) {
                        continue;
                    }
                    let v = r.event_value(e, &d)?;
                    let bytes = av::av(d.a, &v);
                    let key = av::index_key(&bytes);
                    let ek = keys::eav_key(e);
                    stage.list_remove(&t.eav, &ek, &key);
                    // A listed attribute's entity stays listed (`store::value_index`).
                    if !r.is_listed(d.a)? {
                        stage.list_change_tallied(false, &t.ave, &key, &ek, Some(d.a));
                    }
                    stats.entry(d.a).or_default().0 -= 1;
                    removed.push(Datom {
                        e,
                        a: d.a,
                        v,
                        tx: d.tx,
                        added: false,
                    });
                }
            }
            let mut raw = Vec::with_capacity(64);
            for ev in events
                .iter()
                .filter(|ev| excised.contains(&(ev.a, ev.tx, ev.added, ev.value)))
            {
                raw.clear();
                stored_event(ev, &mut raw);
                stage.list_remove(history, &keys::eav_key(e), &raw);
                let d = TimedDatom {
                    a: ev.a,
                    value: ev.value,
                    tx: ev.tx,
                    added: ev.added,
                };
                let v = r.event_value(e, &d)?;
                by_tx.entry(ev.tx).or_default().push((e, ev.a, v, ev.added));
            }
        }
    }
    // Each touched transaction's log entry, without the excised datoms.
    if let Some(log) = &t.tx_log {
        for (tx, gone) in by_tx {
            let Some(bytes) = r.view.get(log, &tx.to_be_bytes())? else {
                continue;
            };
            let entry = super::log::decode_entry(tx, bytes)?;
            let kept: Vec<Datom> = entry
                .datoms
                .into_iter()
                .filter(|d| {
                    !gone.iter().any(|(e, a, v, added)| {
                        d.e == *e && d.a == *a && d.v == *v && d.added == *added
                    })
                })
                .collect();
            let av_bytes: Vec<AvBytes> = kept.iter().map(|d| av::av(d.a, &d.v)).collect();
            let net = NetDatoms {
                datoms: kept,
                av: av_bytes,
            };
            let mut out = Vec::new();
            super::log::encode_entry(&net, |a| t.value_index.in_ave_of(schema, a), &mut out);
            stage.put(log, &tx.to_be_bytes(), &out);
        }
    }
    Ok(stats)
}

/// The stored bytes of `ev` (the value form kept as it is).
fn stored_event(ev: &Event<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(&ev.a.to_be_bytes());
    out.extend_from_slice(&ev.tx.to_be_bytes());
    out.push(ev.added as u8);
    out.extend_from_slice(ev.value);
}
