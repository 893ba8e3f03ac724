//! A fresh database for a test: a temporary directory, and tx data transacted into it.

use datalith::{Database, DbOptions};

/// A database in a new temporary directory (kept while the `TempDir` lives) with each of
/// `txs` (EDN tx data) transacted in order.
pub fn open_with(txs: &[&str]) -> (tempfile::TempDir, Database) {
    open_with_options(DbOptions::default(), txs)
}

/// [`open_with`] with `options`.
#[allow(dead_code)] // Not every test file that includes this module needs it.
pub fn open_with_options(options: DbOptions, txs: &[&str]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), options).unwrap();
    for tx in txs {
        db.transact(*tx).unwrap_or_else(|e| panic!("{tx}: {e}"));
    }
    (dir, db)
}
