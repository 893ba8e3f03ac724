//! Which point in time a command reads (`--as-of`, `--since`, `--history`, and the shell's
//! `.as-of`, `.since`, `.history`, `.now`): the database value seen through it.

use datalith::edn::{read_one, Edn};
use datalith::{Db, TimePoint};

use crate::error::{CliError, Result};

/// A view in time; the default is the current state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeView {
    /// `--as-of T`.
    pub as_of: Option<TimePoint>,
    /// `--since T`.
    pub since: Option<TimePoint>,
    /// `--history`.
    pub history: bool,
}

impl TimeView {
    /// The view the flags give (each point as `parse_point` reads it).
    pub fn from_flags(as_of: Option<&str>, since: Option<&str>, history: bool) -> Result<TimeView> {
        Ok(TimeView {
            as_of: as_of.map(parse_point).transpose()?,
            since: since.map(parse_point).transpose()?,
            history,
        })
    }

    /// `db` seen through this view.
    pub fn apply(&self, db: Db) -> Result<Db> {
        let mut db = db;
        if let Some(t) = self.as_of {
            db = db.as_of(t)?;
        }
        if let Some(t) = self.since {
            db = db.since(t)?;
        }
        if self.history {
            db = db.history();
        }
        Ok(db)
    }

    /// How the view prints (for the shell's prompt messages).
    pub fn describe(&self) -> String {
        let point = |t: &TimePoint| match t {
            TimePoint::Tx(tx) => format!("transaction {tx}"),
            TimePoint::Instant(ms) => datalith::edn::to_edn_string(&Edn::Inst(*ms)),
        };
        let mut parts = Vec::new();
        if let Some(t) = &self.as_of {
            parts.push(format!("as of {}", point(t)));
        }
        if let Some(t) = &self.since {
            parts.push(format!("since {}", point(t)));
        }
        if self.history {
            parts.push("history".to_string());
        }
        if parts.is_empty() {
            "now".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// A point in time as a person writes it: a transaction id (`17592186045418`), an instant
/// (`#inst "2030-01-01"`) or a bare date or date-time (`2030-01-01`, `2030-01-01T12:00:00Z`).
pub fn parse_point(text: &str) -> Result<TimePoint> {
    let text = text.trim();
    if let Ok(tx) = text.parse::<u64>() {
        return Ok(TimePoint::Tx(tx));
    }
    let form = if text.starts_with('#') {
        text.to_string()
    } else {
        format!("#inst \"{text}\"")
    };
    match read_one(&form) {
        Ok(Edn::Inst(ms)) => Ok(TimePoint::Instant(ms)),
        _ => Err(CliError::user(format!(
            "{text}: not a point in time (a transaction id, or an instant such as 2030-01-01 or #inst \"2030-01-01T00:00:00Z\")"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_read_as_a_person_writes_them() {
        let cases: [(&str, Option<TimePoint>); 5] = [
            ("17592186045418", Some(TimePoint::Tx(17592186045418))),
            ("2030-01-01", Some(TimePoint::Instant(1_893_456_000_000))),
            (
                "#inst \"2030-01-01T00:00:00.000-00:00\"",
                Some(TimePoint::Instant(1_893_456_000_000)),
            ),
            ("yesterday", None),
            ("-3", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_point(text).ok(), want, "{text}");
        }
    }
}
