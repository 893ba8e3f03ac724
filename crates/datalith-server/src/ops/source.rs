//! A served database: its handle, shared by every request, and its leased values.

use std::time::Duration;

use datalith::Database;

use super::leases::Leases;

/// What the operations run on.
pub struct Source {
    /// The database, opened for writing once.
    pub database: Database,
    /// Values kept for requests that asked for a lease.
    pub leases: Leases,
}

impl Source {
    /// A source whose leases last at most `max_lease`, `max_leases` at once.
    pub fn new(database: Database, max_lease: Duration, max_leases: usize) -> Source {
        Source {
            database,
            leases: Leases::new(max_lease, max_leases),
        }
    }
}
