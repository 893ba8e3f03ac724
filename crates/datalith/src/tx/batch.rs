//! What the transactions of one group commit share: the id counters, the schema they
//! produced, and the statistics deltas, all written once at the end of the batch instead of
//! by every transaction.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::write::stage_counters;
use crate::kv::{BatchSlot, KvError, Stage, View};
use crate::store::reader::IndexReader;
use crate::store::schema::Schema;
use crate::store::sketch::{self, Sketch};
use crate::store::tables::{self, meta_key, AttrStats, Tables};
use crate::store::AttrId;

/// Per-batch state of the Datalog store.
pub struct StoreBatch {
    pub(crate) tables: Tables,
    /// (next entity, next attribute, next tx) after the batch's transactions so far.
    pub(crate) counters: Option<(u64, u64, u64)>,
    /// The schema after the batch's transactions so far (read by the first, replaced by any
    /// that changes it).
    pub(crate) schema: Option<Arc<Schema>>,
    /// The largest `:db/txInstant` after the batch's transactions so far, when the last one
    /// knew it (`TxOutcome::last_instant`); any other writer of the batch's datoms sets it
    /// back to unknown. It must equal what a lookup in the state would give, whatever the
    /// batch boundaries: nodes of a replicated log group their commits differently.
    pub(crate) last_instant: Option<i64>,
    /// Whether a transaction of this batch changed the schema (its version is then written).
    pub(crate) schema_changed: bool,
    /// Per attribute: change in datoms and in distinct values.
    pub(crate) stats: HashMap<AttrId, (i64, i64)>,
    /// Per attribute without AVE entries: the sketch of the values the batch asserted,
    /// merged into the stored one at the end (`store::sketch`).
    pub(crate) sketches: HashMap<AttrId, Sketch>,
}

impl StoreBatch {
    pub(crate) fn new(tables: Tables) -> Self {
        StoreBatch {
            tables,
            counters: None,
            last_instant: None,
            schema: None,
            schema_changed: false,
            stats: HashMap::default(),
            sketches: HashMap::default(),
        }
    }
}

impl BatchSlot for StoreBatch {
    fn finish(&mut self, view: View<'_>, stage: &mut Stage) -> Result<(), KvError> {
        let t = &self.tables;
        if let Some((e, a, tx)) = self.counters {
            stage_counters(t, stage, e, a, tx);
        }
        if let Some(s) = self.schema.as_ref().filter(|_| self.schema_changed) {
            stage.put(&t.meta, meta_key::SCHEMA_VERSION, &s.version.to_be_bytes());
        }
        // Values created and emptied by the batch's AVE writes are counted by LMDB as it
        // applies them, in the attribute's tally (`kv::tally`), not here.
        let r = IndexReader::new(view, t);
        for (a, (datoms, distinct)) in &self.stats {
            let old = r.stored_stats(*a).map_err(|e| KvError::CommitFailed {
                cause: e.to_string(),
            })?;
            let new = AttrStats {
                datoms: (old.datoms as i64 + datoms).max(0) as u64,
                distinct: (old.distinct as i64 + distinct).max(0) as u64,
            };
            stage.put(&t.meta, &tables::stats_key(*a), &new.to_bytes());
        }
        for (a, added) in &self.sketches {
            let stored = r.stored_sketch(*a).map_err(|e| KvError::CommitFailed {
                cause: e.to_string(),
            })?;
            let mut s = stored.unwrap_or_default();
            // Unchanged registers need no write (most commits of a large attribute); the
            // first commit writes the record whatever it holds, so that `check` knows the
            // attribute has one.
            if s.merge(added) || stored.is_none() {
                stage.put(&t.meta, &sketch::key(*a), s.as_bytes());
            }
        }
        Ok(())
    }

    fn as_any(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
