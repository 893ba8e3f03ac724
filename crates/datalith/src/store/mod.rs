//! The Datalog store: schema and datoms in the EAV and AVE indexes, and statistics.
//!
//! - `ids`: entity and attribute ids and their partitions.
//! - [`keys`]: byte layouts of index entries.
//! - [`schema`] / [`load`]: attributes, built-ins, loading the schema from datoms.
//! - [`bootstrap`]: the built-in entities every database stores (attributes and idents).
//! - [`tables`]: the store's KV tables, counters and statistics records.
//! - [`reader`]: reading datoms out of the indexes; [`listed`]: the reads of an attribute
//!   without AVE entries.
//! - [`range_estimate`]: how many datoms of an attribute lie in a value range, counted up to
//!   a cap and interpolated past it (the planner's estimate of a range step).
//! - [`history`]: the history index (every assertion and retraction, by entity, in time
//!   order) and the time filters of `as-of`, `since` and `history`.
//! - [`shared`]: the long-lived state of an open store.
//! - [`value_index`]: which datoms have an AVE entry (every one, or those of declared
//!   attributes), and the `attr_entities` table that lists the others' entities.
//! - [`sketch`]: the estimated distinct values of an attribute without AVE entries.
//!
//! # Tables and ids (moved from ARCHITECTURE.md)
//!
//! | table | kind | key | value(s) |
//! |---|---|---|---|
//! | `eav` | list | entity id (u64 BE) | attribute id (u32 BE) ++ encoded value, sorted |
//! | `ave` | fixed-width list (8) | attribute id (u32 BE) ++ encoded value | entity ids (u64 BE), sorted |
//! | `store_meta` | plain | `next_entity`, `next_attr`, `next_tx`, `schema_version`, `builtins_format` (u64 BE); `stats/` ++ attr id; `sketch/` ++ attr id | counters; `AttrStats` (datoms, distinct values: 2 x u64 BE); a listed attribute's value sketch (64 bytes, [`sketch`]) |
//! | `giants` | plain | attribute id ++ 16-byte BLAKE3 hash | the full encoding of a value too long to index inline |
//! | `attr_entities` | fixed-width list (8) | attribute id (u32 BE) | entity ids (u64 BE) that held a value of it, for attributes without AVE entries |
//!
//! By default every attribute is in both indexes, so no `:db/index` is needed; a database
//! made with `ValueIndex::Declared` keeps AVE entries only for `:db/index`, `:db/unique`,
//! ref and built-in attributes, and lists the others' entities in `attr_entities`
//! ([`value_index`]). AVE on a ref attribute answers reverse navigation, so there is no VAE. An encoding longer than 491 bytes is indexed
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
//! 100), user entities from 2^20, transaction entities from 2^44. The `Schema` is loaded from
//! the attribute partition and cached by version (`Store::schema_for`).
//!
//! # Schema as data
//!
//! As in Datomic, every attribute and every ident is an entity whose properties are ordinary
//! datoms, so schema is queryable data: `:db/valueType`, `:db/cardinality` and `:db/unique`
//! are ref attributes whose values are *ident entities* (`:db.type/string`,
//! `:db.cardinality/one`, `:db.unique/identity`, ...; ids 40..63), and the built-in attributes
//! (`:db/ident` ... `:db/index`, ids 1..13) are entities with their own `:db/ident`,
//! `:db/valueType`, `:db/cardinality`, `:db/unique` and `:db/doc`. A transaction still writes
//! `:db/valueType :db.type/string`: a keyword in a ref position names the entity with that
//! ident (Datomic's rule; for these three properties it is looked up in code, and a keyword
//! that names none of the property's values is refused naming it).
//!
//! **Decided: the built-in entities are stored, not synthesized by the reader.** They are in
//! EAV, AVE and the history index, with their statistics, so every reader sees them with no
//! special case: patterns with any bound positions, reverse refs (`:db/_valueType`), pull,
//! `Db::entity`, values in time, the planner's statistics, raw index reads, another process's
//! read-only snapshot. A reader that synthesized them would have to merge them into every
//! index scan, history walk and statistic, and any code that reads the tables directly would
//! miss them. They cost ~70 datoms a database. Their definition stays in code
//! (`schema::builtin_attrs`, `bootstrap`): the `Schema` takes the built-in attributes from
//! there, never from the store, so the stored copy can only be read, and transactions that
//! touch entities 1..99 are refused.
//!
//! They are written when a database is first opened for writing (`tx::bootstrap`, one
//! commit). In a new database that is its *genesis*: around the transaction log, with no
//! transaction of their own, stamped with the empty database's basis (`TX_PARTITION_START -
//! 1`), so they belong to every state in time (`as_of` any point shows them, `since` none)
//! and the first user transaction keeps the first id; `check` replays the log over them
//! (`api::check_log`) and counts their history events apart (`api::check_history`), and a
//! history backfill starts from them. `dump` leaves them out and names refs to them by ident.
//!
//! A database made before (the *legacy* format: no `builtins_format` key, keyword-valued
//! properties, no built-in entities) still loads, read-only, with `Schema::legacy`, whose
//! three properties are keyword attributes, so it answers as it did. Opened for writing it is
//! upgraded first by one logged transaction (its own id and `:db/txInstant`): the built-in
//! datoms asserted, each keyword property datom retracted for its ref; the format is recorded
//! and the schema version bumped (so that readers in other processes load the new schema) in
//! the same commit. The log, the history and time views tell the change as it happened.

pub mod bootstrap;
pub mod datom;
pub mod error;
pub mod history;
pub(crate) mod ids;
pub mod keys;
pub mod listed;
pub mod load;
pub mod range_estimate;
pub mod reader;
pub mod schema;
pub mod shared;
pub mod sketch;
pub mod tables;
pub mod value_index;

pub use datom::Datom;
pub use error::StoreError;
pub use history::TimeFilter;
pub use ids::{AttrId, EntityId};
pub use reader::{EntityCursor, IndexReader};
pub use schema::{Attribute, Cardinality, Schema, Unique};
pub use shared::Store;
pub use tables::{AttrStats, Tables};
pub use value_index::ValueIndex;
