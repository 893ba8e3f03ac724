//! The Datalith calls of workload H that need the time view of the database (`Db::as_of`,
//! `Db::history`, `Input::Log`), in one place.
//!
//! Until that API is in the `datalith` crate, each function returns [`ApiError::Unsupported`]
//! and the rows that need it are reported skipped ("not in this build"). Each real call is
//! written beside it in a `// TIME-API:` comment: swapping it in is replacing the body by the
//! comment.

use datalith::{Db, Input, QueryError};

/// Why a time-view call gave no database.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The call is not in this build of `datalith`.
    #[error("{0} is not in this build of datalith (the time-view API)")]
    Unsupported(&'static str),
    /// The call failed.
    #[error("{0}")]
    Query(#[from] QueryError),
}

/// The database as of transaction `tx` (inclusive), Datomic's `(d/as-of db tx)`.
pub fn as_of(db: &Db, tx: u64) -> Result<Db, ApiError> {
    // TIME-API: Ok(db.as_of(tx)?)
    let _ = (db, tx);
    Err(ApiError::Unsupported("Db::as_of"))
}

/// Every assertion and retraction, Datomic's `(d/history db)`.
pub fn history(db: &Db) -> Result<Db, ApiError> {
    // TIME-API: Ok(db.history())
    let _ = db;
    Err(ApiError::Unsupported("Db::history"))
}

/// The log of `db` as a query input, for `tx-ids` and `tx-data` (Datomic's `(d/log conn)`).
pub fn log(db: &Db) -> Result<Input, ApiError> {
    // TIME-API: Ok(Input::Log(db.clone()))
    let _ = db;
    Err(ApiError::Unsupported("Input::Log"))
}
