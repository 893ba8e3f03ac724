//! The calls the time group (`cases/time.edn`, `documented-answers.edn`) makes to Datalith's
//! time API, in one place: `Db::as_of`, `Db::since` (a transaction id or an instant),
//! `Db::history`, and the log as a query input (`Input::Log`).

use datalith::{Db, Input, TimePoint};

/// A point in time of a view: a transaction id, or an instant in ms since the epoch.
#[derive(Debug, Clone, Copy)]
pub enum Point {
    Tx(u64),
    Instant(i64),
}

/// Datalith refused to make the view: the message and the error's category code.
pub struct Refused(pub String, pub Option<&'static str>);

/// `d/as-of`.
pub fn as_of(db: &Db, t: Point) -> Result<Db, Refused> {
    db.as_of(point(t)).map_err(refused)
}

/// `d/since`.
pub fn since(db: &Db, t: Point) -> Result<Db, Refused> {
    db.since(point(t)).map_err(refused)
}

/// `d/history`.
pub fn history(db: &Db) -> Db {
    db.history()
}

/// `d/log` of the connection `db` comes from, as a query input.
pub fn log(db: &Db) -> Input {
    Input::Log(db.clone())
}

fn point(t: Point) -> TimePoint {
    match t {
        Point::Tx(tx) => TimePoint::Tx(tx),
        Point::Instant(ms) => TimePoint::Instant(ms),
    }
}

fn refused(e: datalith::QueryError) -> Refused {
    Refused(e.to_string(), Some(e.category().code))
}
