//! `Database`: an open Datalog database (a connection, in Datomic's words).

use std::path::Path;
use std::sync::Arc;

use crate::codec::{Keyword, Value};
use crate::db::{Db, Functions};
use crate::kv::handle::Completion;
use crate::kv::{CommitHandle, EnvOptions, Environment, KvOp};
use crate::store::value_index::{self, ValueIndex};
use crate::store::{Store, Tables};
use crate::tx::request::TxRequest;
use crate::tx::{IntoTxData, TxData, TxError, TxReport};

/// Options for [`Database::open`]: durability and map size ([`EnvOptions`]), a schema to
/// install, the query memory limit, and whether to keep the transaction log.
///
/// ```
/// use datalith::{Database, DbOptions, Durability, Edn};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut options = DbOptions::with_durability(Durability::NoSync);
/// let schema = "{:person/name {:db/valueType :db.type/string :db/unique :db.unique/identity}}";
/// options.schema = Some(schema.parse::<Edn>().unwrap());
/// options.skip_tx_log = true;
/// let db = Database::open(dir.path(), options).unwrap();
/// db.transact(r#"[{:person/name "Ann"}]"#).unwrap();
/// assert!(!db.keeps_tx_log());
/// assert_eq!(db.env().durability(), Durability::NoSync);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DbOptions {
    /// Environment options (durability, map size).
    pub env: EnvOptions,
    /// Schema to install at open, Datalevin style: an EDN map from attribute to its
    /// properties, e.g. `{:person/name {:db/valueType :db.type/string}}` (cardinality one
    /// when not given). Attributes already installed with the same properties are left alone;
    /// a change goes through the same checks as a schema transaction.
    pub schema: Option<crate::edn::Edn>,
    /// The memory limit of each query on this database, in bytes of the rows it holds
    /// (estimated; see `query::budget`). `None`: a quarter of physical memory. A query's own
    /// `:memory-limit` or [`crate::query::QueryOptions::memory_limit`] takes precedence.
    pub query_memory_limit: Option<u64>,
    /// Do not keep each transaction's datoms for [`Database::tx_range`] (kept by default; the
    /// log costs about one more write of each transaction's datoms).
    pub skip_tx_log: bool,
    /// Leave the database in the legacy format, without the built-in entities and with
    /// keyword-valued schema properties, as versions before `store::bootstrap` wrote it (a
    /// new database is then made that way): for tests of the upgrade only.
    #[doc(hidden)]
    pub legacy_format: bool,
    /// Which datoms a database made by this open keeps in AVE ([`ValueIndex`]: every one, the
    /// default, or only those of `:db/index`, `:db/unique` and ref attributes, as Datomic).
    /// A database keeps the choice it was made with; on an existing one this is ignored.
    pub value_index: ValueIndex,
}

impl DbOptions {
    /// Options with the given durability.
    pub fn with_durability(d: crate::kv::Durability) -> Self {
        DbOptions {
            env: EnvOptions::with_durability(d),
            schema: None,
            query_memory_limit: None,
            skip_tx_log: false,
            legacy_format: false,
            value_index: ValueIndex::default(),
        }
    }
}

/// An open database. Cheap to clone; share it between threads.
#[derive(Clone)]
pub struct Database {
    env: Environment,
    store: Arc<Store>,
    functions: Arc<Functions>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({})", self.env.path().display())
    }
}

