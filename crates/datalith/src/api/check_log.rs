//! `Db::check`'s part for the transaction log (`tx::log`): every entry must decode, and when
//! the log is complete (an entry for every transaction id from the first to the last handed
//! out: it was never turned off, and no bulk load went around it: `TX_LOG_GAP`), replaying it from an empty
//! database must give exactly the datoms EAV holds: every logged transaction applied once.
//! A database made with the built-in entities holds them from its genesis, written around the
//! log (`store::bootstrap`): the replay then starts from them (a legacy database's upgrade
//! is a logged transaction, replayed as any other).

use std::collections::HashSet;
use std::ops::Bound;

use super::check::Inconsistency;
use crate::kv::Direction;
use crate::store::bootstrap;
use crate::store::ids::{EntityId, TX_PARTITION_START};
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::tables::{meta_key, read_counter};
use crate::store::StoreError;
use crate::tx::av::av;

/// At most this many log problems are listed (one damaged log would otherwise list all).
const MAX_REPORTED: usize = 20;

/// Checks the log `r` reads against its EAV index; adds what it finds to `problems`.
pub(super) fn check_tx_log(
    r: &IndexReader<'_>,
    problems: &mut Vec<Inconsistency>,
) -> Result<(), StoreError> {
    let Some(log) = &r.t.tx_log else {
        return Ok(());
    };
    let mut found = Vec::new();
    let mut report = |detail: String| {
        if found.len() < MAX_REPORTED {
            found.push(Inconsistency::TxLog { detail });
        }
    };
    // Replayed datoms: (entity, attribute ++ full value encoding), from genesis on.
    let mut replayed: HashSet<(EntityId, Vec<u8>)> = HashSet::new();
    if crate::store::load::builtins_at_genesis(r)? {
        for (e, a, v) in bootstrap::datoms() {
            replayed.insert((e, av(a, &v).to_vec()));
        }
    }
    let mut expected_tx = TX_PARTITION_START;
    let mut complete = true;
    for entry in r
        .view
        .range(log, Bound::Unbounded, Bound::Unbounded, Direction::Forward)?
    {
        let (k, v) = entry?;
        let Some(tx) = keys::read_entity(k) else {
            report(format!("a key of {} bytes is not a tx id", k.len()));
            complete = false;
            continue;
        };
        complete &= tx == expected_tx;
        expected_tx = tx + 1;
        match crate::tx::log::decode_entry(tx, v) {
            Ok(entry) => {
                for d in entry.datoms {
                    let key = (d.e, av(d.a, &d.v).to_vec());
                    match d.added {
                        true => replayed.insert(key),
                        false => replayed.remove(&key),
                    };
                }
            }
            Err(e) => {
                report(format!("entry {tx} does not decode: {e}"));
                complete = false;
            }
        }
    }
    let next_tx = read_counter(r.view, &r.t.meta, meta_key::NEXT_TX, TX_PARTITION_START)?;
    let gap = r.view.get(&r.t.meta, meta_key::TX_LOG_GAP)?.is_some();
    if complete && !gap && expected_tx == next_tx {
        for entry in r.view.range(
            &r.t.eav,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )? {
            let (k, raw) = entry?;
            // Malformed entries are the index check's to report.
            let (Some(e), Some((a, vb))) = (keys::read_entity(k), keys::split_attr(raw)) else {
                continue;
            };
            let Ok(value) = r.decode_value(a, vb) else {
                continue;
            };
            if !replayed.remove(&(e, av(a, &value).to_vec())) {
                report(format!(
                    "datom [{e} {a} {}] is in EAV, but no logged transaction asserted it",
                    crate::tx::print::value_text(&value)
                ));
            }
        }
        for (e, av_bytes) in replayed.iter().take(MAX_REPORTED) {
            report(format!(
                "the log leaves entity {e} with a datom of attribute {} that EAV lacks",
                keys::split_attr(av_bytes).map_or(0, |(a, _)| a)
            ));
        }
    }
    problems.extend(found);
    Ok(())
}
