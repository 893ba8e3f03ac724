//! The calls the time group (`cases/time.edn`, `documented-answers.edn`) makes to Datalith's
//! time API, in one place, so that the suite compiles before that API exists.
//!
//! Until it lands every function here answers "not implemented yet" and the time cases stay
//! in `pending.edn`. To switch them on, delete every line whose comment is NOT-YET and
//! uncomment every line whose comment starts with TIME-API, which from the workspace root is
//!
//! ```text
//! sed -i -e '/\/\/ NOT-YET/d' -e 's|^\( *\)// TIME-API: \{0,1\}|\1|' \
//!     crates/datalith/tests/conformance/time_api.rs
//! ```
//!
//! Nothing else in the suite changes. The API this expects (re-exported at the crate root):
//!
//! ```text
//! pub enum TimePoint { Tx(EntityId), Instant(i64 /* ms since the epoch */) }
//! impl Db {
//!     pub fn as_of(&self, t: impl Into<TimePoint>) -> Result<Db, QueryError>;
//!     pub fn since(&self, t: impl Into<TimePoint>) -> Result<Db, QueryError>;
//!     pub fn history(&self) -> Db;
//! }
//! Input::Log(Db) // the transaction log of the database the value came from
//! ```

use datalith::{Db, Input};

/// A point in time of a view: a transaction id, or an instant in ms since the epoch.
#[allow(dead_code)] // NOT-YET: read once the API is in
#[derive(Debug, Clone, Copy)]
pub enum Point {
    Tx(u64),
    Instant(i64),
}

/// Why a time call gave no database.
pub enum TimeError {
    /// The API is not there: the case is not run.
    #[allow(dead_code)] // made only while the API is missing
    Unsupported(String),
    /// Datalith refused: the message and the error's category code.
    #[allow(dead_code)] // NOT-YET: made once the API is in
    Refused(String, Option<&'static str>),
}

// NOT-YET: the answer of every function below until the API is in.
const NOT_YET: &str = "time: not implemented yet (tests/conformance/time_api.rs)"; // NOT-YET
/// Whether the time cases can run at all.
pub fn available() -> Result<(), String> {
    // TIME-API: Ok(())
    Err(NOT_YET.to_string()) // NOT-YET
}

/// `d/as-of`.
pub fn as_of(db: &Db, t: Point) -> Result<Db, TimeError> {
    // TIME-API: db.as_of(point(t)).map_err(refused)
    let _ = (db, t); // NOT-YET
    Err(TimeError::Unsupported(NOT_YET.to_string())) // NOT-YET
}

/// `d/since`.
pub fn since(db: &Db, t: Point) -> Result<Db, TimeError> {
    // TIME-API: db.since(point(t)).map_err(refused)
    let _ = (db, t); // NOT-YET
    Err(TimeError::Unsupported(NOT_YET.to_string())) // NOT-YET
}

/// `d/history`.
pub fn history(db: &Db) -> Result<Db, TimeError> {
    // TIME-API: Ok(db.history())
    let _ = db; // NOT-YET
    Err(TimeError::Unsupported(NOT_YET.to_string())) // NOT-YET
}

/// `d/log` of the connection `db` comes from, as a query input.
pub fn log(db: &Db) -> Result<Input, TimeError> {
    // TIME-API: Ok(Input::Log(db.clone()))
    let _ = db; // NOT-YET
    Err(TimeError::Unsupported(NOT_YET.to_string())) // NOT-YET
}

// TIME-API: fn point(t: Point) -> datalith::TimePoint {
// TIME-API:     match t {
// TIME-API:         Point::Tx(tx) => datalith::TimePoint::Tx(tx),
// TIME-API:         Point::Instant(ms) => datalith::TimePoint::Instant(ms),
// TIME-API:     }
// TIME-API: }
// TIME-API:
// TIME-API: fn refused(e: datalith::QueryError) -> TimeError {
// TIME-API:     TimeError::Refused(e.to_string(), Some(e.category().code))
// TIME-API: }
