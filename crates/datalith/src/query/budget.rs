//! What one query run may spend: time (`:timeout`), the caller's cancellation flag, and memory
//! (`:memory-limit`, the database's limit, or a quarter of physical memory).
//!
//! Every loop of the executor that runs per row or per index entry calls [`Budget::tick`]
//! (or [`Budget::charge`] when it keeps a row): the hot path is one decrement of a countdown and
//! one well-predicted branch. Only when the countdown reaches zero, once every
//! [`CHECK_EVERY`] steps, does the budget load the cancellation flag and read the clock, so a
//! query notices a timeout or a cancel within that many steps of the slowest loop, far below
//! 50 ms, without a system call per row.
//!
//! Memory is an estimate of the rows a query holds: each kept row counts its vector header
//! plus one [`Value`] slot per column ([`row_bytes`]); hash tables count one row per entry.
//! The heap contents of strings and other shared values are not counted (they are shared
//! with the index reader's decoded values or with other rows). Between the steps of a
//! conjunction the count is reset to what is live: the enclosing steps' relations plus the
//! current relation ([`Budget::settle`]), so a long query is not charged for relations it
//! already dropped.
//!
//! Invariant: once a budget has stopped, every later `tick` fails with the same error, so a
//! loop that swallowed one failure (a scan callback that can only say "stop") is still stopped
//! at the next check.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use super::error::QueryError;
use crate::codec::Value;

/// Steps between two looks at the clock and the cancellation flag. A step is a row or an
/// index entry: even at a microsecond each, the check comes every millisecond or so.
pub const CHECK_EVERY: u32 = 1024;

/// Why a query was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Timeout,
    Memory,
}

/// A question the caller answers at each look of the budget: whether to stop now (a host
/// that cannot set a flag from elsewhere, such as Python, whose signals are seen only on the
/// thread that runs the query). It is asked every [`CHECK_EVERY`] steps, so it must be cheap
/// or rate-limit itself.
#[derive(Clone, Copy)]
pub struct Interrupt<'a>(pub &'a (dyn Fn() -> bool + Sync));

impl std::fmt::Debug for Interrupt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interrupt(..)")
    }
}

/// The limits of one query run and what it has spent so far.
pub struct Budget<'a> {
    countdown: Cell<u32>,
    cancel: Option<&'a AtomicBool>,
    interrupt: Option<Interrupt<'a>>,
    /// Set when the other parts of a spread conjunction stopped (`fork`): this part stops
    /// too, as cancelled.
    halt: Option<&'a AtomicBool>,
    /// When to give up, and the `:timeout` it came from (for the error).
    deadline: Option<(Instant, u64)>,
    memory_limit: u64,
    used: Cell<u64>,
    stopped: Cell<Option<Stop>>,
}

