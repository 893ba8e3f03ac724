//! `Db::check`'s part for the history index (`store::history`): every event parses; each
//! entity's events replayed to now give exactly its EAV datoms; and, when the transaction log
//! is complete, every logged datom is an event of the history (a `:db/noHistory` attribute's
//! only while it is current) and the history holds nothing else but the built-in datoms of
//! the database's genesis (`store::bootstrap`, stamped before the first transaction).

use std::collections::HashSet;
use std::ops::Bound;

use super::check::Inconsistency;
use crate::kv::Direction;
use crate::store::history::{event_bytes, Event, TimeFilter};
use crate::store::ids::{EntityId, TX_PARTITION_START};
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::tables::{meta_key, read_counter};
use crate::store::{Schema, StoreError};
use crate::tx::av::av;

/// At most this many history problems are listed.
const MAX_REPORTED: usize = 20;

/// Checks the history index `r` reads against EAV and the log; adds what it finds.
pub(super) fn check_history(
    r: &IndexReader<'_>,
    schema: &Schema,
    problems: &mut Vec<Inconsistency>,
) -> Result<(), StoreError> {
    let Some(history) = &r.t.history else {
        return Ok(());
    };
    let mut found = Vec::new();
    let mut report = |detail: String| {
        if found.len() < MAX_REPORTED {
            found.push(Inconsistency::History { detail });
        }
    };
    // Every event parses; the entities with events.
    let mut entities: Vec<EntityId> = Vec::new();
    let mut events = 0u64;
    let mut genesis = 0u64;
    for entry in r.view.range(
        history,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        let (k, raw) = entry?;
        events += 1;
        let Some(e) = keys::read_entity(k) else {
            report(format!("a key of {} bytes is not an entity id", k.len()));
            continue;
        };
        match Event::parse(raw) {
            None => report(format!(
                "an event of entity {e} does not parse ({} bytes)",
                raw.len()
            )),
            // The built-in datoms of the database's genesis (`store::bootstrap`), not logged.
            Some(ev) if ev.tx < TX_PARTITION_START => genesis += 1,
            Some(_) => {}
        }
        if entities.last() != Some(&e) {
            entities.push(e);
        }
    }
    // Replayed to now, the events of each entity are its EAV datoms.
    let now = TimeFilter::default();
    let mut with_history: HashSet<EntityId> = HashSet::with_capacity(entities.len());
    for &e in &entities {
        with_history.insert(e);
        let Ok(timed) = r.timed_datoms(&now, e, None) else {
            continue;
        };
        let mut replayed = Vec::with_capacity(timed.len());
        for d in &timed {
            match r.event_value(e, d) {
                Ok(v) => replayed.push((d.a, v)),
                Err(err) => report(format!("an event of entity {e} has no value: {err}")),
            }
        }
        let current = r.entity(e)?;
        if !same_datoms(&replayed, &current) {
            report(format!(
                "the events of entity {e} replay to {} datoms, EAV holds {} (or different ones)",
                replayed.len(),
                current.len()
            ));
        }
    }
    for entry in r.view.range(
        &r.t.eav,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        let (k, _) = entry?;
        if let Some(e) = keys::read_entity(k) {
            if !with_history.contains(&e) {
                report(format!("entity {e} has datoms in EAV and no history"));
                with_history.insert(e);
            }
        }
    }
    // Against a complete log: every logged datom is an event, and there are no others.
    let Some(log) = &r.t.tx_log else {
        problems.extend(found);
        return Ok(());
    };
    let next_tx = read_counter(r.view, &r.t.meta, meta_key::NEXT_TX, TX_PARTITION_START)?;
    let gap = r.view.get(&r.t.meta, meta_key::TX_LOG_GAP)?.is_some();
    let mut logged = 0u64;
    let mut expected_tx = TX_PARTITION_START;
    let mut complete = !gap;
    let mut ev = Vec::with_capacity(64);
    for entry in r
        .view
        .range(log, Bound::Unbounded, Bound::Unbounded, Direction::Forward)?
    {
        let (k, v) = entry?;
        let Some(tx) = keys::read_entity(k) else {
            complete = false;
            continue;
        };
        complete &= tx == expected_tx;
        expected_tx = tx + 1;
        // An entry that does not decode is the log check's to report.
        let Ok(entry) = crate::tx::log::decode_entry(tx, v) else {
            complete = false;
            continue;
        };
        for d in entry.datoms {
            let b = av(d.a, &d.v);
            ev.clear();
            event_bytes(d.a, tx, d.added, &b[keys::ATTR_BYTES..], &mut ev);
            let kept = r.view.list_contains(history, &keys::eav_key(d.e), &ev)?;
            let no_history = schema.get(d.a).is_some_and(|a| a.no_history);
            if kept {
                logged += 1;
            } else if !no_history {
                report(format!(
                    "transaction {tx} {} entity {e} attribute {a}, and the history has no such event",
                    if d.added { "asserts on" } else { "retracts from" },
                    e = d.e,
                    a = d.a
                ));
            }
        }
    }
    complete &= expected_tx == next_tx;
    if complete && logged + genesis != events {
        report(format!(
            "the history holds {events} events, the log {logged} of them and the genesis {genesis}"
        ));
    }
    problems.extend(found);
    Ok(())
}

/// Whether two lists of datoms of one entity hold the same datoms.
fn same_datoms(
    a: &[(crate::store::AttrId, crate::codec::Value)],
    b: &[(crate::store::AttrId, crate::codec::Value)],
) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let order = |x: &&(crate::store::AttrId, crate::codec::Value),
                 y: &&(crate::store::AttrId, crate::codec::Value)| {
        x.0.cmp(&y.0)
            .then(x.1.partial_cmp(&y.1).unwrap_or(std::cmp::Ordering::Equal))
    };
    let (mut a, mut b): (Vec<_>, Vec<_>) = (a.iter().collect(), b.iter().collect());
    a.sort_by(order);
    b.sort_by(order);
    a == b
}
