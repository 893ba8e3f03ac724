//! A transaction as the committer's unit of work: it runs the pipeline against the batch's
//! state in `prepare`, stages its writes, and keeps its own report or error.

use std::sync::Arc;

use super::attempt::{attempt, Attempt};
use super::batch::StoreBatch;
use super::data::TxData;
use super::error::TxError;
use super::report::TxReport;
use crate::codec::{Keyword, Value};
use crate::kv::handle::Completion;
use crate::kv::{BatchState, Outcome, Stage, View, WriteRequest};
use crate::store::reader::IndexReader;
use crate::store::Store;

/// Registered transaction functions, by name.
pub use crate::db::TxFunctions as Functions;

/// One queued transaction.
pub struct TxRequest {
    pub(crate) store: Arc<Store>,
    pub(crate) functions: Arc<crate::db::Functions>,
    pub(crate) data: TxData,
    /// Terms the caller expanded before queueing, with the schema version they used.
    pub(crate) expanded: Option<(u64, Vec<super::terms::Term>)>,
    /// Where its instant comes from.
    pub(crate) clock: super::run::TxClock,
    pub(crate) size: usize,
    pub(crate) result: Option<Result<TxReport, TxError>>,
    pub(crate) completion: Option<Completion<TxReport, TxError>>,
    /// Schemas and counters around this request, from its last `prepare`.
    pub(crate) around: Option<super::report::Around>,
    /// Its batch's snapshot and its ops there, once committed.
    pub(crate) attached: Option<(Arc<crate::kv::BatchSnapshot>, crate::kv::OpRange)>,
}

impl TxRequest {
    fn attempt(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<TxReport, TxError> {
        let t = &self.store.tables;
        let r = IndexReader::new(view, t);
        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        // The batch's schema, read once a batch (its requests see the same schema until one of
        // them changes it, which replaces it below): reading the version per request was ~3%
        // of the committer's samples in W async at batch 1. It is kept even if this request
        // then fails: it is the state's schema before the request, not the request's doing.
        let schema = match &slot.schema {
            Some(s) => s.clone(),
            None => {
                let s = self.store.schema_for(&r)?;
                slot.schema = Some(s.clone());
                s
            }
        };
        // The first request of a batch reads the state's counters here (not in `run_tx`):
        // its next transaction id names the state whose last instant a previous batch may
        // have recorded.
        let batch_counters = slot.counters;
        let counters = match batch_counters {
            Some(c) => c,
            None => super::run::read_counters(&r)?,
        };
        let known_last_instant = slot
            .last_instant
            .or_else(|| t.last_instant.of_state(counters.2));
        // A redo after a map growth must expand again only if the schema moved.
        let expanded = self.expanded.take();
        let Attempt {
            outcome: out,
            stats,
        } = attempt(
            r,
            &schema,
            &self.data,
            &self.functions.tx(),
            Some(counters),
            expanded,
            self.clock,
            known_last_instant,
            t.tx_log.as_ref(),
            stage,
        )?;
        // Validation passed: only now does this request put its own effects into the shared
        // batch state.
        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        slot.counters = Some((out.next_entity, out.next_attr, out.tx + 1));
        slot.last_instant = out.last_instant;
        t.last_instant.record(out.tx + 1, out.last_instant);
        stats.add_to(slot);
        let mut schema_after = None;
        if let Some(new_schema) = out.new_schema {
            let new_schema = Arc::new(new_schema);
            self.store.publish_schema(new_schema.clone());
            slot.schema = Some(new_schema.clone());
            slot.schema_changed = true;
            schema_after = Some(new_schema);
        }
        // Moved, not cloned: the hot path pays no reference counting for this.
        self.around = Some(super::report::Around {
            schema_before: schema,
            schema_after,
            counters_before: batch_counters,
            counters_after: (out.next_entity, out.next_attr, out.tx + 1),
        });
        // The index bytes go back to the caller to free (see `Spent`).
        let super::datoms::NetDatoms {
            datoms: tx_data,
            av: bytes,
        } = out.datoms;
        Ok(TxReport {
            tx: out.tx,
            tx_data,
            tempids: out.tempids,
            dbs: Default::default(),
            spent: super::report::Spent { data: None, bytes },
        })
    }
}

/// `WriteRequest::prepare` of a request that is one attempt (a transaction, a bulk load's
/// fill): `$attempt`, a method of the request taking the view, the stage and the batch state,
/// runs it; its result is kept in the request's `result` for `finish`, and a failed attempt
/// rejects the request alone. A macro, not a function, because the shared part is the trait
/// method itself.
macro_rules! prepare_by_attempt {
    ($attempt:ident) => {
        fn prepare(
            &mut self,
            view: crate::kv::View<'_>,
            stage: &mut crate::kv::Stage,
            batch: &mut crate::kv::BatchState,
        ) -> Result<(), crate::kv::Rejected> {
            let result = self.$attempt(view, stage, batch);
            let ok = result.is_ok();
            self.result = Some(result);
            if ok {
                Ok(())
            } else {
                Err(crate::kv::Rejected)
            }
        }
    };
}
pub(crate) use prepare_by_attempt;

impl WriteRequest for TxRequest {
    fn size_hint(&self) -> usize {
        self.size
    }