impl Database {
    /// Opens (creating if missing) the database in directory `path`. Two handles on one
    /// directory in one process are refused; clone the handle instead.
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
    /// db.transact(r#"[{:name "Ann"}]"#).unwrap();
    /// drop(db);
    ///
    /// // Reopened, the data is there; read-only, nothing can be written.
    /// let db = Database::open_read_only(dir.path(), DbOptions::default()).unwrap();
    /// let names = db.db().unwrap().q("[:find ?n :where [_ :name ?n]]", &[]).unwrap();
    /// assert_eq!(names.to_string(), r#"#{["Ann"]}"#);
    /// assert!(db.transact(r#"[{:name "Bob"}]"#).is_err());
    /// ```
    pub fn open(path: impl AsRef<Path>, options: DbOptions) -> Result<Database, TxError> {
        let env = Environment::open(path, with_index_rebuild(options.env))?;
        let mut tables = Tables::open(&env)?;
        if options.value_index != tables.value_index && is_new(&env, &tables)? {
            let choice = match options.value_index {
                ValueIndex::Declared => vec![KvOp::put(
                    &tables.meta,
                    value_index::META_KEY,
                    value_index::DECLARED,
                )],
                _ => vec![KvOp::delete(&tables.meta, value_index::META_KEY)],
            };
            env.transact_kv(choice)?;
            tables.value_index = options.value_index;
        }
        if options.skip_tx_log {
            tables.tx_log = None;
        }
        super::history_backfill::backfill_history(&env, &tables)?;
        let db = Self::on_tables(env, tables);
        db.write_builtins(!options.legacy_format)?;
        db.set_query_memory_limit(options.query_memory_limit);
        if let Some(schema) = &options.schema {
            db.install_schema_map(schema)?;
        }
        Ok(db)
    }

    /// Opens the existing database in directory `path` for reading only: nothing is created
    /// or written (see [`Environment::open_read_only`]); `options.schema` is not installed.
    /// Transactions fail.
    ///
    /// Another process may have the database open for writing meanwhile: every snapshot
    /// (`db()`) includes every transaction that process acknowledged before the snapshot
    /// began, read back from its write-ahead log when LMDB does not hold it yet.
    pub fn open_read_only(path: impl AsRef<Path>, options: DbOptions) -> Result<Database, TxError> {
        let db = Self::on_env(Environment::open_read_only(
            path,
            with_index_rebuild(options.env),
        )?)?;
        db.set_query_memory_limit(options.query_memory_limit);
        Ok(db)
    }

    /// Sets the memory limit of this database's queries in bytes (`None`: a quarter of
    /// physical memory), for every snapshot, from the next query on.
    pub fn set_query_memory_limit(&self, bytes: Option<u64>) {
        // 0 stands for "not set"; a limit of 0 bytes is as good as 1.
        self.functions
            .set_query_memory_limit(bytes.map(|b| b.max(1)));
    }

    /// Installs a Datalevin-style schema map (see [`DbOptions::schema`]); only attributes
    /// that are missing or differ are transacted.
    pub fn install_schema_map(&self, schema: &crate::edn::Edn) -> Result<(), TxError> {
        use crate::edn::Edn;
        let bad = |detail: &str| TxError::Malformed {
            detail: detail.to_string(),
            form: crate::edn::to_edn_string(schema),
        };
        let Edn::Map(attrs) = schema else {
            return Err(bad("a schema is a map from attribute to properties"));
        };
        let current = self.db()?.schema().clone();
        let mut items = Vec::new();
        for (k, props) in attrs {
            let Edn::Keyword(ident) = k else {
                return Err(bad("schema keys are attribute keywords"));
            };
            let Edn::Map(props) = props else {
                return Err(bad("attribute properties are a map"));
            };
            let mut entity = vec![(Edn::kw(":db/ident"), k.clone())];
            if !props.iter().any(|(p, _)| *p == Edn::kw(":db/cardinality")) {
                entity.push((Edn::kw(":db/cardinality"), Edn::kw(":db.cardinality/one")));
            }
            entity.extend(props.iter().cloned());
            // Already there with these properties? Then nothing to do.
            if let Some(existing) = current.by_ident(ident) {
                let same = props.iter().all(|(p, v)| match (p, v) {
                    (Edn::Keyword(p), Edn::Keyword(v)) => match p.to_string().as_str() {
                        ":db/valueType" => existing.value_type.ident() == v.to_string(),
                        ":db/cardinality" => {
                            (existing.is_many()) == (v.to_string() == ":db.cardinality/many")
                        }
                        ":db/unique" => match existing.unique {
                            Some(crate::store::Unique::Identity) => {
                                v.to_string() == ":db.unique/identity"
                            }
                            Some(crate::store::Unique::Value) => {
                                v.to_string() == ":db.unique/value"
                            }
                            None => false,
                        },
                        ":db.fulltext/stopWords" => existing
                            .fulltext
                            .is_some_and(|c| c.stop_words == stop_words_of(v.name())),
                        ":db.fulltext/stemmer" => existing.fulltext.is_some_and(|c| {
                            c.stemmer == crate::search::Language::from_name(v.name())
                        }),
                        _ => false,
                    },
                    (Edn::Keyword(p), Edn::Bool(b)) if p.to_string() == ":db/isComponent" => {
                        existing.is_component == *b
                    }
                    (Edn::Keyword(p), Edn::Bool(b)) if p.to_string() == ":db/noHistory" => {
                        existing.no_history == *b
                    }
                    (Edn::Keyword(p), Edn::Bool(b)) if p.to_string() == ":db/index" => {
                        existing.indexed == *b
                    }
                    (Edn::Keyword(p), Edn::Bool(b)) if p.to_string() == ":db/fulltext" => {
                        existing.fulltext.is_some() == *b
                    }
                    (Edn::Keyword(p), Edn::String(d)) if p.to_string() == ":db/doc" => {
                        existing.doc.as_deref() == Some(d.as_str())
                    }
                    _ => false,
                });
                if same {
                    continue;
                }
                entity[0] = (Edn::kw(":db/id"), k.clone());
                entity.push((Edn::kw(":db/ident"), k.clone()));
            }
            items.push(Edn::Map(entity));
        }
        if !items.is_empty() {
            self.transact(crate::tx::edn::tx_data_from_edn(&Edn::Vector(items))?)?;
        }
        Ok(())
    }

