//! The query and pull entry points of a database value ([`Db`], defined in `crate::db`).
//!
//! Parsed queries and pull patterns are cached by text for the whole process: parsing reads
//! no schema, so an entry is right for every database, and each cache is bounded.

use std::sync::LazyLock;

use super::input::whole;
use crate::db::Db;
use crate::edn::Edn;
use crate::pull::{Eid, PullCache};
use crate::query::run::InputRef;
use crate::query::{
    Answer, ItemSink, Plan, PreparedQuery, QueryCache, QueryError, QueryOptions, Want,
};
use crate::store::EntityId;

/// Parsed queries, by text, for every database of the process.
pub(crate) static QUERIES: LazyLock<QueryCache> = LazyLock::new(QueryCache::default);

/// Parsed pull patterns, by text, for every database of the process.
pub(crate) static PULLS: LazyLock<PullCache> = LazyLock::new(PullCache::default);

impl Db {
    /// Runs a query (EDN text) on this database and `inputs`: the database is the first
    /// `:in` input when that is `$` (or a named source, such as `$db`, with no input of its
    /// own), else `$` is this database implicitly; `inputs` are the values for the other
    /// `:in` forms, in order. For several databases, or databases among the other inputs,
    /// see [`crate::q`]. A shorthand for [`Db::q_with`] with default options.
    ///
    /// ```
    /// use datalith::edn::read_one;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
    /// db.transact(tx(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                     :db/cardinality :db.cardinality/one :db/index true}]"#)).unwrap();
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

    /// Runs a query and returns its result with its [`Plan`]: the clauses as written, the
    /// steps in the order the engine chose them (the index each read, estimated and actual
    /// rows), the result's size. A shorthand for [`Db::q_with`] with [`QueryOptions::explain`].
    ///
    /// ```
    /// use datalith::edn::read_one;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
    /// db.transact(tx(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                     :db/cardinality :db.cardinality/one :db/index true}]"#)).unwrap();
    /// db.transact(tx(r#"[{:name "Ann"} {:name "Bob"}]"#)).unwrap();
    /// let (result, plan) = db.db().unwrap()
    ///     .explain(r#"[:find ?e :where [?e :name "Ann"]]"#, &[])
    ///     .unwrap();
    /// assert_eq!(plan.rows, 1);
    /// assert_eq!(plan.steps[0].what, r#"[?e :name "Ann"]"#);
    /// assert_eq!(plan.steps[0].clauses, [0]); // the first clause as written
    /// assert_eq!(plan.steps[0].index, datalith::query::PlanIndex::Ave);
    /// assert_eq!(plan.clauses[0].position.unwrap().to_string(), "line 1, column 18");
    /// println!("{plan}");
    /// # let _ = result;
    /// ```
    pub fn explain(&self, query: &str, inputs: &[Edn]) -> Result<(Edn, Plan), QueryError> {
        let o = self.q_with(query, inputs, &QueryOptions::default().explain(true))?;
        let plan = o.plan.expect("asked for");
        Ok((o.result, plan))
    }

    /// Runs a query that stops with [`QueryError::Cancelled`] once `cancel` is set (a
    /// shorthand for [`Db::q_with`] with [`QueryOptions::cancel`]).
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

