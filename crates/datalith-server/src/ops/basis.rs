//! Which database value a read answers from. The server holds the latest value only: a
//! request that names an older (or newer) `:basis-t` is refused with
//! `:datalith.error/basis-unavailable` rather than answered from another state. Keeping
//! recent values for a bounded lease, as Datomic's client expects, is still to come; it
//! must be bounded because a held value pins the data file's pages.

use datalith::edn::Edn;
use datalith::{Database, Db};

use super::Request;
use crate::error::{codes, Result, ServerError};

/// The value to read, with its basis; the request's `:basis-t`, if any, must be it.
pub fn snapshot(database: &Database, request: &Request) -> Result<(Db, u64)> {
    let db = database.db()?;
    let basis = db.basis_t()?;
    match request.count("basis-t")? {
        Some(want) if want != basis => Err(ServerError::new(
            codes::BASIS_UNAVAILABLE,
            format!(
                "the database is at basis-t {basis}, not {want}; this server answers from the \
                 latest value only"
            ),
        )
        .with("basis-t", Edn::Long(basis as i64))
        .with("requested", Edn::Long(want as i64))),
        _ => Ok((db, basis)),
    }
}