impl<'a> Budget<'a> {
    /// A budget with a deadline `timeout_ms` from now (if any), the caller's cancellation flag
    /// (if any) and a memory limit in bytes.
    pub fn new(
        timeout_ms: Option<u64>,
        cancel: Option<&'a AtomicBool>,
        memory_limit: u64,
    ) -> Budget<'a> {
        Budget {
            countdown: Cell::new(CHECK_EVERY),
            cancel,
            interrupt: None,
            halt: None,
            deadline: timeout_ms.map(|ms| {
                let at = Instant::now().checked_add(std::time::Duration::from_millis(ms));
                // A deadline past what the clock can represent never comes.
                (at.unwrap_or_else(far_future), ms)
            }),
            memory_limit,
            used: Cell::new(0),
            stopped: Cell::new(None),
        }
    }

    /// Moves the deadline `by` later: time the query spent waiting for its caller (handing
    /// its items on, `exec::parts`), which is not the query's own.
    pub fn postpone(&mut self, by: std::time::Duration) {
        if let Some((at, _)) = &mut self.deadline {
            *at = at.checked_add(by).unwrap_or_else(far_future);
        }
    }

    /// The budget that also asks `interrupt` at each look (a "yes" stops the query as
    /// cancelled).
    pub fn with_interrupt(mut self, interrupt: Option<Interrupt<'a>>) -> Budget<'a> {
        self.interrupt = interrupt;
        self
    }

    /// The budget of a part of this query run on another thread (`exec::spread`): the same
    /// deadline and cancellation flag, `memory_limit` bytes of its own, and `halt`, which the
    /// other parts set when they stop. The interrupt question stays with this budget: it may
    /// be answerable only on the query's own thread.
    pub fn fork<'b>(&self, memory_limit: u64, halt: &'b AtomicBool) -> Budget<'b>
    where
        'a: 'b,
    {
        Budget {
            countdown: Cell::new(CHECK_EVERY),
            cancel: self.cancel,
            interrupt: None,
            halt: Some(halt),
            deadline: self.deadline,
            memory_limit,
            used: Cell::new(0),
            stopped: Cell::new(None),
        }
    }

    /// Bytes that may still be held before the memory limit.
    pub fn remaining(&self) -> u64 {
        self.memory_limit.saturating_sub(self.used.get())
    }

    /// One step of work: `Err` when the query must stop.
    #[inline(always)]
    pub fn tick(&self) -> Result<(), QueryError> {
        if self.step() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// One step of work that keeps `bytes` more: `Err` when the query must stop.
    #[inline(always)]
    pub fn charge(&self, bytes: u64) -> Result<(), QueryError> {
        if self.charge_step(bytes) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// [`Self::tick`] for callbacks that can only say whether to go on: `false` to stop
    /// (the caller then returns [`Self::check`]'s error).
    #[inline(always)]
    pub fn step(&self) -> bool {
        let n = self.countdown.get();
        if n != 0 {
            self.countdown.set(n - 1);
            return true;
        }
        self.look()
    }

    /// A call of a user's function or aggregate: user code may take milliseconds, so the
    /// clock and the flag are read before every such call (a clock read costs tens of
    /// nanoseconds, far less than the call), and a cancel is seen within one call's time.
    #[inline]
    pub fn user_call(&self) -> Result<(), QueryError> {
        self.check()
    }

    /// [`Self::charge`] for callbacks that can only say whether to go on.
    #[inline(always)]
    pub fn charge_step(&self, bytes: u64) -> bool {
        let used = self.used.get().saturating_add(bytes);
        self.used.set(used);
        if used > self.memory_limit {
            self.stopped.set(Some(Stop::Memory));
            STOPPING.with(|s| s.set(true));
            self.countdown.set(0);
            return false;
        }
        self.step()
    }

    /// Looks at the clock, the flag and the memory now, whatever the countdown says.
    pub fn check(&self) -> Result<(), QueryError> {
        if self.look() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Bytes counted as held now.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// Sets the bytes held to `base` (what enclosing steps hold) plus `bytes` (the relation
    /// just made), dropping the count of what the finished step built and let go.
    pub fn settle(&self, base: u64, bytes: u64) {
        self.used.set(base.saturating_add(bytes));
    }

    /// Counts `bytes` as let go.
    pub fn release(&self, bytes: u64) {
        self.used.set(self.used.get().saturating_sub(bytes));
    }

    #[cold]
    #[inline(never)]
    fn look(&self) -> bool {
        self.countdown.set(CHECK_EVERY);
        if self.stopped.get().is_none() {
            if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
                || self.halt.is_some_and(|h| h.load(Ordering::Relaxed))
                || self.interrupt.is_some_and(|ask| (ask.0)())
            {
                self.stopped.set(Some(Stop::Cancelled));
            } else if self.deadline.is_some_and(|(at, _)| Instant::now() > at) {
                self.stopped.set(Some(Stop::Timeout));
            } else if self.used.get() > self.memory_limit {
                self.stopped.set(Some(Stop::Memory));
            }
        }
        if self.stopped.get().is_some() {
            STOPPING.with(|s| s.set(true));
            // Every later step looks again (and fails at once).
            self.countdown.set(0);
            return false;
        }
        true
    }

    /// The error of a stopped budget.
    #[cold]
    #[inline(never)]
    fn error(&self) -> QueryError {
        match self.stopped.get() {
            Some(Stop::Cancelled) => QueryError::Cancelled,
            Some(Stop::Timeout) => QueryError::Timeout {
                ms: self.deadline.map_or(0, |(_, ms)| ms),
            },
            Some(Stop::Memory) | None => QueryError::ResourceExhausted {
                resource: "memory",
                limit: self.memory_limit,
                used: self.used.get(),
            },
        }
    }
}

/// An instant no query reaches.
fn far_future() -> Instant {
    Instant::now() + std::time::Duration::from_secs(100 * 365 * 24 * 3600)
}

/// The estimated bytes of one row of `width` columns (see the module doc).
#[inline(always)]
pub fn row_bytes(width: usize) -> u64 {
    (std::mem::size_of::<Vec<Value>>() + width * std::mem::size_of::<Value>()) as u64
}

/// The estimated bytes of `rows` rows of `width` columns.
pub fn rows_bytes(rows: usize, width: usize) -> u64 {
    (rows as u64).saturating_mul(row_bytes(width))
}

/// The memory limit of a query when neither it nor its database sets one: a quarter of the
/// physical memory (1 GiB when that cannot be read).
pub fn default_memory_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory().map_or(1 << 30, |m| m / 4))
}

