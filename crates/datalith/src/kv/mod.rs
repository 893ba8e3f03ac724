//! The key-value engine on LMDB: environments, tables, snapshots and the group-committing
//! writer. Everything above (the Datalog store) is built on these pieces.
//!
//! - `lmdb`: our thin safe layer over LMDB's C API (environment, transactions, cursors).
//! - [`env`](mod@env): opening, the table catalog, map growth, the format check.
//! - [`durability`]: what a crash can lose, per mode.
//! - [`table`]: plain and list (dupsort) tables.
//! - [`read`] / [`view`]: snapshots and the one reading API.
//! - [`overlay`]: writes kept in memory over a snapshot (speculative databases).
//! - [`batch_snapshot`]: the state before a group commit, kept for its reports.
//! - [`stage`]: writes staged by a request before they touch LMDB.
//! - [`committer`]: the single writer thread and its batching.
//! - [`handle`]: completion of queued writes.
//! - [`api`]: the KV operations users call.
//! - `gate`: reader-slot admission and the resize barrier.
//! - [`wal`]: the write-ahead log: one sync per durable commit group, checkpoints, recovery.
//! - `warm`: faulting in the file's growth region ahead of the committer (`MDB_WRITEMAP`).

pub mod api;
pub mod batch_snapshot;
pub mod committer;
pub mod durability;
pub mod env;
pub mod error;
pub mod file;
mod flush;
mod gate;
pub mod handle;
pub(crate) mod lmdb;
pub mod overlay;
mod pending;
pub mod read;
pub mod stage;
pub mod table;
pub mod typed;
pub mod view;
pub mod wal;
mod warm;

pub use api::KvOp;
pub use batch_snapshot::{BatchSnapshot, OpRange};
pub use committer::{BatchSlot, BatchState, Outcome, Rejected, WriteRequest};
pub use durability::{Durability, EnvOptions};
pub use env::{CommitCounters, Environment, HeldSnapshot};
pub use error::KvError;
pub use handle::CommitHandle;
pub use overlay::Overlay;
pub use read::{ReadTxn, Snapshot};
pub use stage::Stage;
pub use table::{Table, TableKind};
pub use view::{Direction, Entries, Entry, ListReader, ListValues, View};
