//! The Datalog store: schema and datoms in the EAV and AVE indexes, and statistics.
//!
//! - `ids`: entity and attribute ids and their partitions.
//! - [`keys`]: byte layouts of index entries.
//! - [`schema`] / [`load`]: attributes, built-ins, loading the schema from datoms.
//! - [`tables`]: the store's KV tables, counters and statistics records.
//! - [`reader`]: reading datoms out of the indexes.
//! - [`history`]: the history index (every assertion and retraction, by entity, in time
//!   order) and the time filters of `as-of`, `since` and `history`.
//! - [`shared`]: the long-lived state of an open store.
//!
//! # Tables and ids (moved from ARCHITECTURE.md)
//!
//! | table | kind | key | value(s) |
//! |---|---|---|---|
//! | `eav` | list | entity id (u64 BE) | attribute id (u32 BE) ++ encoded value, sorted |
//! | `ave` | fixed-width list (8) | attribute id (u32 BE) ++ encoded value | entity ids (u64 BE), sorted |
//! | `store_meta` | plain | `next_entity`, `next_attr`, `next_tx`, `schema_version` (u64 BE); `stats/` ++ attr id | counters; `AttrStats` (datoms, distinct values: 2 x u64 BE) |
//! | `giants` | plain | attribute id ++ 16-byte BLAKE3 hash | the full encoding of a value too long to index inline |
//!
//! Every attribute is in both indexes, so no `:db/index` is needed; AVE on a ref attribute
//! answers reverse navigation, so there is no VAE. An encoding longer than 491 bytes is indexed
//! by its first 491 bytes plus a 16-byte hash (507 bytes: with the attribute id exactly LMDB's
//! 511-byte key limit) and its full encoding kept in `giants` (see `codec/LAYOUT.md`); equal
//! values get equal keys, reads check the stored bytes against prefix and hash, a hash collision
//! is refused on write, and the record is deleted with the value's last holder. Giants sharing
//! their first 491 bytes order by hash, so a range bound that falls inside such a group is
//! approximate (predicates still filter every row).
//!
//! Raw index access (`IndexReader`, public): `entities_with` (an AVE list, a page of ids at a
//! time), `values` of one entity, `entity_cursor()` (an `EntityCursor`: many EAV lookups through
//! one kept LMDB cursor, page-local when entities ascend) and `values_of_each(entities, a)` (the
//! values of `a` on many entities: one AVE scan of `a` when the entities number at least 1/12 of
//! its datoms (`limits::VALUES_SCAN_SHARE`) and their ids are compact, else cursor lookups).
//!
//! Entity ids are partitioned: attributes below 2^20 (built-ins are 1..99, user attributes from
//! 100), user entities from 2^20, transaction entities from 2^44. An attribute is an entity whose
//! properties are ordinary datoms (`:db/ident`, `:db/valueType`, ...), so schema is queryable
//! data; the built-in attributes are fixed in code and never stored. The `Schema` is loaded from
//! the attribute partition and cached by version (`Store::schema_for`).

pub mod bootstrap;
pub mod datom;
pub mod error;
pub mod history;
pub(crate) mod ids;
pub mod keys;
pub mod load;
pub mod reader;
pub mod schema;
pub mod shared;
pub mod tables;

pub use datom::Datom;
pub use error::StoreError;
pub use history::TimeFilter;
pub use ids::{AttrId, EntityId};
pub use reader::{EntityCursor, IndexReader};
pub use schema::{Attribute, Cardinality, Schema, Unique};
pub use shared::Store;
pub use tables::{AttrStats, Tables};
