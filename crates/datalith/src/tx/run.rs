//! The whole pipeline for one transaction against one state of the database: tx data, terms
//! with tempids, terms with ids, datoms. Pure with respect to the database: it only reads, so
//! the committer can run it inside a batch and `with` can run it on a snapshot.

use rustc_hash::FxHashMap as HashMap;

use super::data::{Tempid, TxData};
use super::datoms::{DatomBuilder, NetDatoms};
use super::error::TxError;
use super::resolve::{Counters, Resolver};
use super::schema_change::apply_schema_change;
use super::terms::{Expander, FailedForm, Term, E, V};
use crate::codec::{Keyword, Value};
use crate::store::ids::{EntityId, TX_PARTITION_START, USER_PARTITION_START};
use crate::store::reader::IndexReader;
use crate::store::schema::{builtin, Schema};
use crate::store::tables::{meta_key, read_counter};

/// A transaction function registered in Rust: gets its arguments, returns tx data.
pub use crate::db::TxFunction;

/// What a transaction computed.
#[derive(Debug)]
pub struct TxOutcome {
    /// The transaction entity.
    pub tx: EntityId,
    /// Net datoms with their encoded values.
    pub datoms: NetDatoms,
    /// Tempid resolution.
    pub tempids: HashMap<Tempid, EntityId>,
    /// Counters after allocation.
    pub next_entity: u64,
    /// Next attribute id after allocation.
    pub next_attr: u64,
    /// The schema after the transaction, if it changed.
    pub new_schema: Option<Schema>,
    /// The largest `:db/txInstant` of the state after this transaction, when this run knew
    /// it: the next transaction of the same group commit then need not look it up (see
    /// `StoreBatch::last_instant`). `None` when unknown, or when this transaction retracted
    /// an instant or excised (the largest may then be smaller than any this run saw).
    pub last_instant: Option<i64>,
}

/// Where a transaction's `:db/txInstant` comes from when its tx data sets none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxClock {
    /// This machine's clock.
    #[default]
    Local,
    /// The given instant (ms since the epoch), raised to the last transaction's instant when
    /// it is earlier: a transaction log shared by several machines (`datalith serve --log`)
    /// carries the submitter's clock, and every machine applying it must reach the same
    /// instant whatever the order of clocks, without refusing the transaction.
    AtLeast(i64),
}

/// The instant of the newest transaction the state `r` holds.
fn last_instant(r: &IndexReader<'_>) -> Result<Option<i64>, TxError> {
    let mut last = None;
    r.scan_attr(
        builtin::TX_INSTANT,
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        crate::kv::Direction::Backward,
        |vb, _| {
            last = r.decode_value(builtin::TX_INSTANT, vb).ok();
            Ok(false)
        },
    )?;
    Ok(match last {
        Some(Value::Instant(ms)) => Some(ms),
        _ => None,
    })
}

