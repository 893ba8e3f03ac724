//! A thin safe layer over LMDB's C API (`lmdb-master-sys`, the bindings heed also uses).
//!
//! Why our own instead of heed: heed opens a fresh cursor for every `get` and range (an
//! allocation and a full B-tree descent each) and hides the transaction and cursor pointers, so
//! a reader cannot keep one cursor across many sorted seeks. LMDB's `MDB_SET*` ops on a
//! positioned cursor search the current leaf page first when the key falls inside it
//! (`mdb_cursor_set` in mdb.c), which makes sorted lookups page-local: [`Cursor`] exposes that.
//!
//! - [`env`]: the environment (open, map size, copy, close).
//! - [`txn`]: read and write transactions, table handles, puts and deletes.
//! - [`cursor`]: cursors and their positioning ops.
//! - [`compare`]: the key order (LMDB's default, with a fast path for 8-byte items).
//! - [`error`]: LMDB return codes.
//! - [`map_guard`]: a file that shrinks while mapped costs an error, not the process.
//! - [`free_list`]: the pages LMDB's free-page table holds.
//!
//! Invariants the wrapper owns: the environment is opened with `MDB_NOTLS` (a read transaction
//! is tied to its object, not its thread); an environment closes only after its last
//! transaction (each transaction holds a clone of the [`Env`]); slices read from a transaction
//! borrow it (a write transaction's writes need `&mut`, so no read slice survives a write);
//! cursors close before their transaction ends (they borrow it).

pub(crate) mod compare;
pub(crate) mod cursor;
pub(crate) mod env;
pub(crate) mod error;
pub(crate) mod free_list;
mod map_guard;
pub(crate) mod txn;

pub(crate) use cursor::{Cursor, WriteCursor};
pub(crate) use env::{Env, EnvFlags};
pub(crate) use error::LmdbError;
pub(crate) use txn::{Dbi, PutFlags, RoTxn, RwTxn};
