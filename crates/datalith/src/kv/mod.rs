//! The key-value engine on LMDB: environments, tables, snapshots and the group-committing
//! writer. Everything above (the Datalog store) is built on these pieces.
//!
//! # A map in five minutes
//!
//! **The write path** (one commit group, `Durable` mode), each step a room:
//!
//! ```text
//!  caller ─▶ committer/ ─prepare─▶ stage/ ─▶ wal/ (record + fdatasync) ─▶ unapplied/ (publish) ─▶ ack
//!              (batching,          (ops in    (checkpoint.rs: one sync       │ later: the applier
//!               one writer)         an arena)  a group; growth, ring)        ▼ writes many groups
//!                                                                           LMDB (one txn, unsynced)
//!                                             wal/checkpoint.rs: mdb_env_sync + slot ─▶ disk
//! ```
//!
//! **The read path**: `read.rs` begins a snapshot (an LMDB read transaction, admitted by
//! `gate`) and pairs it with the groups LMDB lacks: this process's (`unapplied`), or in a
//! read-only environment another process's, read back from its log (`wal/tail.rs`); `overlay/`
//! merges those groups' writes over LMDB's state, and `view/` is the one reading API over both.
//!
//! **The floors** (each room imports only rooms below it; read bottom-up):
//!
//! ```text
//!  env/          opening, the handle users hold, the catalog, one writing process
//!  committer/    batching, one writer; `later.rs`: the path where LMDB is written later
//!  read.rs       a snapshot: LMDB's read txn + the groups it lacks (batch_snapshot.rs: reports)
//!  shared.rs     what readers and writers hold: core + the unapplied groups
//!  unapplied/    groups durable in the log, not yet in LMDB; the applier thread
//!  core/ view/   what every stage shares (LMDB env, gate, map growth, log, poison, counters);
//!                the one reading API
//!  overlay/      writes kept in memory over a snapshot
//!  wal/ pending  the log (records, checkpoints, recovery, the tail other processes read)
//!  stage/        a request's writes before they touch LMDB
//!  lmdb/ file/ table gate warm flush whole error ...   LMDB's C API, the file checked, leaves
//! ```
//!
//! What one stage owns lives in its room and meets the others only through a room below:
//! the committer's batch (`committer::Committer`) is held by the handle and the committer
//! thread, not by the shared state; the applier thread holds the environment through
//! `unapplied::Host`, which `shared.rs` implements; and the snapshots kept for reports are
//! known to `core/` only as something to release before a map growth (`core::Release`).
//! `api.rs` and `typed.rs` are the user's face on top.
//!
//! The rooms, one line each:
//!
//! - `lmdb`: our thin safe layer over LMDB's C API (environment, transactions, cursors kept
//!   across seeks; `compare.rs`: LMDB's default byte order with a fast path for 8-byte ids;
//!   `map_guard.rs`: the `SIGBUS` handler for a data file truncated while mapped).
//! - `file`: the data file validated with plain reads before LMDB reads a page
//!   of it (both meta pages, then a walk of the trees: the catalog on every open, every page
//!   for `check`).
//! - [`env`](mod@env): opening, the table catalog (table `__datalith_meta`: magic, format
//!   version, `table/<name>` -> kind), the format check, read-only opening, one writing
//!   process (`env/writer.rs`: the busy wait and the holder's pid).
//! - `core`: the state every stage shares, and map growth (`core/map.rs`); `shared`: that
//!   state with the unapplied groups, as readers and writers hold it.
//! - [`durability`]: what a crash can lose, per mode.
//! - [`table`]: plain, list (dupsort) and fixed-width list (`MDB_DUPFIXED`) tables.
//! - [`read`] / [`view`]: snapshots and the one reading API ([`ListReader`]: many lookups
//!   through one kept cursor); [`typed`]: keys and values through the order-preserving codec.
//! - [`overlay`]: writes kept in memory over a snapshot (speculative databases).
//! - [`batch_snapshot`]: the state before a group commit, kept for its reports.
//! - [`stage`]: writes staged by a request before they touch LMDB, applied in key order.
//! - `pending`: where a batch's deferred writes lie, so a read that may miss one is rerun.
//!   (`chunked`: the list in fixed chunks it keeps them in, which grows without copying.)
//! - [`committer`]: the single writer and its batching (`commit_timing`: its steps' times, for
//!   profiling, when `DATALITH_COMMIT_TIMING` is set); [`handle`]: completion of queued writes.
//! - [`api`]: the KV operations users call; `env/space.rs`: the files' sizes and free pages.
//! - `gate`: reader-slot admission and the resize barrier.
//! - [`wal`]: the write-ahead log: one sync per durable commit group, checkpoints, recovery,
//!   and the tail other processes read back.
//! - `unapplied`: groups durable in the log and visible through an overlay, written into LMDB
//!   later, many in one transaction.
//! - `warm`: faulting in the file's growth region ahead of the committer (`MDB_WRITEMAP`).
//! - `flush`: starting write-back of a commit's pages before its `fdatasync`.
//! - `whole`: files created whole (the log, a new data file): made under a name of their own,
//!   synced, then linked to their real name.
//!
//! Invariants:
//! - One writer: whoever holds the committer's `Runner` lock writes a whole batch (at most
//!   `MAX_BATCH_REQUESTS` requests and `MAX_BATCH_BYTES`) in one LMDB transaction; a
//!   blocking caller that finds the lock free runs the batch on its own thread.
//! - Requests never write LMDB directly: `WriteRequest::prepare` reads through a [`View`] of
//!   the batch (every earlier request of it included) and stages; a request that fails
//!   leaves nothing, because its stage is truncated (no nested LMDB transactions).
//! - Map growth is invisible: a batch that meets `MDB_MAP_FULL` is aborted, the map grown
//!   (only while no snapshot is open: the gate) and the batch redone; users see
//!   [`KvError::MapLimit`] or [`KvError::SnapshotBlocksGrowth`], never `MAP_FULL`.
//! - The gate caps open snapshots below LMDB's reader table, so `MDB_READERS_FULL` cannot
//!   happen.
//! - After a failed commit or sync the environment is poisoned ([`KvError::Poisoned`]):
//!   what is on disk may no longer match what callers were told.
//! - Bytes read from disk are not trusted: a file is walked before LMDB reads its pages, and
//!   one whose structure is damaged is refused ([`KvError::Corrupt`], `NotADatabase`,
//!   `Foreign`) instead of letting LMDB read outside its map.
//! - Every table keeps LMDB's default key order, so files stay readable by any LMDB program.
//!
//! Using it: open an [`Environment`] with the [`Durability`] a crash may cost, open a
//! [`Table`] by name, write [`KvOp`]s in one atomic group, read through a snapshot's [`View`].
//!
//! ```
//! use datalith::kv::{Durability, EnvOptions, Environment, KvOp, TableKind};
//!
//! for durability in Durability::ALL {
//!     let dir = tempfile::tempdir().unwrap();
//!     let env = Environment::open(dir.path(), EnvOptions::with_durability(durability)).unwrap();
//!     let users = env.table("users", TableKind::Plain).unwrap();
//!     let tags = env.table("tags", TableKind::List).unwrap();
//!
//!     // One atomic write, returning once it is as durable as the mode promises.
//!     env.transact_kv(vec![
//!         KvOp::put(&users, "ann", "Ann Smith"),
//!         KvOp::list_add(&tags, "ann", "admin"),
//!         KvOp::list_add(&tags, "ann", "dev"),
//!     ])
//!     .unwrap();
//!     // Queued: the handle completes when the group it joined commits.
//!     env.transact_kv_async(vec![KvOp::delete(&users, "bob")]).wait().unwrap();
//!
//!     let snapshot = env.read().unwrap();
//!     let view = snapshot.view();
//!     assert_eq!(view.get(&users, b"ann").unwrap(), Some(&b"Ann Smith"[..]));
//!     assert_eq!(view.get(&users, b"bob").unwrap(), None);
//!     assert_eq!(view.list_count(&tags, b"ann").unwrap(), 2);
//!     assert!(view.list_contains(&tags, b"ann", b"dev").unwrap());
//!     assert_eq!(env.durability(), durability);
//! }
//! ```

pub mod api;
pub mod batch_snapshot;
mod chunked;
mod commit_timing;
pub mod committer;
mod core;
pub mod durability;
pub mod env;
pub mod error;
pub(crate) mod file;
mod flush;
mod gate;
pub mod handle;
pub(crate) mod lmdb;
pub mod overlay;
mod pending;
pub mod read;
mod shared;
pub mod stage;
pub mod table;
pub mod tally;
pub mod typed;
mod unapplied;
pub mod view;
pub mod wal;
mod warm;
mod whole;

pub use self::wal::LOG_SYNC_BUCKET_NANOS;
pub use api::KvOp;
pub use batch_snapshot::{BatchSnapshot, OpRange};
pub use committer::{BatchSlot, BatchState, Outcome, Rejected, WriteRequest};
pub use durability::{Durability, EnvOptions};
pub use env::{CommitCounters, Environment, HeldSnapshot};
pub use error::KvError;
pub use file::{Structure, TableShape, Verify};
pub use handle::CommitHandle;
pub use overlay::Overlay;
pub use read::{ReadTxn, Snapshot};
pub use stage::Stage;
pub use table::{Table, TableKind};
pub use view::{Direction, Entries, Entry, ListReader, ListValues, View};
