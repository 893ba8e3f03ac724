//! Which database value a read answers from: the latest, or the one the request names by
//! `:basis-t` while it is leased (see `leases`) or still the latest; and, when the request
//! asks for `:lease-ms`, that value is kept for it.

use datalith::edn::Edn;
use datalith::Db;

use super::{Request, Source};
use crate::error::{codes, Result, ServerError};

/// How long a read that names a basis this node has not reached waits for the log.
const REPLICA_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// The value to read and its basis.
pub fn snapshot(source: &Source, request: &Request) -> Result<(Db, u64)> {
    let (db, basis) = match request.count("basis-t")? {
        Some(want) => (value_at(source, want)?, want),
        None => {
            let db = source.latest()?;
            let basis = db.basis_t()?;
            (db, basis)
        }
    };
    finish(source, request, db, basis)
}

/// The database value at basis `want`: leased, or still the latest (on a replica, the value
/// once this node has applied the log that far).
pub fn value_at(source: &Source, want: u64) -> Result<Db> {
    if let Some(db) = source.leases.get(want) {
        return Ok(db);
    }
    if let Some(replica) = &source.replica {
        // Read-your-writes across nodes: a basis another node answered with is one this node
        // reaches by applying the log.
        if !replica.wait_for_basis(want, REPLICA_PATIENCE) {
            return Err(ServerError::new(
                codes::NOT_APPLIED_YET,
                format!(
                    "basis-t {want}: this node has not applied the log that far within {} ms",
                    REPLICA_PATIENCE.as_millis()
                ),
            )
            .with("requested", Edn::Long(want as i64)));
        }
        let db = source.database.db()?;
        // Past it by now: the value at `want` is the latest seen as of it.
        return Ok(if db.basis_t()? > want {
            db.as_of(datalith::TimePoint::Tx(want))?
        } else {
            db
        });
    }
    let db = source.database.db()?;
    let basis = db.basis_t()?;
    if basis != want {
        return Err(ServerError::new(
            codes::BASIS_UNAVAILABLE,
            format!(
                "basis-t {want} is not leased (never, or its lease ended) and the database is \
                 at {basis}: read the latest, or ask for :lease-ms to keep a value"
            ),
        )
        .with("basis-t", Edn::Long(basis as i64))
        .with("requested", Edn::Long(want as i64)));
    }
    Ok(db)
}

/// Leases the value when asked, and applies the request's point in time.
fn finish(source: &Source, request: &Request, db: Db, basis: u64) -> Result<(Db, u64)> {
    if let Some(ms) = request.count("lease-ms")? {
        source.leases.lease(basis, &db, ms)?;
    }
    Ok((in_time(db, request)?, basis))
}

/// `db` seen at the point in time the request names, if any: `:as-of T`, `:since T` (a
/// transaction id or an instant) and `:history true`, Datomic's `as-of`, `since`, `history`.
fn in_time(db: Db, request: &Request) -> Result<Db> {
    let point = |field: &str| -> Result<Option<datalith::TimePoint>> {
        Ok(match request.get(field) {
            None => None,
            Some(Edn::Long(t)) if *t >= 0 => Some(datalith::TimePoint::Tx(*t as u64)),
            Some(Edn::Inst(ms)) => Some(datalith::TimePoint::Instant(*ms)),
            Some(other) => {
                return Err(ServerError::invalid(format!(
                    ":{field} must be a transaction id or an instant, got {}",
                    super::request::short(other)
                )))
            }
        })
    };
    let mut db = db;
    if let Some(t) = point("as-of")? {
        db = db.as_of(t)?;
    }
    if let Some(t) = point("since")? {
        db = db.since(t)?;
    }
    match request.get("history") {
        None | Some(Edn::Bool(false)) => {}
        Some(Edn::Bool(true)) => db = db.history(),
        Some(other) => {
            return Err(ServerError::invalid(format!(
                ":history must be true or false, got {}",
                super::request::short(other)
            )))
        }
    }
    Ok(db)
}
