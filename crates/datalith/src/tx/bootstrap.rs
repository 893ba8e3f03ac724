//! Writing the built-in entities (`store::bootstrap`) into a state opened for writing, as one
//! committer request. The format is recorded in the same commit, so the request does nothing
//! to a state that has it (every later open).
//!
//! - **Genesis** (no transaction was ever made): every built-in datom, around the transaction
//!   log, with no transaction of its own: the datoms (and their history events) carry the
//!   basis of the empty database, `TX_PARTITION_START - 1`, so they belong to every state in
//!   time. `builtins_tx` records that stamp; `api::check_log` replays the log over them, and
//!   `api::check_history` counts their events apart from the log's.
//! - **Upgrade** of a legacy-format state (made before the built-ins were stored): one logged
//!   transaction, with its own id and `:db/txInstant`, asserting the built-in datoms and
//!   replacing each keyword-valued `:db/valueType`, `:db/cardinality` or `:db/unique` datom
//!   by the ref to its ident entity, so the log, the history and time views tell the change
//!   as it happened.

use std::ops::Bound;
use std::sync::Arc;

use super::av::av;
use super::batch::StoreBatch;
use super::datoms::NetDatoms;
use super::error::TxError;
use super::write::stage_datoms;
use crate::codec::Value;
use crate::kv::handle::{CommitHandle, Completion};
use crate::kv::{BatchState, Direction, Outcome, Stage, View, WriteRequest};
use crate::store::bootstrap::{self, IdentProperty};
use crate::store::ids::{AttrId, EntityId, TX_PARTITION_START};
use crate::store::load::builtins_format;
use crate::store::reader::IndexReader;
use crate::store::schema::builtin;
use crate::store::{Datom, Store};

/// The datoms that bring the state `r` reads to the built-ins' current format: retractions
/// and assertions, each `(entity, attribute, value, added)`.
pub fn upgrade_datoms(
    r: &IndexReader<'_>,
) -> Result<Vec<(EntityId, AttrId, Value, bool)>, TxError> {
    let mut out = Vec::new();
    // The built-in entities: each one's datoms of the attributes the table gives it, exactly.
    let wanted = bootstrap::datoms();
    let mut at = 0;
    while at < wanted.len() {
        let e = wanted[at].0;
        let end = at + wanted[at..].iter().take_while(|d| d.0 == e).count();
        let want = &wanted[at..end];
        let have = r.entity(e)?;
        for (a, v) in &have {
            let defined = want.iter().any(|(_, wa, _)| wa == a);
            if defined && !want.iter().any(|(_, wa, wv)| wa == a && wv == v) {
                out.push((e, *a, v.clone(), false));
            }
        }
        for (_, a, v) in want {
            if !have.iter().any(|(ha, hv)| ha == a && hv == v) {
                out.push((e, *a, v.clone(), true));
            }
        }
        at = end;
    }
    // Legacy property values: keywords become refs to their ident entities.
    for property in IdentProperty::ALL {
        let a = property.attr();
        let mut held: Vec<(Vec<u8>, EntityId)> = Vec::new();
        r.scan_attr(
            a,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            |vb, e| {
                held.push((vb.to_vec(), e));
                Ok(true)
            },
        )?;
        for (vb, e) in held {
            if e < builtin::FIRST_USER_ATTR as EntityId {
                continue; // a built-in entity: written above
            }
            let v = r.decode_value(a, &vb)?;
            if let Some(new) = bootstrap::upgraded_value(a, &v) {
                out.push((e, a, v, false));
                out.push((e, a, new, true));
            }
        }
    }
    Ok(out)
}

/// The committer request that upgrades a state to the built-ins' current format; its result
/// says whether it wrote anything.
pub struct BootstrapRequest {
    store: Arc<Store>,
    result: Option<Result<bool, TxError>>,
    completion: Option<Completion<bool, TxError>>,
}

