//! `Db`: a consistent, immutable view of the database (a database value, in Datomic's words).
//!
//! A `Db` is an LMDB snapshot, optionally with an in-memory [`Overlay`] of writes on top (a
//! speculative database from [`Db::with`], or a report's `db_before`/`db_after`). Every read
//! goes through the overlaid view, so queries, pull, entities and raw index access work the
//! same on both.

use std::sync::Arc;

use crate::codec::Keyword;
use crate::edn::Edn;
use crate::kv::{Overlay, ReadTxn, Snapshot};
use crate::pull::{Eid, PullCache};
use crate::query::run::InputRef;
use crate::query::{PreparedQuery, QueryCache, QueryError, QueryOptions, Registry, Step};
use crate::store::reader::IndexReader;
use crate::store::{Attribute, EntityId, Schema, Store};
use crate::tx::TxError;

/// A database value. Reads never block writers and see exactly one state: a committed one,
/// or a committed one plus speculative writes ([`Db::with`]). Cloning is cheap and shares the
/// snapshot, which stays open as long as any clone (or speculative database made from it)
/// lives.
pub struct Db {
    snapshot: Arc<Snapshot>,
    overlay: Option<Arc<Overlay>>,
    pub(crate) store: Arc<Store>,
    schema: Arc<Schema>,
    pub(crate) queries: Arc<QueryEnv>,
    /// The transaction functions of the database this value came from (for `with`).
    pub(crate) functions: Option<Arc<std::sync::RwLock<crate::tx::request::Functions>>>,
    // Keeps `Db` `!Sync`: two threads share a snapshot only through distinct `Db` values,
    // made by `clone`/`with`, which prepare the snapshot for sharing first.
    _not_sync: std::marker::PhantomData<std::cell::Cell<()>>,
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
        self.prepare_share();
        Db {
            snapshot: self.snapshot.clone(),
            overlay: self.overlay.clone(),
            store: self.store.clone(),
            schema: self.schema.clone(),
            queries: self.queries.clone(),
            functions: self.functions.clone(),
            _not_sync: std::marker::PhantomData,
        }
    }
}

/// Query machinery shared by every snapshot of a database: the parse cache and registered
/// functions.
#[derive(Default)]
pub struct QueryEnv {
    /// Parsed queries.
    pub cache: QueryCache,
    /// User functions and aggregates.
    pub registry: std::sync::RwLock<Registry>,
    /// Parsed pull patterns.
    pub pulls: PullCache,
    /// The memory limit of this database's queries in bytes (0: the default, a quarter of
    /// physical memory); a query's own limit takes precedence.
    pub memory_limit: std::sync::atomic::AtomicU64,
}

impl QueryEnv {
    /// The database's query memory limit, when one is set.
    pub fn memory_limit(&self) -> Option<u64> {
        match self.memory_limit.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            n => Some(n),
        }
    }
}

impl Db {
    pub(crate) fn open(
        txn: ReadTxn,
        store: Arc<Store>,
        queries: Arc<QueryEnv>,
        functions: Arc<std::sync::RwLock<crate::tx::request::Functions>>,
    ) -> Result<Db, TxError> {
        let schema = {
            let r = IndexReader::new(txn.view(), &store.tables);
            store.schema_for(&r)?
        };
        Ok(Db {
            snapshot: Arc::new(Snapshot::new(txn)),
            overlay: None,
            store,
            schema,
            queries,
            functions: Some(functions),
            _not_sync: std::marker::PhantomData,
        })
    }

    /// A database value from its parts (a speculative one when `overlay` is set). The schema
    /// is given, never looked up in the store's cache: a speculative schema must not be
    /// published, since its version number may later name a different committed schema.
    pub(crate) fn from_parts(parts: crate::tx::report::DbParts) -> Db {
        let queries = parts
            .queries
            .downcast::<QueryEnv>()
            .unwrap_or_else(|_| Arc::new(QueryEnv::default()));
        Db {
            snapshot: parts.snapshot,
            overlay: parts.overlay,
            store: parts.store,
            schema: parts.schema,
            queries,
            functions: parts.functions,
            _not_sync: std::marker::PhantomData,
        }
    }