/// The machine's physical memory in bytes.
fn physical_memory() -> Option<u64> {
    // SAFETY: `sysconf` only reads system configuration values; it has no preconditions.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page_size <= 0 {
        return None;
    }
    (pages as u64).checked_mul(page_size as u64)
}

thread_local! {
    /// Whether the query running on this thread has stopped and is returning its error
    /// (from the stop until its budget is dropped).
    static STOPPING: Cell<bool> = const { Cell::new(false) };
}

/// Restores the thread's stopping flag when a run ends (a query run from inside another
/// query's function must not leave the outer one marked).
pub struct RunScope {
    outer: bool,
}

impl RunScope {
    /// Enters a run on this thread.
    pub fn enter() -> RunScope {
        RunScope {
            outer: STOPPING.with(|s| s.replace(false)),
        }
    }
}

impl Drop for RunScope {
    fn drop(&mut self) {
        STOPPING.with(|s| s.set(self.outer));
    }
}

/// Holds a large intermediate value (rows, a hash table, a half-read iterator of rows) so that,
/// if its query stops, it is freed on a background thread instead of in the frame returning
/// the error.
///
/// Why: a stopped query returns through every frame that holds rows, and freeing millions of
/// row vectors one by one took 50-85 ms in a release build, so the caller saw its cancel or
/// timeout honored late although the stop itself was seen within a millisecond. The caller
/// waits for the error, not for the memory: it is freed right after (the freeing thread runs
/// at once). Outside a stop the value is dropped in place as usual.
pub struct FreeAfterStop<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> FreeAfterStop<T> {
    /// Wraps `v`.
    pub fn new(v: T) -> Self {
        FreeAfterStop(Some(v))
    }
}

impl<T: Send + 'static> std::ops::Deref for FreeAfterStop<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_ref().expect("taken only by into_inner")
    }
}

impl<T: Send + 'static> std::ops::DerefMut for FreeAfterStop<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0.as_mut().expect("taken only by into_inner")
    }
}

impl<I: Iterator + Send + 'static> Iterator for FreeAfterStop<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.0.as_mut().and_then(Iterator::next)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.as_ref().map_or((0, Some(0)), Iterator::size_hint)
    }
}

impl<T: Send + 'static> Drop for FreeAfterStop<T> {
    fn drop(&mut self) {
        if let Some(v) = self.0.take() {
            if stopping() {
                free_later(Box::new(v));
            }
        }
    }
}

