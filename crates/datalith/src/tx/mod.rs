//! Transactions, as a pipeline of typed stages:
//!
//! 1. [`data`]: tx data as written (maps, list forms, tempids, lookup refs, idents);
//! 2. `terms`: terms with tempids (maps flattened, attributes and value types checked);
//! 3. `resolve`: terms with ids (lookup refs, idents, upserts, fresh ids);
//! 4. `datoms`: the net datoms, computed on an in-memory overlay;
//! 5. `write`: index writes and statistics, staged for the committer.
//!
//! `run` strings stages 2-4 together; `request` is the committer's unit of work.
//!
//! # The pipeline in detail (moved from ARCHITECTURE.md)
//!
//! A pipeline of typed stages: `data` (tx data as written: maps, list forms, tempids, lookup refs,
//! idents; `tx::edn` reads it from EDN) -> `terms` (maps flattened, attributes looked up, value
//! types checked; callers run this stage before queueing when they can) -> `resolve` (lookup
//! refs and idents looked up, tempids upserted through `:db.unique/identity` with a union-find
//! so two tempids with one identity value become one entity, fresh ids allocated) -> `datoms`
//! (an in-memory overlay: cardinality one retracts the old value, redundant assertions vanish,
//! uniqueness and `:db/cas` are checked (a unique value another entity holds is refused only
//! if that entity still holds it once every term is applied: two entities may swap or move
//! values in one transaction, as in Datomic), `:db/retractEntity` expands to the entity's datoms,
//! its components and references to it; each term is resolved as the builder applies it, and
//! the result is `NetDatoms`, the datoms and their encoded values as two vectors that become the
//! report's tx data and spent bytes as they are) -> `write` (EAV and AVE list adds/removes,
//! statistics deltas; all EAV ops before the AVE ops, which go attribute by attribute, so the
//! stage's sort finds new entities' EAV ops as one run and each attribute's AVE ops together).
//! The datom builder starts on an append-only path (`datoms::Lazy`): while every term asserts an
//! attribute of an entity the transaction created (unique ones only with an identity value the
//! resolver found no holder of, and no other entity of the transaction asserts), each entity's
//! terms in one run and no attribute twice in a run, nothing can conflict, retract or repeat, so
//! entries are only appended, with no map insert per datom; the first term off that path indexes
//! the entries appended so far and the general path takes over with the same result (tables in
//! `tests/tx_semantics.rs`, a model property test in `tests/tx_model.rs`). The resolver likewise
//! skips its union-find when no identity value was shared or found (each tempid its own, new),
//! and compares a term's tempid with the previous term's before hashing it.
//!
//! EDN tx data is read by position, as Datomic reads it (`terms`; answers checked against the
//! real Datomic in `tests/tx_semantics.rs`): a vector in a single-value position (a
//! cardinality-one ref, a reverse attribute, an operation's value) is a lookup ref, or a tuple
//! for a tuple attribute; a collection given to a cardinality-many attribute in a map is always
//! several values. A reverse attribute's value is in entity position: one entity, a vector one
//! lookup ref (`NotAnAttribute`, `NotAKeyword`, `InvalidLookupRef` when it is not one), a map
//! none (`UnresolvableEntity`). `:db/cas` compares a ref's old value as given (only an entity id
//! can match; a lookup ref or ident is not resolved). Tuple values are checked against
//! `:db/tupleTypes`/`:db/tupleType` (`InvalidTupleValue`), and a new attribute needs
//! `:db/valueType` and `:db/cardinality` (`InvalidInstallAttribute`). Nested maps under a non-component ref need `:db/id` or an identity
//! attribute (`InvalidNestedEntity`), and an operation's value is never a map
//! (`UnresolvableEntity`); a tempid used only as a value is refused (`TempidOnlyValue`)
//! after the terms are applied (Datomic reports a failed `:db/cas` or a missing lookup ref
//! first, conflicting datoms after it); `:db/retractEntity` of a lookup ref or ident naming nothing is a no-op
//! (`Resolved::Nothing`), and so is one of a negative number (Datomic reads it as an entity
//! id, which none has); a string tempid where an existing entity is read (`:db/retractEntity`,
//! `:db/cas`, `:db/retract` without a value) is refused (`RetractEntityTempid`,
//! `TempidNamesNothing`). The datom builder marks each datom a term asserted or retracted:
//! one datom both asserted and retracted is `DatomConflictAssertRetract` (Datomic's
//! datoms-conflict). Retractions are read against the database before the transaction (a
//! `[:db/retract e a]` leaves values the transaction added; `:db/retractEntity` conflicts with a
//! re-assertion of a datom the database held), except that `:db/retractEntity` also retracts
//! what the transaction asserted on the entity before it. Error messages print forms and values
//! as EDN (`tx::print`). `schema_change` refuses changes existing data forbids. `request` wraps the pipeline
//! as the committer's `WriteRequest`: each request keeps its own report or error inside a shared
//! commit.
//!
//! The committer is the serial part: every queued transaction waits on it, while callers
//! usually have a core to spare. So callers expand their tx data into terms before queueing
//! (`expand_early`; the committer reuses the terms unless the schema moved meanwhile), and a
//! committed transaction's tx data and index bytes travel back inside its report
//! (`report::Spent`, never cloned) to be freed on the caller's thread, not the committer's; a
//! callback runs on the committer, so for it they go to a bounded bin that the next caller to
//! queue a transaction empties (`report::bin_put`, `bin_empty`).
//! Where a transaction reads many keys it reads them in key order: identity values in `resolve`
//! (`first_holders`) are sorted and looked up by seeks, one seek clearing every absent key before
//! the entry it lands on. The exact distinct-value statistics cost the committer no lookup:
//! `write` stages AVE writes as tallied ops (tally = attribute id), and whenever the stage is
//! applied to LMDB (by the committer's own commit, by the applier after the group was logged,
//! or by recovery replaying the log) LMDB itself says whether an insert created its key
//! (`MDB_NOOVERWRITE` first; a present key is inserted again from the page the first search
//! found) and whether a removal emptied it, and the KV layer adds that to the attribute's
//! counter in the same LMDB transaction (`kv::tally`). An attribute's distinct count is its
//! statistics record's `distinct` (what bulk loads and older versions counted) plus that
//! counter; a snapshot's counter misses what its overlay holds (groups LMDB does not hold yet,
//! speculative writes), which the planner's estimates can do without and `Db::check` adds.
//! (Looking up each value gaining holders before inserting it cost ~12% of the committer on
//! W's random UUID values with a commit per group, ~70% of `prepare` with LMDB written later.)
//!
//! `bulk` is the loader behind `init_db`/`fill_db`: it skips the pipeline (no tempids, upserts,
//! cardinality or uniqueness checks; attributes and value types are still checked) because the
//! caller vouches for the data. `prepare` encodes values into one byte arena per chunk and sorts
//! the EAV and AVE entries on the caller's threads; `request` hands the committer one request
//! per 256K datoms of the sorted runs, each chunk's keys past the previous chunk's. A key past the
//! end of its table is appended (LMDB `APPEND`, then `APPEND_DUP`: no search, full pages); an
//! existing key costs one seek when the sorted stream reaches it. So a load into an empty database
//! is a sequential write of both indexes. A load is durable chunk by chunk, not atomic as a whole
//! (as Datalevin's `fill-db`): a failure keeps the chunks before it.

pub(crate) mod attempt;
pub(crate) mod av;
pub(crate) mod batch;
pub(crate) mod bootstrap;
pub(crate) mod bulk;
pub use crate::db::tx_data as data;
pub(crate) mod datoms;
pub(crate) mod edn;
pub mod error;
pub(crate) mod excise;
pub(crate) mod fulltext;
pub(crate) mod index_rebuild;
mod input;
pub mod log;
pub(crate) mod print;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod resolve;
pub(crate) mod run;
pub(crate) mod schema_change;
mod show;
pub(crate) mod terms;
pub(crate) mod value_index_change;
pub(crate) mod write;

pub use data::{AttrName, EntityMap, EntityRef, Tempid, TxData, TxItem, TxOp, TxValue};
pub use error::TxError;
pub use input::IntoTxData;
pub use report::TxReport;
pub use run::{TxClock, TxFunction};