/// Runs the pipeline.
#[allow(clippy::too_many_arguments)]
pub fn run_tx(
    r: IndexReader<'_>,
    schema: &Schema,
    data: &TxData,
    functions: &dyn Fn(&Keyword, &[Value]) -> Option<Result<TxData, String>>,
    clock: TxClock,
    counters: Option<(u64, u64, u64)>,
    expanded: Option<(u64, Vec<Term>)>,
    known_last_instant: Option<i64>,
) -> Result<TxOutcome, TxError> {
    let (next_entity, next_attr, tx) = match counters {
        Some(c) => c,
        None => read_counters(&r)?,
    };

    // Stage 2: terms with tempids.
    let mut terms = match expanded {
        // Expanded by the caller against this very schema version: reuse.
        Some((version, terms)) if version == schema.version => terms,
        _ => {
            let mut terms = Vec::with_capacity(data.term_estimate());
            let mut expander = Expander::new(schema, functions);
            if let Err(e) = expander.expand(data, &mut terms) {
                let counters = Counters {
                    next_entity,
                    next_attr,
                    tx,
                };
                let failed = expander.failed_form();
                return Err(earlier_error(r, schema, counters, terms, failed).unwrap_or(e));
            }
            terms
        }
    };
    let user_instant = terms.iter().find_map(|t| match t {
        Term::Add(E::Temp(Tempid::CurrentTx), a, V::Val(Value::Instant(ms)))
            if a.id == builtin::TX_INSTANT =>
        {
            Some(*ms)
        }
        _ => None,
    });
    // The state's largest instant, looked up at most once (a backward seek in AVE, which
    // over a group's pending writes costs far more than the seek): `Some(None)` when the
    // state has none.
    let mut largest: Option<Option<i64>> = known_last_instant.map(Some);
    let look_up = |largest: &mut Option<Option<i64>>| -> Result<Option<i64>, TxError> {
        if largest.is_none() {
            *largest = Some(last_instant(&r)?);
        }
        Ok(largest.flatten())
    };
    if let Some(instant) = user_instant {
        // Only a given instant is checked: the clock's own goes forward.
        if let Some(last) = look_up(&mut largest)? {
            if instant < last {
                return Err(TxError::PastTxInstant { instant, last });
            }
        }
    }
    let instant = match user_instant {
        Some(given) => given,
        None => match clock {
            TxClock::Local => now_ms(),
            TxClock::AtLeast(ms) => look_up(&mut largest)?.map_or(ms, |last| ms.max(last)),
        },
    };
    // Datomic's report names "datomic.tx" among the tempids when the transaction asserts
    // or retracts something about it, not when it is only a value (a reference to the
    // transaction) nor for the instant added below.
    let is_tx = |e: &E| matches!(e, E::Temp(Tempid::CurrentTx));
    let names_tx = terms.iter().any(|t| match t {
        Term::Add(e, ..) | Term::Retract(e, ..) | Term::RetractEntity(e) => is_tx(e),
        Term::Cas(c) => is_tx(&c.0),
        Term::Names(_) => false,
    });
    if user_instant.is_none() {
        let attr = schema.get(builtin::TX_INSTANT).expect("built-in").clone();
        terms.push(Term::Add(
            E::Temp(Tempid::CurrentTx),
            attr,
            V::Val(Value::Instant(instant)),
        ));
    }

    // Stage 3: terms with ids.
    let mut resolver = Resolver::new(
        r,
        schema,
        Counters {
            next_entity,
            next_attr,
            tx,
        },
    );
    resolver.resolve_tempids(&terms)?;
    let fresh = resolver.fresh();

    // Stage 4: datoms, each term resolved as it is applied (no list of resolved terms).
    let mut builder = DatomBuilder::new(r, schema, tx, fresh, &resolver.known);
    builder.reserve(terms.len());
    let mut last = None;
    let mut terms = terms.into_iter();
    while let Some(term) = terms.next() {
        let applied = resolver
            .resolve(term, &mut last)
            .and_then(|t| builder.apply(t));
        if let Err(e) = applied {
            // Datomic judges conflicting datoms once every form is read: a later form's
            // failing `:db/cas` or lookup ref that names nothing comes first, then a tempid
            // used only as a value.
            if e.is_conflict() {
                if let Some(later) = read_error(&resolver, &mut builder, terms.by_ref(), &mut last)
                {
                    return Err(later);
                }
                resolver.check_only_values()?;
            }
            return Err(e);
        }
    }
    resolver.check_only_values()?;
    builder.update_composites()?;
    builder.check_contested()?;
    builder.check_entity_specs()?;
    let datoms = builder.finish();
    let Resolver {
        counters,
        mut tempids,
        ..
    } = resolver;
    if !names_tx {
        tempids.remove(&Tempid::CurrentTx);
    }
    let new_schema = apply_schema_change(&r, schema, &datoms.datoms)?;
    // Looked at only when there is a largest instant to carry on, not on every transaction.
    let lowers = || {
        datoms.datoms.iter().any(|d| {
            (d.a == builtin::TX_INSTANT && !d.added) || (d.a == builtin::EXCISE && d.added)
        })
    };
    let last_instant = match largest {
        Some(before) if !lowers() => Some(before.map_or(instant, |b| b.max(instant))),
        _ => None,
    };
    Ok(TxOutcome {
        tx,
        datoms,
        tempids,
        next_entity: counters.next_entity,
        next_attr: counters.next_attr,
        new_schema,
        last_instant,
    })
}