    /// A database on an already open environment (its KV tables can live beside). Opened
    /// for writing, the environment gets the built-in entities first (see
    /// [`crate::store::bootstrap`]).
    pub fn on_env(env: Environment) -> Result<Database, TxError> {
        let tables = Tables::open(&env)?;
        let db = Self::on_tables(env, tables);
        db.write_builtins(!db.env.is_read_only())?;
        Ok(db)
    }

    /// Loads the schema and, if `write`, brings the database to the built-ins' current
    /// format (`store::bootstrap`): writes the built-in attributes and ident entities into a
    /// new database, and into one made before they were stored also turns its keyword-valued
    /// schema properties into refs. Nothing is written when the format is current.
    fn write_builtins(&self, write: bool) -> Result<(), TxError> {
        {
            let snap = self.env.read()?;
            let r = crate::store::reader::IndexReader::new(snap.view(), &self.store.tables);
            self.store.schema_for(&r)?;
            if !write || crate::store::load::builtins_format(&r)? >= crate::store::bootstrap::FORMAT
            {
                return Ok(());
            }
        }
        let (request, handle) = crate::tx::bootstrap::BootstrapRequest::new(self.store.clone());
        self.env.submit_blocking(Box::new(request));
        handle.wait()?;
        Ok(())
    }

    fn on_tables(env: Environment, tables: Tables) -> Database {
        Database {
            env,
            store: Arc::new(Store::new(tables)),
            functions: Arc::default(),
        }
    }

