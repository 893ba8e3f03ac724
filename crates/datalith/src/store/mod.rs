//! The Datalog store: schema and datoms in the EAV and AVE indexes, and statistics.
//!
//! - [`ids`]: entity and attribute ids and their partitions.
//! - [`keys`]: byte layouts of index entries.
//! - [`schema`] / [`load`]: attributes, built-ins, loading the schema from datoms.
//! - [`tables`]: the store's KV tables, counters and statistics records.
//! - [`reader`]: reading datoms out of the indexes.
//! - [`shared`]: the long-lived state of an open store.

pub mod datom;
pub mod error;
pub mod ids;
pub mod keys;
pub mod load;
pub mod reader;
pub mod schema;
pub mod shared;
pub mod tables;

pub use datom::Datom;
pub use error::StoreError;
pub use ids::{AttrId, EntityId};
pub use reader::{EntityCursor, IndexReader};
pub use schema::{Attribute, Cardinality, Schema, Unique};
pub use shared::Store;
pub use tables::{AttrStats, Tables};
