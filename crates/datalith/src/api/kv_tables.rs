//! A program's key-value tables beside the Datalog store: the one naming rule that every face
//! of a database shares (the Python package's `Connection.kv`, the server's `kv-` routes and
//! through them the remote clients), so that a table written through one is read through the
//! others.
//!
//! A program's table `NAME` is the catalog's table `py/NAME`: under a prefix of its own, so
//! that no program can write into the store's indexes (`eav`, `ave`, ...) by naming one of
//! them. The prefix says `py` because the Python package named the first such tables; it
//! stays, so that the tables already written keep their names.

use super::database::Database;
use crate::kv::{KvError, Table, TableKind};

/// The catalog prefix of a program's tables.
pub const KV_TABLE_PREFIX: &str = "py/";

/// The catalog name of the program's table `name`.
pub fn kv_catalog_name(name: &str) -> String {
    format!("{KV_TABLE_PREFIX}{name}")
}

impl Database {
    /// The program's key-value table `name` (a plain table of bytes to bytes), created
    /// (durably) if missing. Write it with [`Environment::transact_kv`] and read it through
    /// [`Environment::read`] (`self.env()`).
    ///
    /// [`Environment::transact_kv`]: crate::kv::Environment::transact_kv
    /// [`Environment::read`]: crate::kv::Environment::read
    ///
    /// ```
    /// use datalith::kv::KvOp;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let sessions = db.kv_table("sessions").unwrap();
    /// db.env().transact_kv(vec![KvOp::put(&sessions, "ann", "token")]).unwrap();
    /// let read = db.env().read().unwrap();
    /// assert_eq!(read.view().get(&sessions, b"ann").unwrap(), Some(&b"token"[..]));
    /// assert_eq!(db.kv_table_names().unwrap(), ["sessions"]);
    /// ```
    pub fn kv_table(&self, name: &str) -> Result<Table, KvError> {
        self.env().table(&kv_catalog_name(name), TableKind::Plain)
    }

    /// The program's table `name` if it exists, without creating it: a read of a table
    /// never written is a read of an empty one, and needs no write.
    pub fn existing_kv_table(&self, name: &str) -> Result<Option<Table>, KvError> {
        let catalog = kv_catalog_name(name);
        let exists = self
            .env()
            .tables()?
            .iter()
            .any(|(table, _)| *table == catalog);
        match exists {
            true => self.env().table(&catalog, TableKind::Plain).map(Some),
            false => Ok(None),
        }
    }

    /// The names of the program's tables, in catalog order.
    pub fn kv_table_names(&self) -> Result<Vec<String>, KvError> {
        Ok(self
            .env()
            .tables()?
            .into_iter()
            .filter_map(|(name, _)| name.strip_prefix(KV_TABLE_PREFIX).map(str::to_string))
            .collect())
    }
}