    /// The transaction log, as Datomic's `tx-range`: each transaction with entity id
    /// `start <= tx < end` (a `None` bound is open), in order, with its instant and its
    /// datoms, streamed from one snapshot (held until the iterator is dropped). A damaged
    /// entry is a [`StoreError::CorruptTxLogEntry`](crate::store::StoreError) item.
    /// Transactions made while the log was not kept ([`DbOptions::skip_tx_log`]) and bulk
    /// loads are not in it; [`Database::keeps_tx_log`] says whether there is a log at all.
    /// The record format and how a replica tails it: `tx::log`.
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let schema = db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                               :db/cardinality :db.cardinality/one}]"#).unwrap();
    /// let ann = db.transact(r#"[{:name "Ann"}]"#).unwrap();
    ///
    /// let all: Vec<_> = db.tx_range(None, None).unwrap().map(|e| e.unwrap().tx).collect();
    /// assert_eq!(all, [schema.tx, ann.tx]);
    /// // From Ann's transaction on: its instant and its datoms.
    /// let entries: Vec<_> = db.tx_range(Some(ann.tx), None).unwrap().collect();
    /// let entry = entries[0].as_ref().unwrap();
    /// assert_eq!(entries.len(), 1);
    /// assert!(entry.instant.is_some());
    /// assert!(entry.datoms.iter().any(|d| d.v == datalith::Value::String("Ann".into())));
    /// ```
    pub fn tx_range(
        &self,
        start: Option<u64>,
        end: Option<u64>,
    ) -> Result<crate::tx::log::TxRange, TxError> {
        let txn = self.env.read()?;
        Ok(crate::tx::log::TxRange::new(
            txn,
            &self.store.tables,
            start,
            end,
        ))
    }

    /// Whether this database has a transaction log to read: false when it was opened with
    /// [`DbOptions::skip_tx_log`], or read-only on a file made before the log existed.
    pub fn keeps_tx_log(&self) -> bool {
        self.store.tables.tx_log.is_some()
    }

    /// The KV environment underneath.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// Which datoms this database keeps in AVE, as it was made ([`DbOptions::value_index`]).
    pub fn value_index(&self) -> ValueIndex {
        self.store.tables.value_index
    }

    /// A consistent snapshot for reading: an immutable [`Db`] value that later transactions
    /// do not change (Datomic's `db`). Hold it as long as needed; it pins the file's pages.
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                  :db/cardinality :db.cardinality/many}]"#).unwrap();
    /// db.transact(r#"[{:db/id "a" :name "Ann"}]"#).unwrap();
    /// let before = db.db().unwrap();
    /// db.transact(r#"[{:name "Bob"}]"#).unwrap();
    ///
    /// let count = "[:find (count ?n) . :where [_ :name ?n]]";
    /// assert_eq!(before.q(count, &[]).unwrap().to_string(), "1");
    /// assert_eq!(db.db().unwrap().q(count, &[]).unwrap().to_string(), "2");
    /// ```
    pub fn db(&self) -> Result<Db, TxError> {
        self.value_on(self.env.read()?)
    }

    /// The database value a read snapshot sees.
    fn value_on(&self, txn: crate::kv::ReadTxn) -> Result<Db, TxError> {
        Ok(Db::open(txn, self.store.clone(), self.functions.clone())?)
    }

    /// The value the data file holds ([`Environment::read_applied`]): like [`Database::db`],
    /// but without the acknowledged transactions that the background writer has not put into
    /// LMDB yet, so it may be a few transactions behind `db()`, and reading it never merges
    /// them or waits for them however many there are. For a reader that prefers a slightly
    /// older value to paying for a writer's backlog: a node applying a shared log answers
    /// reads that name no basis from it while it catches up. Its [`Db::basis_t`] says which
    /// value it is.
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
    /// db.transact(r#"[{:name "Ann"}]"#).unwrap();
    /// let applied = db.applied_db().unwrap();
    /// assert!(applied.basis_t().unwrap() <= db.db().unwrap().basis_t().unwrap());
    /// ```
    pub fn applied_db(&self) -> Result<Db, TxError> {
        self.value_on(self.env.read_applied()?)
    }

    /// Transacts and waits until the transaction is durable. `data` is tx data, EDN or EDN
    /// text ([`IntoTxData`]).
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
    /// let report = db.transact(r#"[{:db/id "ann" :name "Ann"}]"#).unwrap();
    /// let ann = report.tempid("ann").unwrap();
    /// assert_eq!(db.db().unwrap().pull("[:name]", ann).unwrap().to_string(), r#"{:name "Ann"}"#);
    /// ```
    pub fn transact<'a>(&self, data: impl IntoTxData<'a>) -> Result<TxReport, TxError> {
        let data = data.into_tx_data()?.into_owned();
        let (completion, handle) = CommitHandle::pair();
        let request = self.request(data, completion);
        // Commits on this thread when the committer is idle.
        self.env.submit_blocking(request);
        handle.wait()
    }

    /// Queues a transaction; the handle completes once it is durable, with this
    /// transaction's own report or error (other requests in the same group commit do not
    /// affect it). `data` as for [`Database::transact`]; text that is not tx data completes
    /// the handle with the error at once.
    ///
    /// ```
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let handle = db.transact_async(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                                     :db/cardinality :db.cardinality/one}]"#);
    /// handle.wait().unwrap();
    /// ```
    pub fn transact_async<'a>(&self, data: impl IntoTxData<'a>) -> CommitHandle<TxReport, TxError> {
        let (completion, handle) = CommitHandle::pair();
        match data.into_tx_data() {
            Ok(data) => self.submit(data.into_owned(), completion),
            Err(e) => completion.complete(Err(e)),
        }
        handle
    }

    /// Queues a transaction and calls `callback` (on the committer thread: keep it short)
    /// once it is durable or failed.
    pub fn transact_with_callback(
        &self,
        data: TxData,
        callback: impl FnOnce(Result<TxReport, TxError>) + Send + 'static,
    ) {
        self.submit(data, Completion::Callback(Box::new(callback)));
    }

    fn submit(&self, data: TxData, completion: Completion<TxReport, TxError>) {
        let request = self.request(data, completion);
        self.env.submit(request);
    }

    /// Queues a transaction as [`Database::transact_async`] does, with its `:db/txInstant`
    /// (when its data sets none) taken from `clock` instead of this machine's clock. With
    /// [`TxClock::AtLeast`], the instant is the given one or the last transaction's, whichever
    /// is later, decided against the state the transaction commits on: so a log of
    /// transactions from several machines, applied in the same order anywhere, gives every
    /// transaction the same instant everywhere.
    ///
    /// ```
    /// use datalith::{Database, DbOptions, TxClock};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let first = db.transact_async_clocked("[]", TxClock::AtLeast(2_000)).wait().unwrap();
    /// // An earlier clock does not take time back: the second gets the first's instant.
    /// let second = db.transact_async_clocked("[]", TxClock::AtLeast(1_000)).wait().unwrap();
    /// let instant = |tx: u64| {
    ///     let q = format!("[:find ?i . :where [{tx} :db/txInstant ?i]]");
    ///     db.db().unwrap().q(&q, &[]).unwrap().to_string()
    /// };
    /// assert_eq!(instant(first.tx), instant(second.tx));
    /// assert_eq!(instant(first.tx), r#"#inst "1970-01-01T00:00:02.000-00:00""#);
    /// ```
    pub fn transact_async_clocked<'a>(
        &self,
        data: impl IntoTxData<'a>,
        clock: crate::tx::TxClock,
    ) -> CommitHandle<TxReport, TxError> {
        let (completion, handle) = CommitHandle::pair();
        match data.into_tx_data() {
            Ok(data) => {
                let mut request = self.request(data.into_owned(), completion);
                request.clock = clock;
                self.env.submit(request);
            }
            Err(e) => completion.complete(Err(e)),
        }
        handle
    }

    fn request(&self, data: TxData, completion: Completion<TxReport, TxError>) -> Box<TxRequest> {
        let size = 256 + data.items.len() * 128;
        let expanded = {
            let functions = self.functions.tx();
            crate::tx::request::expand_early(&self.store.latest_schema(), &functions, &data)
        };
        Box::new(TxRequest {
            store: self.store.clone(),
            functions: self.functions.clone(),
            data,
            expanded,
            clock: crate::tx::TxClock::Local,
            size,
            result: None,
            completion: Some(completion),
            around: None,
            attached: None,
        })
    }

    /// Registers a transaction function, called by `[:db.fn/call name args...]` or
    /// `[name args...]` in tx data.
    pub fn register_tx_fn(
        &self,
        name: Keyword,
        f: impl Fn(&[Value]) -> Result<TxData, String> + Send + Sync + 'static,
    ) {
        self.functions.add_tx_fn(name, Arc::new(f));
    }
}

