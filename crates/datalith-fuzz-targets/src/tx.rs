//! Target `tx`: tx data on any text, transacted into a temporary database.
//!
//! Invariant checked: after every transaction that commits, `check` finds the indexes and
//! statistics consistent. The database is replaced by a fresh one every
//! [`TRANSACTIONS_PER_DATABASE`] commits so that it (and `check`) stays small.

use std::sync::Mutex;

use datalith::edn::read_one;
use datalith::Database;

/// Commits into one database before a fresh one replaces it.
pub const TRANSACTIONS_PER_DATABASE: u32 = 200;

static CURRENT: Mutex<Option<(Database, u32)>> = Mutex::new(None);

/// Transacts the tx data in `data`; a committed transaction must leave `check` clean.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(form) = read_one(text) else { return };
    let Ok(tx) = datalith::TxData::from_edn(&form) else {
        return;
    };
    let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if current
        .as_ref()
        .is_none_or(|(_, n)| *n >= TRANSACTIONS_PER_DATABASE)
    {
        *current = Some((crate::fixture::fresh_database(), 0));
    }
    let (db, commits) = current.as_mut().expect("a database");
    // The speculative path (`with`) first: it must agree with the commit on success.
    let speculative = db.db().expect("snapshot").with(&tx).is_ok();
    let committed = db.transact(tx).is_ok();
    assert_eq!(
        speculative, committed,
        "`with` and `transact` disagree on {text}"
    );
    if committed {
        *commits += 1;
        let report = db.db().expect("snapshot").check().expect("check runs");
        let problems: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            problems.is_empty(),
            "after {text}: check found {}",
            problems.join("; ")
        );
    }
}
