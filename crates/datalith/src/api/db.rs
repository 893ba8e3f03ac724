//! `Db`: a consistent, immutable view of the database (a database value, in Datomic's words).

use std::sync::Arc;

use crate::codec::Keyword;
use crate::kv::ReadTxn;
use crate::store::reader::IndexReader;
use crate::store::{Attribute, EntityId, Schema, Store};
use crate::tx::TxError;

/// A snapshot. Reads never block writers and see exactly one committed state.
pub struct Db {
    txn: ReadTxn,
    store: Arc<Store>,
    schema: Arc<Schema>,
}

impl Db {
    pub(crate) fn open(txn: ReadTxn, store: Arc<Store>) -> Result<Db, TxError> {
        let schema = {
            let r = IndexReader::new(txn.view(), &store.tables);
            store.schema_for(&r)?
        };
        Ok(Db { txn, store, schema })
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