impl Database {
    /// Registers a query function or predicate callable as `[(name args...)]`.
    pub fn register_query_fn(
        &self,
        name: &str,
        f: impl Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        self.functions.add_query_fn(name, Arc::new(f));
    }

    /// Registers an aggregate callable in `:find` as `(name ?x)`.
    pub fn register_aggregate(
        &self,
        name: &str,
        f: impl Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        self.functions.add_aggregate(name, Arc::new(f));
    }
}

/// Datoms per transaction of a bulk load: the sorted entries go to LMDB in chunks of this
/// many, each chunk's keys past the previous chunk's, so that a load of millions of datoms
/// stages and dirties tens of MB at a time instead of gigabytes. A chunk this size is small
/// enough to be logged and left to the LMDB writer (`LATER_MAX_BATCH_BYTES`), so the committer
/// stages the next chunk while the writer applies the last one on the other core: W's bulk
/// load of 1M entities (2M datoms) took 1.40-1.52 s in chunks of 128K against 1.63-1.64 s in
/// chunks of 256K (each then written into LMDB by the committer) and 1.57 s in chunks of 32K
/// (two alternating rounds each, 2026-12-06).
const BULK_CHUNK_DATOMS: usize = 128 * 1024;

impl Database {
    /// Bulk-loads datoms `(entity id, attribute, value)` (Datalevin's `fill-db`): no tempids,
    /// upserts, cardinality or uniqueness checks, just attribute and type checks, then sorted
    /// writes straight into the indexes, durably, in transactions of 256K datoms (like
    /// Datalevin's `fill-db`, a failure leaves the chunks before it). Entity ids must lie in
    /// the user partition ([`crate::raw::USER_PARTITION_START`]`..`). Encoding and sorting run on
    /// the caller's thread (and, for large loads, on helper threads, one per core); keys past
    /// the end of an index (all of them when loading into an empty database) are appended
    /// without a search. Returns the number of datoms
    /// written (duplicates in `datoms` count once).
    pub fn fill_db(
        &self,
        datoms: &[(crate::store::EntityId, Keyword, Value)],
    ) -> Result<u64, TxError> {
        self.fill_db_in_chunks(datoms, BULK_CHUNK_DATOMS)
    }

