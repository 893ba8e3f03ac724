//! What a committed transaction reports.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use super::data::Tempid;
use crate::edn::Edn;
use crate::store::ids::EntityId;
use crate::store::{Datom, Schema, Store};

/// The result of a transaction: its entity, its datoms and how its tempids resolved, and the
/// database values just before and just after it (`db_before()` / `db_after()`, defined with
/// `Db` in `api`). Each request of a group commit gets its own report.
#[derive(Debug, Clone)]
pub struct TxReport {
    /// The transaction entity id.
    pub tx: EntityId,
    /// The datoms it asserted and retracted (net change).
    pub tx_data: Vec<Datom>,
    /// Tempid resolution (anonymous map tempids and the tx tempid left out). The resolver's
    /// own map, handed over as it is (a rebuild cost a rehash per tempid); read it through
    /// [`TxReport::tempids`], [`TxReport::tempid`] and [`TxReport::tempid_neg`].
    pub(crate) tempids: FxHashMap<Tempid, EntityId>,
    /// Where `db_before` and `db_after` come from.
    pub(crate) dbs: ReportDbs,
    /// What the transaction no longer needs, freed wherever the report is dropped.
    pub(crate) spent: Spent,
}

/// A committed transaction's own tx data and index bytes, carried back in its report so that
/// the caller's thread frees them when it drops the report, not the committer: every queued
/// transaction waits on the committer, while callers usually have time to spare. Freeing a
/// transaction of a thousand entities is thousands of deallocations (and, with the caller's
/// `Arc` counts on the other core, cache-line transfers). Never cloned with the report.
#[derive(Default)]
#[allow(dead_code)] // held only to be dropped
pub(crate) struct Spent {
    pub(crate) data: Option<super::data::TxData>,
    pub(crate) bytes: Vec<super::av::AvBytes>,
}

/// Spent parts of transactions whose reports went to callbacks (which run on the committer),
/// waiting for a caller to free them: every thread that queues a transaction empties the bin
/// first (`request::expand_early`). Shared by the databases of the process; bounded, past
/// which the committer frees them itself.
static BIN: std::sync::Mutex<Vec<Spent>> = std::sync::Mutex::new(Vec::new());

/// Transactions' spent parts the bin holds at most.
const BIN_MAX: usize = 1024;

/// Leaves `s` for a caller to free (or frees it here if the bin is full).
pub(crate) fn bin_put(s: Spent) {
    if s.data.is_none() && s.bytes.is_empty() {
        return;
    }
    let mut bin = BIN.lock().unwrap_or_else(|p| p.into_inner());
    if bin.len() < BIN_MAX {
        bin.push(s);
        return;
    }
    drop(bin);
    drop(s);
}

/// Frees whatever the bin holds (outside its lock).
pub(crate) fn bin_empty() {
    let taken = {
        let mut bin = BIN.lock().unwrap_or_else(|p| p.into_inner());
        if bin.is_empty() {
            return;
        }
        std::mem::take(&mut *bin)
    };
    drop(taken);
}

impl Clone for Spent {
    fn clone(&self) -> Self {
        Spent::default()
    }
}

impl std::fmt::Debug for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spent")
    }
}

impl TxReport {
    /// Every tempid the transaction resolved and its entity id (in no particular order).
    pub fn tempids(&self) -> impl Iterator<Item = (&Tempid, &EntityId)> {
        self.tempids.iter()
    }

    /// The tempids the caller wrote (strings and negative numbers) with the ids they resolved
    /// to, as EDN pairs in no set order: the entries of Datomic's `:tempids` map, with
    /// `"datomic.tx"` when the transaction said something about itself. Tempids the
    /// transaction made for itself are left out.
    pub fn tempids_edn(&self) -> Vec<(Edn, Edn)> {
        self.tempids
            .iter()
            .filter_map(|(t, id)| {
                let key = match t {
                    Tempid::Named(s) => Edn::String(s.to_string()),
                    Tempid::Negative(n) => Edn::Long(*n),
                    Tempid::CurrentTx => Edn::String("datomic.tx".into()),
                    _ => return None,
                };
                Some((key, Edn::Long(*id as i64)))
            })
            .collect()
    }

    /// The basis t of `db_before()`: the transaction before this one. Known without
    /// building that value (which replays the batch's writes over a snapshot): a
    /// transaction takes the next transaction id, and a value's basis is the id before the
    /// next.
    pub fn basis_t_before(&self) -> EntityId {
        self.tx - 1
    }

    /// The basis t of `db_after()`: this transaction.
    pub fn basis_t_after(&self) -> EntityId {
        self.tx
    }

    /// The schema just after this transaction (which may have installed or changed
    /// attributes), without building `db_after()`; `None` when the report has no database
    /// values (`db_after()` would fail too). Attribute ids are never reused, so a later
    /// schema names every attribute this one does.
    pub fn schema_after(&self) -> Option<&Arc<Schema>> {
        match &self.dbs {
            ReportDbs::Unavailable => None,
            ReportDbs::Ready(pair) => Some(&pair.1.schema),
            ReportDbs::Batch(link) => Some(
                link.around
                    .schema_after
                    .as_ref()
                    .unwrap_or(&link.around.schema_before),
            ),
        }
    }

    /// The id a string tempid resolved to (`"datomic.tx"`: the transaction, when a term was
    /// about it).
    pub fn tempid(&self, name: &str) -> Option<EntityId> {
        let t = match name {
            "datomic.tx" => Tempid::CurrentTx,
            _ => Tempid::Named(name.into()),
        };
        self.tempids.get(&t).copied()
    }

    /// The id a negative-number tempid resolved to.
    pub fn tempid_neg(&self, n: i64) -> Option<EntityId> {
        self.tempids.get(&Tempid::Negative(n)).copied()
    }
}

/// How a report gets its database values.
#[derive(Clone, Default)]
pub(crate) enum ReportDbs {
    /// None (the report was built where no snapshot could be kept).
    #[default]
    Unavailable,
    /// Computed already (`Db::with`).
    Ready(Box<(crate::db::DbParts, crate::db::DbParts)>),
    /// Built on demand from the snapshot of the request's group commit.
    Batch(Box<BatchLink>),
}

/// What a committed request needs to rebuild the states around it from its batch's
/// snapshot (the state before the batch) and staged writes.
#[derive(Clone)]
pub(crate) struct BatchLink {
    pub(crate) batch: Arc<crate::kv::BatchSnapshot>,
    /// This request's ops in the batch's stage: `..start` is the state before it, `..end`
    /// the state after it.
    pub(crate) ops: crate::kv::OpRange,
    pub(crate) around: Around,
    pub(crate) store: Arc<Store>,
    pub(crate) functions: Arc<crate::db::Functions>,
}

/// The schemas and id counters just before and just after one request (the batch writes
/// counters once at its end, so the stage alone does not have them).
#[derive(Clone)]
pub(crate) struct Around {
    pub(crate) schema_before: Arc<Schema>,
    /// `None`: unchanged by the request.
    pub(crate) schema_after: Option<Arc<Schema>>,
    /// `None`: the request was the batch's first, the snapshot's counters are right.
    pub(crate) counters_before: Option<(u64, u64, u64)>,
    pub(crate) counters_after: (u64, u64, u64),
}

impl std::fmt::Debug for ReportDbs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportDbs::Unavailable => write!(f, "Unavailable"),
            ReportDbs::Ready(_) => write!(f, "Ready"),
            ReportDbs::Batch(l) => write!(f, "Batch(ops {:?})", l.ops),
        }
    }
}
