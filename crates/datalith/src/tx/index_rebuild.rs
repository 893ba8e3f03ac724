//! A transaction's index writes, rebuilt from its log entry, so that a write-ahead log record
//! need not hold them (`kv::wal::derive`): the entry holds every net datom. A committed
//! transaction's EAV, AVE and history writes are this derivation's output, staged with the
//! entry (`write::stage_datoms`, `Stage::put_deriving`), so replay rebuilds exactly what was
//! written. The writes `write::stage_entries` stages one by one instead (a `:db/noHistory`
//! retraction) the committer compares with this derivation and logs the group whole when they
//! differ, so a drift between the two costs record bytes, never data.

use crate::kv::wal::{Derivation, DerivedOp, LoggedOpKind};
use crate::store::ids::AttrId;
use crate::store::{history, keys};

use super::{av, write};

/// The Datalog store's derivation: EAV, AVE (or `attr_entities`) and history writes from
/// `tx_log` puts.
#[derive(Debug, Default)]
pub struct IndexRebuild;

/// Table names, in [`DerivedOp::table`] order.
const TABLES: [&str; 5] = ["eav", "ave", "history", "history_attr", "attr_entities"];
const EAV: usize = 0;
const AVE: usize = 1;
const HISTORY: usize = 2;
const HISTORY_ATTR: usize = 3;
const ATTR_ENTITIES: usize = 4;

impl Derivation for IndexRebuild {
    fn name(&self) -> &str {
        // Bump the version whenever `write::stage_datoms` changes what it stages.
        "datalith.index-from-tx-log/3"
    }

    fn source(&self) -> &str {
        "tx_log"
    }

    fn tables(&self) -> &[&str] {
        &TABLES
    }

    fn derive(
        &self,
        tx: &[u8],
        entry: &[u8],
        emit: &mut dyn FnMut(DerivedOp<'_>),
    ) -> Result<(), String> {
        let datoms = entry_datoms(entry)?;
        let keys: Vec<std::borrow::Cow<'_, [u8]>> =
            datoms.iter().map(|d| av::index_key(d.av)).collect();
        for (d, key) in datoms.iter().zip(&keys) {
            emit(DerivedOp {
                table: EAV,
                kind: list_kind(d.added),
                key: &d.e,
                value: key,
                tally: None,
            });
        }
        // An attribute without AVE entries lists its entities instead; a retraction leaves
        // the entity listed (the entry cannot tell whether it was the entity's last value).
        for i in write::by_attribute(datoms.len(), |i| datoms[i].a) {
            let d = &datoms[i];
            if d.in_ave {
                emit(DerivedOp {
                    table: AVE,
                    kind: list_kind(d.added),
                    key: &keys[i],
                    value: &d.e,
                    tally: Some(d.a),
                });
            } else if d.added {
                let attr_key = d.a.to_be_bytes();
                emit(DerivedOp {
                    table: ATTR_ENTITIES,
                    kind: LoggedOpKind::ListAdd,
                    key: &attr_key,
                    value: &d.e,
                    tally: None,
                });
            }
        }
        // History: one event a datom, in order, then the retractions' attributes (a
        // `:db/noHistory` retraction is staged otherwise: such a group is logged whole).
        let tx: [u8; 8] = tx
            .try_into()
            .map_err(|_| "a transaction log key is not 8 bytes".to_string())?;
        let tx = u64::from_be_bytes(tx);
        let mut ev = Vec::with_capacity(64);
        for d in &datoms {
            ev.clear();
            history::event_bytes(d.a, tx, d.added, &d.av[keys::ATTR_BYTES..], &mut ev);
            emit(DerivedOp {
                table: HISTORY,
                kind: LoggedOpKind::ListAdd,
                key: &d.e,
                value: &ev,
                tally: None,
            });
        }
        for d in datoms.iter().filter(|d| !d.added) {
            let a = history::attr_key(d.a);
            emit(DerivedOp {
                table: HISTORY_ATTR,
                kind: LoggedOpKind::ListAdd,
                key: &a,
                value: &d.e,
                tally: None,
            });
        }
        Ok(())
    }
}

fn list_kind(added: bool) -> LoggedOpKind {
    match added {
        true => LoggedOpKind::ListAdd,
        false => LoggedOpKind::ListRemove,
    }
}

/// One datom of a log entry, as its bytes.
struct EntryDatom<'a> {
    e: [u8; keys::ENTITY_BYTES],
    a: AttrId,
    added: bool,
    /// Whether its attribute's datoms have AVE entries (else `attr_entities` lists it).
    in_ave: bool,
    av: &'a [u8],
}

/// The datoms of a log entry (`tx::log`'s format), values left encoded; every length is
/// checked.
fn entry_datoms(b: &[u8]) -> Result<Vec<EntryDatom<'_>>, String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let s = b
            .get(at..at.saturating_add(n))
            .ok_or_else(|| "a transaction log entry ends early".to_string())?;
        at += n;
        Ok(s)
    };
    let count = u32::from_be_bytes(take(4)?.try_into().unwrap_or_default()) as usize;
    if count > b.len() / 13 {
        return Err("a transaction log entry counts more datoms than it holds".into());
    }
    let mut datoms = Vec::with_capacity(count);
    for _ in 0..count {
        let e: [u8; keys::ENTITY_BYTES] = take(8)?.try_into().unwrap_or_default();
        let (added, in_ave) = crate::store::value_index::log_flags(take(1)?[0])
            .ok_or_else(|| "a transaction log datom's flags are not 0 to 3".to_string())?;
        let len = u32::from_be_bytes(take(4)?.try_into().unwrap_or_default()) as usize;
        let av = take(len)?;
        let a = keys::split_attr(av)
            .ok_or_else(|| "a transaction log datom has no attribute".to_string())?
            .0;
        datoms.push(EntryDatom {
            e,
            a,
            added,
            in_ave,
            av,
        });
    }
    if at != b.len() {
        return Err("bytes after a transaction log entry's last datom".into());
    }
    Ok(datoms)
}