    /// This value's parts (sharing its snapshot).
    pub(crate) fn parts(&self) -> crate::tx::report::DbParts {
        self.prepare_share();
        crate::tx::report::DbParts {
            snapshot: self.snapshot.clone(),
            overlay: self.overlay.clone(),
            store: self.store.clone(),
            schema: self.schema.clone(),
            queries: self.queries.clone(),
            functions: self.functions.clone(),
        }
    }

    /// The writes this value holds over its snapshot.
    pub(crate) fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_deref()
    }

    fn prepare_share(&self) {
        let t = &self.store.tables;
        self.snapshot
            .prepare_share(&[&t.eav, &t.ave, &t.giants, &t.meta]);
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

    /// Whether this value holds writes that were never committed (made by [`Db::with`]) or
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
    pub fn ident_entity(&self, ident: &Keyword) -> Result<Option<EntityId>, TxError> {
        if let Some(a) = self.schema.by_ident(ident) {
            return Ok(Some(a.id as EntityId));
        }
        Ok(self.reader().first_entity_with(
            crate::store::schema::builtin::IDENT,
            &crate::codec::Value::Keyword(ident.clone()),
        )?)
    }
}

impl Db {
    /// Runs a query (EDN text) on this database and `inputs`: the database is the first
    /// `:in` input when that is `$` (or a named source, such as `$db`, with no input of its
    /// own), else `$` is this database implicitly; `inputs` are the values for the other
    /// `:in` forms, in order. For several databases, or databases among the other inputs,
    /// see [`crate::q`].
    ///
    /// ```
    /// use datalith::edn::read_one;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let tx = |text: &str| datalith::tx::edn::tx_data_from_edn(&read_one(text).unwrap()).unwrap();
    /// db.transact(tx(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                     :db/cardinality :db.cardinality/one}]"#)).unwrap();
    /// db.transact(tx(r#"[{:name "Ann"} {:name "Bob"}]"#)).unwrap();
    /// let snapshot = db.db().unwrap();
    /// let names = snapshot
    ///     .q("[:find [?n ...] :in $ [?n ...] :where [_ :name ?n]]",
    ///        &[read_one(r#"["Ann" "Cid"]"#).unwrap()])
    ///     .unwrap();
    /// assert_eq!(names, read_one(r#"["Ann"]"#).unwrap());
    /// ```
    pub fn q(&self, query: &str, inputs: &[Edn]) -> Result<Edn, QueryError> {
        Ok(self.q_with(query, inputs, &QueryOptions::default())?.result)
    }

    /// Runs a query and returns its result with the executed plan (estimated and actual sizes).
    pub fn explain(&self, query: &str, inputs: &[Edn]) -> Result<(Edn, Vec<Step>), QueryError> {
        let o = self.q_with(query, inputs, &QueryOptions::default().explain(true))?;
        Ok((o.result, o.steps))
    }

