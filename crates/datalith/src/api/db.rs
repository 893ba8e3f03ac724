//! `Db`: a consistent, immutable view of the database (a database value, in Datomic's words).

use std::sync::Arc;

use crate::codec::Keyword;
use crate::edn::Edn;
use crate::kv::ReadTxn;
use crate::query::{QueryCache, QueryError, Registry, Step};
use crate::store::reader::IndexReader;
use crate::store::{Attribute, EntityId, Schema, Store};
use crate::tx::TxError;

/// A snapshot. Reads never block writers and see exactly one committed state.
pub struct Db {
    txn: ReadTxn,
    store: Arc<Store>,
    schema: Arc<Schema>,
    pub(crate) queries: Arc<QueryEnv>,
}

/// Query machinery shared by every snapshot of a database: the parse cache and registered
/// functions.
#[derive(Default)]
pub struct QueryEnv {
    /// Parsed queries.
    pub cache: QueryCache,
    /// User functions and aggregates.
    pub registry: std::sync::RwLock<Registry>,
}

impl Db {
    pub(crate) fn open(
        txn: ReadTxn,
        store: Arc<Store>,
        queries: Arc<QueryEnv>,
    ) -> Result<Db, TxError> {
        let schema = {
            let r = IndexReader::new(txn.view(), &store.tables);
            store.schema_for(&r)?
        };
        Ok(Db {
            txn,
            store,
            schema,
            queries,
        })
    }

    /// Index access.
    pub fn reader(&self) -> IndexReader<'_> {
        IndexReader::new(self.txn.view(), &self.store.tables)
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
    /// Runs a query (EDN text) with inputs for `:in` after the database.
    pub fn q(&self, query: &str, inputs: &[Edn]) -> Result<Edn, QueryError> {
        Ok(self.run_query(query, inputs, false, None)?.result)
    }

    /// Runs a query and returns its result with the executed plan (estimated and actual sizes).
    pub fn explain(&self, query: &str, inputs: &[Edn]) -> Result<(Edn, Vec<Step>), QueryError> {
        let o = self.run_query(query, inputs, true, None)?;
        Ok((o.result, o.steps))
    }

    /// Runs a query that stops with [`QueryError::Cancelled`] once `cancel` is set.
    pub fn q_cancellable(
        &self,
        query: &str,
        inputs: &[Edn],
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Edn, QueryError> {
        Ok(self.run_query(query, inputs, false, Some(cancel))?.result)
    }

    fn run_query(
        &self,
        query: &str,
        inputs: &[Edn],
        explain: bool,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<crate::query::run::Outcome, QueryError> {
        let sections = self.queries.cache.parse(query)?;
        let registry = self
            .queries
            .registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        crate::query::run::run(self, &sections, inputs, &registry, explain, cancel)
    }

    /// Pulls `pattern` (EDN text) for entity `e`.
    pub fn pull(&self, pattern: &str, e: EntityId) -> Result<Edn, QueryError> {
        let p = crate::edn::read_one(pattern).map_err(|x| QueryError::Parse(x.to_string()))?;
        crate::pull::pull(self, &crate::pull::parse_pattern(&p)?, e)
    }

    /// Pulls `pattern` for several entities.
    pub fn pull_many(&self, pattern: &str, es: &[EntityId]) -> Result<Vec<Edn>, QueryError> {
        let p = crate::edn::read_one(pattern).map_err(|x| QueryError::Parse(x.to_string()))?;
        crate::pull::pull_many(self, &crate::pull::parse_pattern(&p)?, es)
    }
}

impl Db {
    /// Runs a transaction against this snapshot without writing anything (Datomic's `with`,
    /// as a dry run): the report has the datoms it would assert and retract and how its
    /// tempids would resolve, or the error it would fail with. Transaction functions are not
    /// available here.
    pub fn with(&self, data: &crate::tx::TxData) -> Result<crate::tx::TxReport, TxError> {
        let r = self.reader();
        let none = |_: &Keyword, _: &[crate::codec::Value]| None;
        let out = crate::tx::run::run_tx(
            r,
            &self.schema,
            data,
            &none,
            crate::tx::run::now_ms(),
            None,
            None,
        )?;
        let mut tempids = out.tempids;
        tempids.retain(|t, _| {
            !matches!(
                t,
                crate::tx::Tempid::Anonymous(_) | crate::tx::Tempid::CurrentTx
            )
        });
        Ok(crate::tx::TxReport {
            tx: out.tx,
            tx_data: out.datoms.into_iter().map(|(d, _)| d).collect(),
            tempids: tempids.into_iter().collect(),
        })
    }
}
