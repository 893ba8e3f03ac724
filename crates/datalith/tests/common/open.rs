//! A fresh database for a test: a temporary directory, and tx data transacted into it.

use datalith::{Database, DbOptions};

/// A database in a new temporary directory (kept while the `TempDir` lives) with each of
/// `txs` (EDN tx data) transacted in order.
pub fn open_with(txs: &[&str]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    for tx in txs {
        db.transact(*tx).unwrap_or_else(|e| panic!("{tx}: {e}"));
    }
    (dir, db)
}
