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
    /// The newest schema seen, by version. Versions only grow, and a version number always
    /// names the same schema (a batch redone after a map growth recomputes it identically),
    /// so a cached schema is valid for any state that records its version.
    schema: Mutex<Arc<Schema>>,
}

impl Store {
    /// A store over `tables`.
    pub fn new(tables: Tables) -> Self {
        Store {
            tables,
            schema: Mutex::new(Arc::new(Schema::default())),
        }
    }

    /// The schema of the state `r` reads.
    pub fn schema_for(&self, r: &IndexReader<'_>) -> Result<Arc<Schema>, StoreError> {
        let version = schema_version(r)?;
        {
            let cached = self.schema.lock().unwrap_or_else(|p| p.into_inner());
            if cached.version == version {
                return Ok(cached.clone());
            }
        }
        let loaded = Arc::new(load_schema(r)?);
        let mut cached = self.schema.lock().unwrap_or_else(|p| p.into_inner());
        if loaded.version > cached.version {
            *cached = loaded.clone();
        }
        Ok(loaded)
    }

    /// The newest schema seen (a cheap guess at the schema a queued transaction will meet).
    pub fn latest_schema(&self) -> Arc<Schema> {
        self.schema
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records a schema a transaction produced.
    pub fn publish_schema(&self, schema: Arc<Schema>) {
        let mut cached = self.schema.lock().unwrap_or_else(|p| p.into_inner());
        if schema.version > cached.version {
            *cached = schema;
        }
    }
}