    /// Runs a query that stops with [`QueryError::Cancelled`] once `cancel` is set.
    pub fn q_cancellable(
        &self,
        query: &str,
        inputs: &[Edn],
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Edn, QueryError> {
        Ok(self
            .q_with(query, inputs, &QueryOptions::default().cancel(cancel))?
            .result)
    }

    /// Runs a query with `options`: a timeout, a cancellation flag, a memory limit (the
    /// database's when not given), and whether to record the plan. A query that goes past a
    /// limit stops with [`QueryError::Timeout`], [`QueryError::Cancelled`] or
    /// [`QueryError::ResourceExhausted`].
    ///
    /// ```
    /// use datalith::edn::read_one;
    /// use datalith::query::QueryOptions;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let snapshot = db.db().unwrap();
    /// let options = QueryOptions::default().timeout_ms(5_000).memory_limit(64 << 20);
    /// let out = snapshot
    ///     .q_with("[:find ?x :in [?x ...]]", &[read_one("[1 2]").unwrap()], &options)
    ///     .unwrap();
    /// assert_eq!(out.result, read_one("#{[1] [2]}").unwrap());
    /// ```
    pub fn q_with(
        &self,
        query: &str,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
    ) -> Result<crate::query::run::Outcome, QueryError> {
        self.q_prepared(&self.prepare(query)?, inputs, options)
    }

    /// Reads and splits a query once (through the database's cache of query texts), for
    /// [`Db::q_prepared`] to run again and again without looking the text up. Prepared on one
    /// snapshot, it runs on any: nothing in it depends on the schema.
    ///
    /// ```
    /// use datalith::edn::read_one;
    /// use datalith::query::QueryOptions;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let snapshot = db.db().unwrap();
    /// let doubled = snapshot.prepare("[:find ?y . :in ?x :where [(* ?x 2) ?y]]").unwrap();
    /// for (x, y) in [(1, 2), (5, 10)] {
    ///     let out = snapshot
    ///         .q_prepared(&doubled, &[read_one(&x.to_string()).unwrap()], &QueryOptions::default())
    ///         .unwrap();
    ///     assert_eq!(out.result, read_one(&y.to_string()).unwrap());
    /// }
    /// ```
    pub fn prepare(&self, query: &str) -> Result<PreparedQuery, QueryError> {
        Ok(PreparedQuery::new(self.queries.cache.parse(query)?))
    }

    /// Runs a query prepared by [`Db::prepare`] (see [`Db::q_with`] for inputs and options).
    pub fn q_prepared(
        &self,
        prepared: &PreparedQuery,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
    ) -> Result<crate::query::run::Outcome, QueryError> {
        let sections = prepared.sections();
        let registry = self
            .queries
            .registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        // The receiver is the first `:in` input, or `$` when `:in` does not name it.
        let first = crate::query::lower::receiver_is_first_input(sections, inputs.len());
        let all: Vec<InputRef<'_>> = first
            .then_some(InputRef::Db(self))
            .into_iter()
            .chain(inputs.iter().map(InputRef::Value))
            .collect();
        let implicit = (!first).then_some(self);
        let options = QueryOptions {
            memory_limit: options.memory_limit.or(self.queries.memory_limit()),
            ..*options
        };
        crate::query::run::run(sections, &all, implicit, &registry, &options)
    }

    /// Pulls `pattern` (EDN text) for the entity `e` names: an entity id, an ident or a
    /// lookup ref ([`Eid`]). Nil when an ident or lookup ref names no entity (Datomic's
    /// answer); an error for a lookup ref on an attribute that is not unique.
    pub fn pull(&self, pattern: &str, e: impl Into<Eid>) -> Result<Edn, QueryError> {
        let p = self.queries.pulls.parse(pattern)?;
        match e.into().resolve(self)? {
            Some(e) => crate::pull::pull(self, &p, e),
            None => Ok(Edn::Nil),
        }
    }

    /// Pulls `pattern` for several entities (nil for each that names none).
    pub fn pull_many<E: Into<Eid> + Clone>(
        &self,
        pattern: &str,
        es: &[E],
    ) -> Result<Vec<Edn>, QueryError> {
        let p = self.queries.pulls.parse(pattern)?;
        es.iter()
            .map(|e| match e.clone().into().resolve(self)? {
                Some(e) => crate::pull::pull(self, &p, e),
                None => Ok(Edn::Nil),
            })
            .collect()
    }

    /// The entity id `e` names (Datomic's `entid`): `None` for an ident or lookup ref that
    /// names none.
    pub fn entid(&self, e: impl Into<Eid>) -> Result<Option<EntityId>, QueryError> {
        e.into().resolve(self)
    }
}
