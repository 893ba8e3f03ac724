//! What wakes the applier thread, and its loop.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::super::env::EnvShared;
use super::lock;
use crate::limits::{UNAPPLIED_BUSY_OPS, UNAPPLIED_HURRY, UNAPPLIED_MAX_GROUPS, UNAPPLIED_MAX_OPS};

/// What wakes the applier.
pub(super) struct Signal {
    pub(super) state: Mutex<SignalState>,
    pub(super) wake: Condvar,
    /// A reader met waiting groups: apply without waiting for the age limit.
    nudged: AtomicBool,
    /// Until when (nanoseconds after `epoch`) groups are applied as soon as they are
    /// published, because readers recently met waiting ones (`Signal::nudge`).
    hurry_until: AtomicU64,
    epoch: Instant,
}

impl Default for Signal {
    fn default() -> Signal {
        Signal {
            state: Mutex::default(),
            wake: Condvar::new(),
            nudged: AtomicBool::new(false),
            hurry_until: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

#[derive(Default)]
pub(super) struct SignalState {
    pub(super) stop: bool,
}

impl Signal {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Asks for the waiting groups to be applied soon, and the groups published in the next
    /// `UNAPPLIED_HURRY` as soon as they come. Waking the sleeping applier costs the reader a
    /// system call and a cross-core wake-up (in a VM, an exit to the host); within a hurry
    /// the applier is woken by each publish anyway (the first group after an apply) and
    /// applies at once, so a reader only wakes it when the hurry had run out.
    pub(super) fn nudge(&self) {
        let now = self.now();
        let until =
            now.saturating_add(u64::try_from(UNAPPLIED_HURRY.as_nanos()).unwrap_or(u64::MAX));
        let was = self.hurry_until.swap(until, Ordering::AcqRel);
        if was < now && !self.nudged.swap(true, Ordering::AcqRel) {
            self.wake.notify_one();
        }
    }

    /// Whether readers asked, recently, for groups to be applied as they come.
    fn hurried(&self) -> bool {
        self.hurry_until.load(Ordering::Acquire) >= self.now()
    }
}

/// How long the applier may still wait, with `ops` waiting and the oldest group `age` old:
/// until `max_age`, or `busy_age` when many ops came in by then.
fn due(ops: usize, age: Duration, max_age: Duration, busy_age: Duration) -> Duration {
    let wait = match ops >= UNAPPLIED_BUSY_OPS {
        true => busy_age,
        false => max_age,
    };
    wait.saturating_sub(age)
}

/// The applier's loop: applies once the oldest group is `max_age` old (`busy_age` when many
/// ops wait), the groups hold `UNAPPLIED_MAX_OPS` ops or number `UNAPPLIED_MAX_GROUPS`, or a
/// reader asked.
pub(super) fn run_applier(shared: Weak<EnvShared>, signal: Arc<Signal>) {
    loop {
        let Some(env) = shared.upgrade() else { return };
        let Some(lazy) = env.lazy.as_ref() else {
            return;
        };
        let max_age = lazy.max_age;
        let busy_age = lazy.busy_age();
        // Read under the signal's lock, which `publish` takes to wake us: no wake-up is lost
        // between this look and the wait.
        let state = lock(&signal.state);
        if state.stop {
            return;
        }
        let version = lazy.current();
        let due = match version.first_at {
            None => Duration::from_secs(1),
            Some(_) if version.ops >= UNAPPLIED_MAX_OPS => Duration::ZERO,
            Some(_) if version.len >= UNAPPLIED_MAX_GROUPS => Duration::ZERO,
            Some(_) if signal.nudged.swap(false, Ordering::AcqRel) => Duration::ZERO,
            Some(_) if signal.hurried() => Duration::ZERO,
            Some(at) => due(version.ops, at.elapsed(), max_age, busy_age),
        };
        drop(version);
        if due.is_zero() {
            drop(state);
            // A failure poisons the environment (or is a growth blocked by a snapshot, met
            // again by the next attempt); writers see it on their next group.
            let applied = {
                let held = lock(&lazy.applying);
                lazy.apply_held(&env, &held, true, true)
            };
            lazy.drop_discarded();
            if applied.is_err() {
                drop(env);
                std::thread::sleep(max_age.max(Duration::from_millis(10)));
            }
            continue;
        }
        drop(env);
        let (state, _) = signal
            .wake
            .wait_timeout(state, due)
            .unwrap_or_else(|p| p.into_inner());
        if state.stop {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Lazy;
    use super::*;
    use crate::limits::UNAPPLIED_BUSY_AGE;

    #[test]
    fn a_reader_wakes_the_applier_only_when_no_hurry_is_on() {
        let signal = Signal::default();
        assert!(!signal.hurried());
        signal.nudge();
        assert!(
            signal.nudged.load(Ordering::Acquire),
            "the first nudge wakes"
        );
        assert!(signal.hurried());
        // The applier takes the nudge; a reader within the hurry leaves it to the publishes.
        signal.nudged.store(false, Ordering::Release);
        let far = signal.now() + 3_600_000_000_000;
        signal.hurry_until.store(far, Ordering::Release);
        signal.nudge();
        assert!(
            !signal.nudged.load(Ordering::Acquire),
            "a hurried nudge does not wake"
        );
        // Once the hurry ran out, the next reader wakes the applier again.
        signal.hurry_until.store(0, Ordering::Release);
        assert!(!signal.hurried());
        signal.nudge();
        assert!(signal.nudged.load(Ordering::Acquire));
    }

    #[test]
    fn groups_wait_longer_only_when_many_ops_came_in() {
        let ms = Duration::from_millis;
        let (quiet, busy) = (UNAPPLIED_BUSY_OPS - 1, UNAPPLIED_BUSY_OPS);
        // (ops waiting, age of the oldest, max age, busy age, still to wait)
        let cases = [
            (quiet, ms(5), ms(20), ms(250), ms(15)),
            (quiet, ms(20), ms(20), ms(250), ms(0)),
            (busy, ms(20), ms(20), ms(250), ms(230)),
            (busy, ms(300), ms(20), ms(250), ms(0)),
            (busy, ms(0), ms(0), ms(0), ms(0)),
        ];
        for (ops, age, max_age, busy_age, want) in cases {
            assert_eq!(due(ops, age, max_age, busy_age), want, "{ops} {age:?}");
        }
        let lazy = |d| Lazy::new(d, false).busy_age();
        assert_eq!(lazy(ms(0)), ms(0));
        assert_eq!(lazy(ms(20)), UNAPPLIED_BUSY_AGE);
        assert_eq!(lazy(ms(3_600_000)), ms(3_600_000));
    }
}
