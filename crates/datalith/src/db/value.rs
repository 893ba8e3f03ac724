//! `Db`: a consistent, immutable view of the database (a database value, in Datomic's words).
//!
//! A `Db` is an LMDB snapshot, optionally with an in-memory [`Overlay`] of writes on top (a
//! speculative database from `Db::with`, or a report's `db_before`/`db_after`), the schema
//! of that state and the [`Functions`] registered on the database it came from. Every read
//! goes through the overlaid view, so queries, pull, entities and raw index access work the
//! same on both.
//!
//! Invariants: the schema is the one of exactly this state (given, never looked up in the
//! store's cache for a speculative value); the snapshot stays open while any clone lives.
//! The query and pull entry points (`q`, `pull`, ...) are methods of `Db` written in the
//! layers that own them (`api::db`); this module knows nothing of queries.

use std::sync::Arc;

use super::functions::Functions;
use crate::codec::{Keyword, Value};
use crate::kv::{Overlay, ReadTxn, Snapshot};
use crate::store::reader::IndexReader;
use crate::store::{AttrId, Attribute, EntityId, Schema, Store, StoreError, TimeFilter};

/// A database value. Reads never block writers and see exactly one state: a committed one,
/// or a committed one plus speculative writes (`Db::with`). Cloning is cheap and shares the
/// snapshot, which stays open as long as any clone (or speculative database made from it)
/// lives.
pub struct Db {
    snapshot: Arc<Snapshot>,
    overlay: Option<Arc<Overlay>>,
    pub(crate) store: Arc<Store>,
    schema: Arc<Schema>,
    /// The functions registered on the database this value came from.
    pub(crate) functions: Arc<Functions>,
    /// Which datoms it shows: the current state, or a view in time (`as_of`, `since`,
    /// `history`).
    time: TimeFilter,
    // Keeps `Db` `!Sync`: two threads share a snapshot only through distinct `Db` values,
    // made by `clone`/`with`, which prepare the snapshot for sharing first.
    _not_sync: std::marker::PhantomData<std::cell::Cell<()>>,
}

/// Everything a database value is made of, and `Sync` (a `Db` is not): what a transaction
/// report keeps to hand out its `db_before`/`db_after`.
#[derive(Clone)]
pub(crate) struct DbParts {
    /// The LMDB snapshot underneath.
    pub(crate) snapshot: Arc<Snapshot>,
    /// Writes over it, if the value is speculative or not the snapshot's exact state.
    pub(crate) overlay: Option<Arc<Overlay>>,
    pub(crate) store: Arc<Store>,
    pub(crate) schema: Arc<Schema>,
    pub(crate) functions: Arc<Functions>,
    pub(crate) time: TimeFilter,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Db(lmdb txn {}, schema v{}{})",
            self.snapshot.txn_id(),
            self.schema.version,
            if self.overlay.is_some() {
                ", speculative"
            } else {
                ""
            }
        )
    }
}

impl Clone for Db {
    fn clone(&self) -> Db {
        Db::from_parts(self.parts())
    }
}

impl Db {
    /// The value of the committed state `txn` reads.
    pub(crate) fn open(
        txn: ReadTxn,
        store: Arc<Store>,
        functions: Arc<Functions>,
    ) -> Result<Db, StoreError> {
        let schema = {
            let r = IndexReader::new(txn.view(), &store.tables);
            store.schema_for(&r)?
        };
        Ok(Db {
            snapshot: Arc::new(Snapshot::new(txn)),
            overlay: None,
            store,
            schema,
            functions,
            time: TimeFilter::default(),
            _not_sync: std::marker::PhantomData,
        })
    }

    /// A database value from its parts (a speculative one when `overlay` is set). The schema
    /// is given, never looked up in the store's cache: a speculative schema must not be
    /// published, since its version number may later name a different committed schema.
    pub(crate) fn from_parts(parts: DbParts) -> Db {
        Db {
            snapshot: parts.snapshot,
            overlay: parts.overlay,
            store: parts.store,
            schema: parts.schema,
            functions: parts.functions,
            time: parts.time,
            _not_sync: std::marker::PhantomData,
        }
    }

