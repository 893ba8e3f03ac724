//! One attempt of a transaction against one state: the pipeline (tx data to net datoms,
//! `run.rs`) and the staging of its index writes (`write.rs`). A committed transaction
//! (`TxRequest::attempt`, against its group commit's state) and a speculative one (`Db::with`,
//! against a database value) both go through here, so the two cannot drift apart; they differ
//! only in where the staged writes go afterwards (LMDB or an overlay) and in how the
//! per-attribute statistics are counted (`Distinct`).

use super::data::{Tempid, TxData};
use super::error::TxError;
use super::run::{run_tx, TxClock, TxOutcome};
use super::terms::Term;
use super::write::stage_datoms;
use crate::codec::{Keyword, Value};
use crate::db::TxFunctions;
use crate::kv::{Stage, Table};
use crate::store::reader::IndexReader;
use crate::store::Schema;

/// What one attempt computed and staged.
pub(crate) struct Attempt {
    /// The pipeline's result; its tempids are only those the user can name (no anonymous
    /// ones; the current transaction's only when a term is about it).
    pub(crate) outcome: TxOutcome,
    /// Per attribute, the change of (datoms, distinct values) the staged writes make.
    pub(crate) stats: super::write::AttrChanges,
}

/// Runs `data` on the state `r` reads, with `schema` and the id `counters` of that state
/// (read from it when `None`), and stages its writes in `stage`. `expanded`: terms the caller
/// expanded beforehand, reused when their schema version is `schema`'s; `clock`: where its
/// instant comes from; `log`: the transaction log table, when the transaction's log entry is
/// to be staged too (a commit's, not a speculative one's).
#[allow(clippy::too_many_arguments)]
pub(crate) fn attempt(
    r: IndexReader<'_>,
    schema: &Schema,
    data: &TxData,
    functions: &TxFunctions,
    counters: Option<(u64, u64, u64)>,
    expanded: Option<(u64, Vec<Term>)>,
    clock: TxClock,
    known_last_instant: Option<i64>,
    log: Option<&Table>,
    stage: &mut Stage,
) -> Result<Attempt, TxError> {
    let call = |name: &Keyword, args: &[Value]| functions.get(name).map(|f| f(args));
    // Lookups by unique attributes (upserts, lookup refs, uniqueness) then skip asking
    // `attr_entities` whether the attribute is listed.
    let r = r.with_schema(schema);
    let mut outcome = run_tx(
        r,
        schema,
        data,
        &call,
        clock,
        counters,
        expanded,
        known_last_instant,
    )?;
    // A transaction's datoms go where the schema it leaves says (it may install their
    // attributes); one that moves an attribute's datoms in or out of AVE moves them first.
    let after = outcome.new_schema.as_ref().unwrap_or(schema);
    let value_index = r.t.value_index;
    let moved = super::value_index_change::stage_moves(&r, schema, after, &outcome.datoms, stage)?;
    let mut stats = stage_datoms(
        &r,
        r.t,
        &outcome.datoms,
        stage,
        |a| schema.get(a).is_some_and(|x| x.unique.is_some()),
        |a| schema.get(a).is_some_and(|x| x.no_history),
        &|a| value_index.in_ave_of(after, a),
        log,
        outcome.tx,
    )?;
    let mut excised = Vec::new();
    for (a, (d, n)) in
        super::excise::stage_excisions(&r, r.t, schema, &outcome.datoms, stage, &mut excised)?
    {
        let x = stats.counts.entry(a).or_default();
        x.0 += d;
        x.1 += n;
    }
    for (a, s) in moved {
        stats.sketches.entry(a).or_default().merge(&s);
    }
    // The full-text indexes follow the datoms and, after them, what an excision removed.
    if excised.is_empty() {
        super::fulltext::stage_fulltext(&r, schema, after, &outcome.datoms.datoms, stage)?;
    } else {
        let mut all = outcome.datoms.datoms.clone();
        all.extend(excised);
        super::fulltext::stage_fulltext(&r, schema, after, &all, stage)?;
    }
    outcome
        .tempids
        .retain(|t, _| !matches!(t, Tempid::Anonymous(_)));
    Ok(Attempt { outcome, stats })
}