/// The error of the forms before one that failed to expand (`terms`: theirs), if one of them
/// fails as it is read: Datomic reads the forms in order, so a failing `:db/cas` or a lookup
/// ref that names nothing there comes before a later form's unknown attribute. What Datomic
/// judges only once every form is read (conflicting datoms, uniqueness, a tempid used only as
/// a value) is no error here.
fn earlier_error(
    r: IndexReader<'_>,
    schema: &Schema,
    counters: Counters,
    terms: Vec<Term>,
    failed: Option<FailedForm>,
) -> Option<TxError> {
    let (start, entity) = match failed {
        Some(FailedForm { start, entity }) => (start, entity),
        None => (terms.len(), None),
    };
    if terms.is_empty() && entity.is_none() {
        return None;
    }
    let mut resolver = Resolver::new(r, schema, counters);
    if let Err(e) = resolver.resolve_tempids(&terms) {
        return found_at_read(&e).then_some(e);
    }
    let fresh = resolver.fresh();
    let mut builder = DatomBuilder::new(r, schema, counters.tx, fresh, &resolver.known);
    let mut last = None;
    let mut terms = terms.into_iter();
    // The failing form's own entity is read before the terms it made.
    let before = terms.by_ref().take(start).collect::<Vec<_>>();
    if let Some(e) = read_error(&resolver, &mut builder, before.into_iter(), &mut last) {
        return Some(e);
    }
    if let Some(Err(e)) = entity.map(|e| resolver.names(&e)) {
        return Some(e);
    }
    read_error(&resolver, &mut builder, terms, &mut last)
}

/// The first error of `terms`, resolved and applied in order, that Datomic finds as it reads
/// a form ([`found_at_read`]); the others are passed over.
fn read_error(
    resolver: &Resolver<'_>,
    builder: &mut DatomBuilder<'_>,
    terms: impl Iterator<Item = Term>,
    last: &mut Option<(Tempid, EntityId)>,
) -> Option<TxError> {
    for term in terms {
        if let Err(e) = resolver.resolve(term, last).and_then(|t| builder.apply(t)) {
            if found_at_read(&e) {
                return Some(e);
            }
        }
    }
    None
}

/// Whether Datomic finds `e` as it reads the form that causes it (a failing `:db/cas`, a
/// lookup ref that names nothing), rather than once every form is read (conflicting datoms,
/// uniqueness, a tempid used only as a value).
fn found_at_read(e: &TxError) -> bool {
    !e.is_conflict()
        && !matches!(
            e,
            TxError::UniqueConflict { .. }
                | TxError::TempidConflict { .. }
                | TxError::TempidOnlyValue { .. }
        )
}

/// Milliseconds since the Unix epoch, for `:db/txInstant`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The id counters (next entity, next attribute, next tx) recorded in this state.
pub fn read_counters(r: &IndexReader<'_>) -> Result<(u64, u64, u64), TxError> {
    Ok((
        read_counter(
            r.view,
            &r.t.meta,
            meta_key::NEXT_ENTITY,
            USER_PARTITION_START,
        )?,
        read_counter(
            r.view,
            &r.t.meta,
            meta_key::NEXT_ATTR,
            builtin::FIRST_USER_ATTR as u64,
        )?,
        read_counter(r.view, &r.t.meta, meta_key::NEXT_TX, TX_PARTITION_START)?,
    ))
}
