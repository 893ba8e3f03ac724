//! A served database: its handle, shared by every request, and its leased values.

use std::sync::Arc;
use std::time::Duration;

use datalith::{Database, Db};

use super::leases::Leases;
use super::pages::Pages;
use crate::error::Result;
use crate::replica::Replica;

/// What the operations run on.
pub struct Source {
    /// The database, opened for writing once.
    pub database: Database,
    /// Values kept for requests that asked for a lease.
    pub leases: Leases,
    /// Results of paged queries, kept for their next pages.
    pub pages: Pages,
    /// With `--log`: the log transactions go through, and the applier reads wait for.
    pub replica: Option<Arc<Replica>>,
}

impl Source {
    /// A source whose leases last at most `max_lease`, `max_leases` at once, and whose paged
    /// queries' results are kept within `page_cache_bytes`, each until unused for
    /// `max_lease` (a minute at least).
    pub fn new(
        database: Database,
        max_lease: Duration,
        max_leases: usize,
        page_cache_bytes: usize,
    ) -> Source {
        Source {
            database,
            leases: Leases::new(max_lease, max_leases),
            // A client pages at a lease's pace, and at least a minute's.
            pages: Pages::new(page_cache_bytes, max_lease.max(Duration::from_secs(60))),
            replica: None,
        }
    }

    /// The value a read that names no basis answers from. On a node applying a log, the state
    /// its data file holds ([`Database::applied_db`]) unless this node acknowledged a
    /// transaction past it (then the latest, so that a client reads its own writes on the
    /// node that took them): while a node catches up, its writer's backlog of transactions
    /// not yet in LMDB is large, and every read of the latest value would merge it or wait
    /// for it. Everywhere else, the latest value.
    pub fn latest(&self) -> Result<Db> {
        Ok(self.latest_and_whence()?.0)
    }

    /// [`Source::latest`], and whether it is the data file's state alone.
    pub fn latest_and_whence(&self) -> Result<(Db, bool)> {
        if let Some(replica) = &self.replica {
            let applied = self.database.applied_db()?;
            if applied.basis_t()? >= replica.acknowledged_basis() {
                return Ok((applied, true));
            }
        }
        Ok((self.database.db()?, false))
    }
}
