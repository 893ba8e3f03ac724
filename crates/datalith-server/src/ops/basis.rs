//! Which database value a read answers from: the latest, or the one the request names by
//! `:basis-t` while it is leased (see `leases`) or still the latest; and, when the request
//! asks for `:lease-ms`, that value is kept for it.

use datalith::edn::Edn;
use datalith::Db;

use super::{Request, Source};
use crate::error::{codes, Result, ServerError};

/// The value to read and its basis.
pub fn snapshot(source: &Source, request: &Request) -> Result<(Db, u64)> {
    let (db, basis) = match request.count("basis-t")? {
        Some(want) => match source.leases.get(want) {
            Some(db) => (db, want),
            None => {
                let db = source.database.db()?;
                let basis = db.basis_t()?;
                if basis != want {
                    return Err(ServerError::new(
                        codes::BASIS_UNAVAILABLE,
                        format!(
                            "basis-t {want} is not leased (never, or its lease ended) and the \
                             database is at {basis}: read the latest, or ask for :lease-ms to \
                             keep a value"
                        ),
                    )
                    .with("basis-t", Edn::Long(basis as i64))
                    .with("requested", Edn::Long(want as i64)));
                }
                (db, basis)
            }
        },
        None => {
            let db = source.database.db()?;
            let basis = db.basis_t()?;
            (db, basis)
        }
    };
    if let Some(ms) = request.count("lease-ms")? {
        source.leases.lease(basis, &db, ms)?;
    }
    Ok((db, basis))
}