    /// Reads and splits a query once (through the process's cache of query texts), for
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
        Ok(PreparedQuery::new(QUERIES.parse(query)?))
    }

    /// Runs a query prepared by [`Db::prepare`] (see [`Db::q_with`] for inputs and options).
    pub fn q_prepared(
        &self,
        prepared: &PreparedQuery,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
    ) -> Result<crate::query::run::Outcome, QueryError> {
        whole(self.answer(prepared, inputs, options, Want::Whole)?).into_outcome()
    }

    /// [`Db::q_with`], answering a large result a row at a time: when the result is a
    /// collection of the engine's rows (`:find ?a ?b` or `:find [?a ...]`, pulls included;
    /// no aggregate, `:order-by`, `:limit`, `:offset` or `:keys`, no plan asked for), the
    /// answer is those rows ([`ResultRows`]), each made into EDN (and pulled) only when it is
    /// taken, so the result is never held twice; otherwise the whole result.
    ///
    /// ```
    /// use datalith::edn::{read_one, Edn};
    /// use datalith::query::{Answer, QueryOptions};
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let snapshot = db.db().unwrap();
    /// let query = "[:find ?x ?y :in [[?x ?y]]]";
    /// let input = read_one("[[1 2] [3 4]]").unwrap();
    /// let Answer::Rows(rows) = snapshot.q_rows(query, &[input], &QueryOptions::default()).unwrap()
    /// else { unreachable!("a set of tuples comes as rows") };
    /// assert!(rows.is_set());
    /// let items: Vec<Edn> = rows.map(Result::unwrap).collect();
    /// assert_eq!(Edn::Set(items), read_one("#{[1 2] [3 4]}").unwrap());
    /// ```
    pub fn q_rows(
        &self,
        query: &str,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
    ) -> Result<Answer, QueryError> {
        self.answer(&self.prepare(query)?, inputs, options, Want::Rows)
            .map(whole)
    }

    /// [`Db::q_with`], handing a collection result's items to `sink` as they are made: for
    /// the results [`Db::q_rows`] answers as rows, and when the plan's first step scans an
    /// attribute (`[?e :a ?v]` or `[_ :a ?v]`, the value or a cardinality-one entity kept)
    /// or looks up one value's entities (`[?e :a v]`, the entity kept), the engine reads that
    /// step a part at a time (`limits::QUERY_PART_ROWS` datoms or entities) and
    /// runs the rest of the plan on each part before the next, so the answer's memory is a
    /// part's, not the result's. Items come in the engine's order (for a set, not necessarily
    /// [`Db::q`]'s). Returns `None` once the items were handed on, or the whole result of
    /// any other query (the sink then sees nothing).
    ///
    /// ```
    /// use datalith::edn::{read_one, Edn};
    /// use datalith::query::{ItemSink, QueryError, QueryOptions};
    /// use datalith::{Database, DbOptions};
    ///
    /// struct Lines(Vec<String>);
    /// impl ItemSink for Lines {
    ///     fn begin(&mut self, _set: bool) -> Result<(), QueryError> {
    ///         Ok(())
    ///     }
    ///     fn item(&mut self, item: &Edn) -> Result<(), QueryError> {
    ///         self.0.push(item.to_string());
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact("[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]")
    ///     .unwrap();
    /// db.transact("[{:n 1} {:n 2} {:n 3}]").unwrap();
    /// let mut lines = Lines(Vec::new());
    /// let whole = db.db().unwrap()
    ///     .q_each("[:find ?n :where [_ :n ?n]]", &[], &QueryOptions::default(), &mut lines)
    ///     .unwrap();
    /// assert!(whole.is_none());
    /// assert_eq!(lines.0, ["[1]", "[2]", "[3]"]);
    /// ```
    pub fn q_each(
        &self,
        query: &str,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
        sink: &mut dyn ItemSink,
    ) -> Result<Option<crate::query::run::Outcome>, QueryError> {
        self.answer(&self.prepare(query)?, inputs, options, Want::Each(sink))?
            .map(Answer::into_outcome)
            .transpose()
    }

    fn answer(
        &self,
        prepared: &PreparedQuery,
        inputs: &[Edn],
        options: &QueryOptions<'_>,
        want: Want<'_>,
    ) -> Result<Option<Answer>, QueryError> {
        let ast = prepared.ast();
        let registry = self.functions.query();
        // The receiver is the first `:in` input, or `$` when `:in` does not name it.
        let first = crate::query::lower::receiver_is_first_input(ast, inputs.len());
        let all: Vec<InputRef<'_>> = first
            .then_some(InputRef::Db(self))
            .into_iter()
            .chain(inputs.iter().map(InputRef::Value))
            .collect();
        let implicit = (!first).then_some(self);
        let options = QueryOptions {
            memory_limit: options.memory_limit.or(self.functions.query_memory_limit()),
            ..*options
        };
        crate::query::run::answer(ast, &all, implicit, &registry, &options, want)
    }

    /// Pulls `pattern` (EDN text) for the entity `e` names: an entity id, an ident or a
    /// lookup ref ([`Eid`]). Nil when an ident or lookup ref names no entity (Datomic's
    /// answer); an error for a lookup ref on an attribute that is not unique. The pattern is
    /// parsed once and cached by its text for the process, like a query.
    ///
    /// ```
    /// use datalith::codec::{Keyword, Value};
    /// use datalith::edn::read_one;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
    /// db.transact(tx(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                     :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
    ///                    {:db/ident :age :db/valueType :db.type/long
    ///                     :db/cardinality :db.cardinality/one}]"#)).unwrap();
    /// db.transact(tx(r#"[{:name "Ann" :age 30}]"#)).unwrap();
    /// let snapshot = db.db().unwrap();
    /// let ann = (Keyword::parse(":name"), Value::String("Ann".into()));
    /// let pulled = snapshot.pull("[:name :age]", ann).unwrap();
    /// assert_eq!(pulled, read_one(r#"{:name "Ann" :age 30}"#).unwrap());
    /// ```
    pub fn pull(&self, pattern: &str, e: impl Into<Eid>) -> Result<Edn, QueryError> {
        let p = PULLS.parse(pattern)?;
        // Before the entity is looked up: one that the history names nothing still fails.
        crate::pull::refuse_history(self)?;
        match e.into().resolve(self)? {
            Some(e) => crate::pull::pull(self, &p, e),
            None => Ok(crate::pull::pull_nothing(&p)),
        }
    }

    /// Pulls `pattern` for several entities (nil for each that names none).
    pub fn pull_many<E: Into<Eid> + Clone>(
        &self,
        pattern: &str,
        es: &[E],
    ) -> Result<Vec<Edn>, QueryError> {
        let p = PULLS.parse(pattern)?;
        crate::pull::refuse_history(self)?;
        es.iter()
            .map(|e| match e.clone().into().resolve(self)? {
                Some(e) => crate::pull::pull(self, &p, e),
                None => Ok(crate::pull::pull_nothing(&p)),
            })
            .collect()
    }

    /// The entity id `e` names (Datomic's `entid`): `None` for an ident or lookup ref that
    /// names none.
    pub fn entid(&self, e: impl Into<Eid>) -> Result<Option<EntityId>, QueryError> {
        e.into().resolve(self)
    }

    /// The basis of this value (Datomic's `basis-t`): the entity id of the last transaction
    /// it includes, one below [`TX_PARTITION_START`](crate::raw::TX_PARTITION_START) before
    /// the first. Transaction ids grow with every commit, so a larger basis is a later state;
    /// a server names the value it answered from by it.
    pub fn basis_t(&self) -> Result<EntityId, crate::store::StoreError> {
        let r = self.reader();
        let next = crate::store::tables::read_counter(
            r.view,
            &r.t.meta,
            crate::store::tables::meta_key::NEXT_TX,
            crate::store::ids::TX_PARTITION_START,
        )?;
        Ok(next - 1)
    }
}
