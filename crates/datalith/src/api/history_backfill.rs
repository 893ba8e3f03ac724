//! Building the history index of a database made before it existed (on its first open for
//! writing): from the transaction log when the log is complete (every transaction's events,
//! with their own transactions, after the built-in datoms of the database's genesis), else
//! from EAV, each current datom an assertion stamped with the basis (the last transaction
//! id), since when it was asserted is not known.

use std::ops::Bound;

use crate::kv::{Direction, Environment, KvOp};
use crate::store::history::{attr_key, event_bytes, event_bytes_from_index_form};
use crate::store::ids::TX_PARTITION_START;
use crate::store::keys;
use crate::store::tables::{meta_key, read_counter};
use crate::store::Tables;
use crate::tx::av::av;
use crate::tx::TxError;

/// Ops per write transaction of the backfill.
const BATCH_OPS: usize = 100_000;

/// Fills `history` from the log or EAV when it is empty and EAV is not.
pub(super) fn backfill_history(env: &Environment, t: &Tables) -> Result<(), TxError> {
    let (Some(history), Some(history_attr)) = (&t.history, &t.history_attr) else {
        return Ok(());
    };
    let ops = {
        let txn = env.read()?;
        let view = txn.view();
        if view.first(history)?.is_some() || view.first(&t.eav)?.is_none() {
            return Ok(());
        }
        let next_tx = read_counter(view, &t.meta, meta_key::NEXT_TX, TX_PARTITION_START)?;
        let gap = view.get(&t.meta, meta_key::TX_LOG_GAP)?.is_some();
        let mut ops = Vec::new();
        let mut ev = Vec::with_capacity(64);
        let mut from_log = false;
        if let (Some(log), false) = (&t.tx_log, gap) {
            // The built-in datoms of the database's genesis are not in the log
            // (`store::bootstrap`): their events come first, stamped as they were written.
            let r = crate::store::reader::IndexReader::new(view, t);
            if crate::store::load::builtins_at_genesis(&r)? {
                for (e, a, v) in crate::store::bootstrap::datoms() {
                    let b = av(a, &v);
                    ev.clear();
                    event_bytes(
                        a,
                        TX_PARTITION_START - 1,
                        true,
                        &b[keys::ATTR_BYTES..],
                        &mut ev,
                    );
                    ops.push(KvOp::list_add(history, keys::eav_key(e), ev.clone()));
                }
            }
            // Complete: an entry for every transaction id handed out.
            let mut expected = TX_PARTITION_START;
            let mut complete = true;
            for entry in view.range(log, Bound::Unbounded, Bound::Unbounded, Direction::Forward)? {
                let (k, v) = entry?;
                let tx = keys::read_entity(k).unwrap_or(0);
                complete &= tx == expected;
                expected = tx + 1;
                let Ok(entry) = crate::tx::log::decode_entry(tx, v) else {
                    complete = false;
                    break;
                };
                for d in entry.datoms {
                    let b = av(d.a, &d.v);
                    ev.clear();
                    event_bytes(d.a, tx, d.added, &b[keys::ATTR_BYTES..], &mut ev);
                    ops.push(KvOp::list_add(history, keys::eav_key(d.e), ev.clone()));
                    if !d.added {
                        ops.push(KvOp::list_add(
                            history_attr,
                            attr_key(d.a),
                            keys::eav_key(d.e),
                        ));
                    }
                }
            }
            from_log = complete && expected == next_tx;
        }
        if !from_log {
            ops.clear();
            let stamp = next_tx - 1;
            for entry in view.range(
                &t.eav,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )? {
                let (k, raw) = entry?;
                let (Some(e), Some((a, vb))) = (keys::read_entity(k), keys::split_attr(raw)) else {
                    continue;
                };
                ev.clear();
                event_bytes_from_index_form(a, stamp, true, vb, &mut ev);
                ops.push(KvOp::list_add(history, keys::eav_key(e), ev.clone()));
            }
        }
        ops
    };
    let mut ops = ops;
    while !ops.is_empty() {
        let rest = ops.split_off(ops.len().min(BATCH_OPS));
        env.transact_kv(ops)?;
        ops = rest;
    }
    Ok(())
}