/// Whether the query on this thread has stopped.
pub fn stopping() -> bool {
    STOPPING.with(Cell::get)
}

/// Frees `garbage` on the query-freeing thread (started on first use); if that thread cannot
/// be started, frees it here.
pub fn free_later(garbage: Box<dyn Send>) {
    static FREER: OnceLock<Option<Mutex<Sender<Box<dyn Send>>>>> = OnceLock::new();
    let freer = FREER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Box<dyn Send>>();
        std::thread::Builder::new()
            .name("datalith-free".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    if let Some(Ok(tx)) = freer.as_ref().map(Mutex::lock) {
        // A failed send hands the garbage back inside the error, which is dropped here.
        let _ = tx.send(garbage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_stops_for_the_first_reason_it_meets_and_stays_stopped() {
        let set = AtomicBool::new(true);
        let unset = AtomicBool::new(false);
        // (timeout ms, cancel flag, memory limit, bytes charged per step, expected category)
        let cases: &[(Option<u64>, Option<&AtomicBool>, u64, u64, Option<&str>)] = &[
            (None, None, u64::MAX, 0, None),
            (None, Some(&unset), u64::MAX, 0, None),
            (
                None,
                Some(&set),
                u64::MAX,
                0,
                Some(":datalith.error/cancelled"),
            ),
            (Some(0), None, u64::MAX, 0, Some(":datalith.error/timeout")),
            (Some(60_000), None, u64::MAX, 0, None),
            (
                None,
                None,
                1000,
                10,
                Some(":datalith.error/resource-exhausted"),
            ),
            (None, None, 1_000_000, 10, None),
        ];
        for (timeout, cancel, limit, bytes, want) in cases {
            let b = Budget::new(*timeout, *cancel, *limit);
            std::thread::sleep(std::time::Duration::from_millis(1));
            let mut first = None;
            for _ in 0..3 * CHECK_EVERY {
                if let Err(e) = b.charge(*bytes) {
                    first = Some(e.category().code);
                    break;
                }
            }
            assert_eq!(first, *want, "{timeout:?} {limit} {bytes}");
            if want.is_some() {
                assert!(b.tick().is_err(), "stays stopped");
                assert!(b.check().is_err(), "stays stopped");
            }
        }
    }

    #[test]
    fn the_default_memory_limit_is_a_quarter_of_physical_memory() {
        let limit = default_memory_limit();
        assert!(limit >= 16 << 20, "{limit}");
        if let Some(m) = physical_memory() {
            assert_eq!(limit, m / 4);
        }
    }

    /// Inside a run that stopped, guarded values are freed on the freeing thread; outside a
    /// stop (and after the run's scope ends) they are freed where they are dropped.
    #[test]
    fn a_stopped_run_frees_its_guarded_values_off_thread() {
        struct Spy(std::sync::mpsc::Sender<Option<String>>);
        impl Drop for Spy {
            fn drop(&mut self) {
                let name = std::thread::current().name().map(str::to_string);
                let _ = self.0.send(name);
            }
        }
        let here = std::thread::current().name().map(str::to_string);
        let (tx, rx) = std::sync::mpsc::channel();
        let cancel = AtomicBool::new(false);
        {
            let _scope = RunScope::enter();
            let budget = Budget::new(None, Some(&cancel), u64::MAX);
            drop(FreeAfterStop::new(Spy(tx.clone())));
            assert_eq!(rx.recv().unwrap(), here, "no stop: freed in place");
            cancel.store(true, Ordering::Relaxed);
            assert!(budget.check().is_err());
            drop(FreeAfterStop::new(Spy(tx.clone())));
            let freed_on = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
            assert_eq!(freed_on.as_deref(), Some("datalith-free"));
        }
        assert!(!stopping(), "the scope's end clears the flag");
        drop(FreeAfterStop::new(Spy(tx)));
        assert_eq!(rx.recv().unwrap(), here);
    }
}
