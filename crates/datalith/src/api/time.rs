//! Database values in time (Datomic's `as-of`, `since`, `history`): the same snapshot seen
//! through a [`TimeFilter`] (see ARCHITECTURE.md, "Time: the history index").

use std::ops::Bound;

use crate::codec::Value;
use crate::db::Db;
use crate::kv::Direction;
use crate::query::QueryError;
use crate::store::ids::TX_PARTITION_START;
use crate::store::schema::builtin::TX_INSTANT;
use crate::store::{EntityId, TimeFilter};

/// A point in a database's time: a transaction (its entity id, as `Db::basis_t` and
/// `TxReport::tx` give it), or an instant (milliseconds since the epoch: the last transaction
/// whose `:db/txInstant` is at or before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimePoint {
    /// A transaction id.
    Tx(EntityId),
    /// Milliseconds since the Unix epoch.
    Instant(i64),
}

impl From<EntityId> for TimePoint {
    fn from(tx: EntityId) -> TimePoint {
        TimePoint::Tx(tx)
    }
}

impl From<std::time::SystemTime> for TimePoint {
    fn from(t: std::time::SystemTime) -> TimePoint {
        let ms = match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_millis().min(i64::MAX as u128) as i64,
            Err(e) => -(e.duration().as_millis().min(i64::MAX as u128) as i64),
        };
        TimePoint::Instant(ms)
    }
}

impl Db {
    /// The database as it was at `t` (Datomic's `as-of`): the datoms whose last assertion or
    /// retraction at or before `t` is an assertion. Of an `as_of` value, the earlier of the
    /// two points.
    pub fn as_of(&self, t: impl Into<TimePoint>) -> Result<Db, QueryError> {
        let t = self.resolve_time(t.into())?;
        let mut time = self.time_filter();
        time.as_of = Some(time.as_of.map_or(t, |x| x.min(t)));
        Ok(self.with_time(time))
    }

    /// The datoms asserted after `t` and still there (Datomic's `since`).
    pub fn since(&self, t: impl Into<TimePoint>) -> Result<Db, QueryError> {
        let t = self.resolve_time(t.into())?;
        let mut time = self.time_filter();
        time.since = Some(time.since.map_or(t, |x| x.max(t)));
        Ok(self.with_time(time))
    }

    /// Every assertion and retraction (Datomic's `history`): patterns see each event, with
    /// its transaction and `added`; pull and `entity` refuse such a value, as Datomic does.
    pub fn history(&self) -> Db {
        let mut time = self.time_filter();
        time.history = true;
        self.with_time(time)
    }

    /// The point this value is `as_of`, if it is one.
    pub fn as_of_t(&self) -> Option<EntityId> {
        self.time_filter().as_of
    }

    /// The point this value is `since`, if it is one.
    pub fn since_t(&self) -> Option<EntityId> {
        self.time_filter().since
    }

    /// Whether this is a history value.
    pub fn is_history(&self) -> bool {
        self.time_filter().history
    }

    /// The same state with no time filter.
    pub fn current(&self) -> Db {
        self.with_time(TimeFilter::default())
    }

    /// The transaction id `t` names: a transaction id as it is (one below the first stands
    /// for the state before any), an instant as the last transaction at or before it.
    fn resolve_time(&self, t: TimePoint) -> Result<EntityId, QueryError> {
        match t {
            TimePoint::Tx(tx) if tx >= TX_PARTITION_START - 1 => Ok(tx),
            TimePoint::Tx(tx) => Err(QueryError::BadArguments {
                name: "as-of".into(),
                message: format!(
                    "{tx} is not a transaction id (transaction ids start at {TX_PARTITION_START})"
                ),
            }),
            TimePoint::Instant(ms) => {
                let r = self.reader();
                let mut found = None;
                r.scan_attr(
                    TX_INSTANT,
                    Bound::Unbounded,
                    Bound::Included(&Value::Instant(ms)),
                    Direction::Backward,
                    |_, e| {
                        found = Some(e);
                        Ok(false)
                    },
                )?;
                // Instants never go back (Datomic's rule), so the last one at or before
                // `ms` belongs to the latest such transaction; before any: the empty state.
                Ok(found.unwrap_or(TX_PARTITION_START - 1))
            }
        }
    }
}
