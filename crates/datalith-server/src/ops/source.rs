//! A served database: its handle, shared by every request, and its leased values.

use std::sync::Arc;
use std::time::Duration;

use datalith::Database;

use super::leases::Leases;
use crate::replica::Replica;

/// What the operations run on.
pub struct Source {
    /// The database, opened for writing once.
    pub database: Database,
    /// Values kept for requests that asked for a lease.
    pub leases: Leases,
    /// With `--log`: the log transactions go through, and the applier reads wait for.
    pub replica: Option<Arc<Replica>>,
}

impl Source {
    /// A source whose leases last at most `max_lease`, `max_leases` at once.
    pub fn new(database: Database, max_lease: Duration, max_leases: usize) -> Source {
        Source {
            database,
            leases: Leases::new(max_lease, max_leases),
            replica: None,
        }
    }
}
