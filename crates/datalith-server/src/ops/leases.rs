//! Database values kept for a while, so that later requests read the same value: a read
//! that asks for `:lease-ms N` has the value it answered from (named by its `:basis-t`) kept
//! for N ms; a request naming that `:basis-t` meanwhile reads it (and may ask for
//! `:lease-ms` again to extend the lease from then). When the lease ends the value is let
//! go, and a request naming its basis is refused with `:datalith.error/basis-unavailable`
//! (409), as is one naming a basis never leased that is no longer the latest.
//!
//! Leases are asked for, never given to every read, and bounded in length
//! (`--max-lease-ms`) and number (`--max-leases` a database, [`DEFAULT_MAX_LEASES`] unless
//! told; past it the lease that would end first ends early), because a held value is an open
//! snapshot: it keeps LMDB from reusing the pages freed since it began, and the map from
//! growing. A sweep every second drops the ended leases, and every lease while a growth of
//! the map waits for snapshots (`Environment::growth_waiting`; the growth waits 5 s before
//! the write that needed it fails), so a lease never makes a write fail: it ends early.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use datalith::Db;

use crate::error::{Result, ServerError};

/// Values one database keeps leased at most unless `--max-leases` says otherwise; past them
/// the lease that would end first ends early. Each is an open snapshot holding one of the
/// database's 4096 LMDB reader slots; what keeps LMDB from reusing freed pages is the oldest
/// of them (at most `--max-lease-ms` old), not their number. 64 were too few for 200 clients
/// each taking a value (`db()`) and then reading it under writes: a `db()` named a new value
/// up to ~570 times a second, 64 turned over in about a tenth of a second, and ~1% of the
/// reads were refused (`datalith-torture serve --secs 60 --clients 200`: 744 of 79,466).
pub const DEFAULT_MAX_LEASES: usize = 1024;

/// The leased values of one database.
pub struct Leases {
    held: Mutex<Vec<Lease>>,
    max: Duration,
    most: usize,
}

struct Lease {
    basis: u64,
    db: Db,
    until: Instant,
}

impl Leases {
    /// Leases of at most `max` each (zero: no leases), `most` at once (at least one).
    pub fn new(max: Duration, most: usize) -> Leases {
        Leases {
            held: Mutex::new(Vec::new()),
            max,
            most: most.max(1),
        }
    }

    /// The most values leased at once.
    pub fn most(&self) -> usize {
        self.most
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Lease>> {
        // A panic elsewhere while holding the lock leaves a plain list, still whole.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The leased value of `basis`, if its lease has not ended.
    pub fn get(&self, basis: u64) -> Option<Db> {
        let now = Instant::now();
        let held = self.lock();
        held.iter()
            .find(|l| l.basis == basis && l.until > now)
            .map(|l| l.db.clone())
    }

    /// Keeps `db` (of `basis`) for `ms` from now, or extends its lease to then.
    pub fn lease(&self, basis: u64, db: &Db, ms: u64) -> Result<()> {
        let asked = Duration::from_millis(ms);
        if asked > self.max {
            return Err(ServerError::invalid(format!(
                ":lease-ms {ms} is over this server's limit of {} ms (--max-lease-ms)",
                self.max.as_millis()
            )));
        }
        let now = Instant::now();
        // An operator's --max-lease-ms may be past what a clock can add.
        let until = now.checked_add(asked).ok_or_else(|| {
            ServerError::invalid(format!(":lease-ms {ms} is past what this clock can count"))
        })?;
        let mut held = self.lock();
        held.retain(|l| l.until > now);
        if let Some(l) = held.iter_mut().find(|l| l.basis == basis) {
            l.until = l.until.max(until);
            return Ok(());
        }
        // Full: the lease that would end first ends now, so that reads are never refused
        // for want of a lease (its holder's next read is told the value is gone, and takes
        // a newer one).
        let early = match held.len() >= self.most {
            true => held
                .iter()
                .enumerate()
                .min_by_key(|(_, l)| l.until)
                .map(|(i, _)| i)
                .map(|i| held.swap_remove(i)),
            false => None,
        };
        held.push(Lease {
            basis,
            db: db.clone(),
            until,
        });
        drop(held);
        // Its snapshot closes outside the lock.
        drop(early);
        Ok(())
    }

    /// Lets go of the values whose leases have ended, or of every value when `all` (a
    /// growth of the map waits for the snapshots to close).
    pub fn sweep(&self, all: bool) {
        let now = Instant::now();
        let ended: Vec<Lease> = {
            let mut held = self.lock();
            let (live, ended) = std::mem::take(&mut *held)
                .into_iter()
                .partition(|l| !all && l.until > now);
            *held = live;
            ended
        };
        // Closed outside the lock.
        drop(ended);
    }

    /// How many values are leased now.
    pub fn count(&self) -> usize {
        let now = Instant::now();
        self.lock().iter().filter(|l| l.until > now).count()
    }
}