impl BootstrapRequest {
    /// The request for `store`, and the handle its result arrives by.
    pub fn new(store: Arc<Store>) -> (BootstrapRequest, CommitHandle<bool, TxError>) {
        let (completion, handle) = CommitHandle::pair();
        (
            BootstrapRequest {
                store,
                result: None,
                completion: Some(completion),
            },
            handle,
        )
    }

    fn upgrade(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<bool, TxError> {
        let t = &self.store.tables;
        let r = IndexReader::new(view, t);
        if builtins_format(&r)? >= bootstrap::FORMAT {
            return Ok(false);
        }
        let schema = self.store.schema_for(&r)?;
        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        let (next_entity, next_attr, next_tx) = match slot.counters {
            Some(c) => c,
            None => super::run::read_counters(&r)?,
        };
        let genesis = next_tx == TX_PARTITION_START;
        let tx = match genesis {
            true => TX_PARTITION_START - 1,
            false => next_tx,
        };
        let mut net = NetDatoms::default();
        let mut push = |e, a, v: Value, added| {
            net.av.push(av(a, &v));
            net.datoms.push(Datom { e, a, v, tx, added });
        };
        for (e, a, v, added) in upgrade_datoms(&r)? {
            push(e, a, v, added);
        }
        if !genesis {
            push(
                tx,
                builtin::TX_INSTANT,
                Value::Instant(super::run::now_ms()),
                true,
            );
        }
        let stats = stage_datoms(
            &r,
            t,
            &net,
            stage,
            |a| schema.get(a).is_some_and(|x| x.unique.is_some()),
            |a| schema.get(a).is_some_and(|x| x.no_history),
            &|a| t.value_index.in_ave_of(&schema, a),
            None,
            tx,
        )?;
        // `:db/doc` is full-text: its index made from the state's docs and this upgrade's.
        let after = schema.upgraded();
        super::fulltext::stage_fulltext_reindexing(
            &r,
            &schema,
            &after,
            &net.datoms,
            &[builtin::DOC],
            stage,
        )?;
        if let (Some(log), false) = (&t.tx_log, genesis) {
            let mut entry = Vec::with_capacity(16 + 24 * net.len());
            super::log::encode_entry(&net, |a| t.value_index.in_ave_of(&schema, a), &mut entry);
            stage.put(log, &tx.to_be_bytes(), &entry);
        }
        stage.put(
            &t.meta,
            bootstrap::FORMAT_KEY,
            &bootstrap::FORMAT.to_be_bytes(),
        );
        // The transaction the built-ins were first written in: this one, unless a state of an
        // earlier stored format has them from its genesis already (then the log replays over
        // those, and this upgrade is one more logged transaction).
        if !crate::store::load::builtins_at_genesis(&r)? || genesis {
            stage.put(&t.meta, bootstrap::TX_KEY, &tx.to_be_bytes());
        }
        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        if !genesis {
            slot.last_instant = None;
            t.last_instant.forget();
            slot.counters = Some((next_entity, next_attr, tx + 1));
        }
        stats.add_to(slot);
        // The same user attributes under the current built-ins: a new schema version (so
        // that every cached legacy schema, in other processes too, is read again).
        let next = Arc::new(schema.upgraded());
        self.store.publish_schema(next.clone());
        slot.schema = Some(next);
        slot.schema_changed = true;
        Ok(true)
    }
}

impl WriteRequest for BootstrapRequest {
    fn size_hint(&self) -> usize {
        // ~40 datoms in both indexes.
        8 * 1024
    }

    super::request::prepare_by_attempt!(upgrade);

    fn finish(mut self: Box<Self>, outcome: Outcome) {
        let result = match outcome {
            Outcome::Committed | Outcome::Rejected => self
                .result
                .take()
                .unwrap_or_else(|| Err(crate::kv::KvError::Closed.into())),
            Outcome::Failed(e) => Err(e.into()),
        };
        if let Some(c) = self.completion.take() {
            c.complete(result);
        }
    }
}