    /// [`Database::fill_db`] with `chunk` datoms per transaction (Datalevin's
    /// `*fill-db-batch-size*`): fewer, larger transactions hold more memory at once.
    pub fn fill_db_in_chunks(
        &self,
        datoms: &[(crate::store::EntityId, Keyword, Value)],
        chunk: usize,
    ) -> Result<u64, TxError> {
        if datoms.is_empty() {
            return Ok(0);
        }
        let snap = self.db()?;
        let schema = snap.schema().clone();
        drop(snap);
        let mut prepared = crate::tx::bulk::prepare(&schema, datoms)?;
        let policy = self.store.tables.value_index;
        prepared.list_attributes(
            schema
                .attributes()
                .iter()
                .filter(|a| !policy.in_ave(a))
                .map(|a| a.id)
                .collect(),
        );
        let requests =
            crate::tx::bulk::FillRequest::chunks(&self.store.tables, prepared, chunk.max(1));
        let single = requests.len() == 1;
        let mut handles = Vec::with_capacity(requests.len());
        for (request, handle) in requests {
            if single {
                // Commits on this thread when the committer is idle (its caches hold the data).
                self.env.submit_blocking(Box::new(request));
            } else {
                self.env.submit(Box::new(request));
            }
            handles.push(handle);
        }
        let mut n = 0;
        for h in handles {
            n += h.wait()?;
        }
        Ok(n)
    }

    /// Creates (or opens) a database at `path`, installs `schema` (tx data) and bulk-loads
    /// `datoms` (Datalevin's `init-db`).
    pub fn init_db(
        path: impl AsRef<Path>,
        options: DbOptions,
        schema: TxData,
        datoms: &[(crate::store::EntityId, Keyword, Value)],
    ) -> Result<Database, TxError> {
        let db = Database::open(path, options)?;
        if !schema.items.is_empty() {
            db.transact(schema)?;
        }
        db.fill_db(datoms)?;
        Ok(db)
    }
}

/// `env` with the Datalog store's log derivation: log records hold each transaction's log
/// entry, not its index writes (a third of the bytes to sync), and whoever reads them back,
/// replay or another process's reader of the log's tail, rebuilds those from the entry.
/// Whether the database holds no datom yet (its built-ins are written after the tables open).
fn is_new(env: &Environment, tables: &Tables) -> Result<bool, TxError> {
    let snap = env.read()?;
    Ok(snap.view().len(&tables.eav)? == 0)
}

fn with_index_rebuild(mut env: crate::kv::EnvOptions) -> crate::kv::EnvOptions {
    env.log_derivation = Some(std::sync::Arc::new(crate::tx::index_rebuild::IndexRebuild));
    env
}

/// The stop words a `:db.fulltext/stopWords` keyword's name stands for (`store::schema`).
fn stop_words_of(name: &str) -> crate::search::StopWords {
    use crate::search::{Language, StopWords};
    match name {
        "classic" => StopWords::Classic,
        "none" => StopWords::None,
        other => Language::from_name(other).map_or(StopWords::None, StopWords::Language),
    }
}
