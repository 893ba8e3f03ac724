//! The Datalith calls of workload H that use the time view of the database (`Db::as_of`,
//! `Db::history`, `Input::Log`), in one place, each marked `// TIME-API:` (the bench was
//! written against stand-ins before the API landed).

use datalith::{Db, Input, QueryError};

/// The database as of transaction `tx` (inclusive), Datomic's `(d/as-of db tx)`.
pub fn as_of(db: &Db, tx: u64) -> Result<Db, QueryError> {
    // TIME-API: Db::as_of (a transaction id: TimePoint::Tx)
    db.as_of(tx)
}

/// Every assertion and retraction, Datomic's `(d/history db)`.
pub fn history(db: &Db) -> Db {
    // TIME-API: Db::history
    db.history()
}

/// The log of `db` as a query input, for `tx-ids` and `tx-data` (Datomic's `(d/log conn)`).
pub fn log(db: &Db) -> Input {
    // TIME-API: Input::Log
    Input::Log(db.clone())
}
