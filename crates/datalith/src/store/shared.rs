//! What every handle of one open store shares: its tables and the schema cache.

use std::sync::{Arc, Mutex};

use super::error::StoreError;
use super::load::{load_schema, schema_version};
use super::reader::IndexReader;
use super::schema::Schema;
use super::tables::Tables;

/// The store's long-lived state.
#[derive(Debug)]
pub struct Store {
    /// The tables.
    pub tables: Tables,
    /// The newest schema seen, by version (none before the first read). Versions only grow,
    /// and a version number always names the same schema (a batch redone after a map growth
    /// recomputes it identically; version 0 is always the built-ins alone, in the format of a
    /// state not yet given the built-in entities, see `bootstrap`), so a cached schema is
    /// valid for any state that records its version.
    schema: Mutex<Option<Arc<Schema>>>,
}

impl Store {
    /// A store over `tables`.
    pub fn new(tables: Tables) -> Self {
        Store {
            tables,
            schema: Mutex::new(None),
        }
    }

    /// The schema of the state `r` reads.
    pub fn schema_for(&self, r: &IndexReader<'_>) -> Result<Arc<Schema>, StoreError> {
        let version = schema_version(r)?;
        {
            let cached = self.schema.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(cached) = cached.as_ref().filter(|c| c.version == version) {
                return Ok(cached.clone());
            }
        }
        let loaded = Arc::new(load_schema(r)?);
        self.publish_schema(loaded.clone());
        Ok(loaded)
    }

    /// The newest schema seen (a cheap guess at the schema a queued transaction will meet).
    pub fn latest_schema(&self) -> Arc<Schema> {
        self.schema
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default()
    }

    /// Records a schema a transaction produced (or a read loaded).
    pub fn publish_schema(&self, schema: Arc<Schema>) {
        let mut cached = self.schema.lock().unwrap_or_else(|p| p.into_inner());
        if cached.as_ref().is_none_or(|c| schema.version > c.version) {
            *cached = Some(schema);
        }
    }
}