    /// This value's parts (sharing its snapshot).
    pub(crate) fn parts(&self) -> DbParts {
        self.prepare_share();
        DbParts {
            snapshot: self.snapshot.clone(),
            overlay: self.overlay.clone(),
            store: self.store.clone(),
            schema: self.schema.clone(),
            functions: self.functions.clone(),
            time: self.time,
        }
    }

    /// The writes this value holds over its snapshot.
    /// The writes this value reads over its LMDB snapshot: its own (speculative, or a report's
    /// state), else the committed groups not yet written into LMDB that its snapshot carries.
    pub(crate) fn overlay(&self) -> Option<&Overlay> {
        self.overlay
            .as_deref()
            .or_else(|| self.snapshot.overlay().map(|o| &**o))
    }

    fn prepare_share(&self) {
        let t = &self.store.tables;
        let mut tables = vec![&t.eav, &t.ave, &t.giants, &t.meta];
        tables.extend(
            [&t.history, &t.history_attr, &t.attr_entities, &t.tx_log]
                .into_iter()
                .flatten(),
        );
        self.snapshot.prepare_share(&tables);
    }

    /// Index access (through the overlay, for a speculative database).
    pub fn reader(&self) -> IndexReader<'_> {
        let view = self.snapshot.view();
        let view = match &self.overlay {
            Some(o) => view.with_overlay(o),
            None => view,
        };
        IndexReader::new(view, &self.store.tables)
    }

    /// Which datoms this value shows (the current state when no filter is set).
    pub fn time_filter(&self) -> TimeFilter {
        self.time
    }

    /// The same state seen through `time`.
    pub(crate) fn with_time(&self, time: TimeFilter) -> Db {
        let mut parts = self.parts();
        parts.time = time;
        Db::from_parts(parts)
    }

    /// Every `(attribute, value)` of entity `e` this value shows, in attribute then value
    /// order: the EAV entry for the current state, the entity's history through the time
    /// filter otherwise.
    pub fn entity_datoms(&self, e: EntityId) -> Result<Vec<(AttrId, Value)>, StoreError> {
        let r = self.reader();
        if self.time.is_current() {
            return r.entity(e);
        }
        self.timed_values(&r, e, None)
    }

    /// The values of `a` on `e` this value shows.
    pub fn attr_values(&self, e: EntityId, a: AttrId) -> Result<Vec<Value>, StoreError> {
        let r = self.reader();
        if self.time.is_current() {
            return r.values(e, a);
        }
        Ok(self
            .timed_values(&r, e, Some(a))?
            .into_iter()
            .map(|(_, v)| v)
            .collect())
    }

    /// The entities whose `a` is `v` in the state this value shows, ascending.
    pub fn holders(&self, a: AttrId, v: &Value) -> Result<Vec<EntityId>, StoreError> {
        let r = self.reader();
        if self.time.is_current() {
            return r.entities_with(a, v);
        }
        let mut candidates = r.entities_with(a, v)?;
        candidates.extend(r.entities_that_lost(a)?);
        candidates.sort_unstable();
        candidates.dedup();
        let mut out = Vec::new();
        for e in candidates {
            if self
                .timed_values(&r, e, Some(a))?
                .iter()
                .any(|(_, x)| x == v)
            {
                out.push(e);
            }
        }
        Ok(out)
    }

    fn timed_values(
        &self,
        r: &IndexReader<'_>,
        e: EntityId,
        a: Option<AttrId>,
    ) -> Result<Vec<(AttrId, Value)>, StoreError> {
        r.timed_values(&self.time, e, a)
    }

    /// Whether this value holds writes that were never committed (made by `Db::with`) or
    /// is a transaction report's `db_before`/`db_after`, rather than a plain snapshot.
    pub fn is_speculative(&self) -> bool {
        self.overlay.is_some()
    }

    /// The schema of this snapshot.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The attribute named `ident`.
    pub fn attr(&self, ident: &Keyword) -> Option<&Arc<Attribute>> {
        self.schema.by_ident(ident)
    }

    /// The entity with `:db/ident` `ident`.
    pub fn ident_entity(&self, ident: &Keyword) -> Result<Option<EntityId>, StoreError> {
        if let Some(a) = self.schema.by_ident(ident) {
            return Ok(Some(a.id as EntityId));
        }
        crate::store::load::entity_of_ident(&self.reader(), ident)
    }
}