    prepare_by_attempt!(attempt);

    /// Every report can hand out its `db_before`/`db_after`.
    fn wants_batch_snapshot(&self) -> bool {
        true
    }

    /// `attempt` reads everything before it touches the batch state, and fails on any read
    /// error, as deferring asks.
    fn defers_apply(&self) -> bool {
        true
    }

    fn attach_batch_snapshot(
        &mut self,
        batch: &Arc<crate::kv::BatchSnapshot>,
        ops: crate::kv::OpRange,
    ) {
        self.attached = Some((batch.clone(), ops));
    }

    fn finish(self: Box<Self>, outcome: Outcome) {
        let this = *self;
        let mut result = match outcome {
            Outcome::Committed | Outcome::Rejected => this
                .result
                .unwrap_or_else(|| Err(TxError::from(crate::kv::KvError::Closed))),
            Outcome::Failed(e) => Err(TxError::from(e)),
        };
        // The report's database values take the request's own handles (moved, not cloned).
        if let (Ok(report), Some((batch, ops)), Some(around)) =
            (&mut result, this.attached, this.around)
        {
            report.dbs = super::report::ReportDbs::Batch(Box::new(super::report::BatchLink {
                batch,
                ops,
                around,
                store: this.store,
                functions: this.functions,
            }));
        }
        // The tx data goes back with a report, to be freed on the caller's thread. A callback
        // runs here on the committer, so for it the spent parts go to the bin that the next
        // caller to queue a transaction empties.
        if let Ok(report) = &mut result {
            report.spent.data = Some(this.data);
            if matches!(this.completion, Some(Completion::Callback(_))) {
                super::report::bin_put(std::mem::take(&mut report.spent));
            }
        }
        if let Some(c) = this.completion {
            c.complete(result);
        }
    }
}

/// Expands tx data on the caller's thread (the committer then skips stage 2 when the schema
/// has not changed meanwhile). Any problem is left for the committer to report, since the
/// caller's schema may be older than the one the transaction will meet.
pub fn expand_early(
    schema: &crate::store::Schema,
    functions: &Functions,
    data: &TxData,
) -> Option<(u64, Vec<super::terms::Term>)> {
    // On the caller's thread: free what committed transactions left in the bin.
    super::report::bin_empty();
    let call = |name: &Keyword, args: &[Value]| functions.get(name).map(|f| f(args));
    let mut terms = Vec::with_capacity(data.term_estimate());
    super::terms::Expander::new(schema, &call)
        .expand(data, &mut terms)
        .ok()?;
    Some((schema.version, terms))
}
