//! What wakes the applier thread, and how long it may wait.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::limits::{
    UNAPPLIED_BUSY_OPS, UNAPPLIED_HURRY, UNAPPLIED_HURRY_AGE, UNAPPLIED_HURRY_OPS,
};

/// What wakes the applier.
pub(super) struct Signal {
    pub(super) state: Mutex<SignalState>,
    pub(super) wake: Condvar,
    /// A reader met waiting groups: apply without waiting for the age limit.
    pub(super) nudged: AtomicBool,
    /// Until when (nanoseconds after `epoch`) groups are applied soon after they are
    /// published ([`hurried_due`]), because readers recently met waiting ones
    /// (`Signal::nudge`).
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

    /// Asks for the waiting groups to be applied now, and the groups published in the next
    /// `UNAPPLIED_HURRY` soon after they come ([`hurried_due`]). Waking the sleeping applier
    /// costs the reader a system call and a cross-core wake-up (in a VM, an exit to the
    /// host); within a hurry the applier is woken by each publish anyway (the first group
    /// after an apply), so a reader only wakes it when the hurry had run out.
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
    pub(super) fn hurried(&self) -> bool {
        self.hurry_until.load(Ordering::Acquire) >= self.now()
    }
}

/// How long the applier may still wait, with `ops` waiting and the oldest group `age` old:
/// until `max_age`, or `busy_age` when many ops came in by then.
pub(super) fn due(ops: usize, age: Duration, max_age: Duration, busy_age: Duration) -> Duration {
    let wait = match ops >= UNAPPLIED_BUSY_OPS {
        true => busy_age,
        false => max_age,
    };
    wait.saturating_sub(age)
}

/// How long the applier may still wait while a hurry is on, with `ops` waiting and the
/// oldest group `age` old (`UNAPPLIED_HURRY_AGE`, `UNAPPLIED_HURRY_OPS`).
pub(super) fn hurried_due(ops: usize, age: Duration) -> Duration {
    match ops >= UNAPPLIED_HURRY_OPS {
        true => Duration::ZERO,
        false => UNAPPLIED_HURRY_AGE.saturating_sub(age),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_hurry_applies_a_few_writes_together_not_each_at_once() {
        let ms = Duration::from_millis;
        let few = UNAPPLIED_HURRY_OPS - 1;
        // (ops waiting, the oldest's age, how long the applier may still wait)
        let cases = [
            (1, ms(0), UNAPPLIED_HURRY_AGE),
            (few, ms(1), UNAPPLIED_HURRY_AGE - ms(1)),
            (few, UNAPPLIED_HURRY_AGE, ms(0)),
            (few, ms(500), ms(0)),
            (UNAPPLIED_HURRY_OPS, ms(0), ms(0)),
        ];
        for (ops, age, want) in cases {
            assert_eq!(hurried_due(ops, age), want, "{ops} ops, {age:?} old");
        }
    }
}
