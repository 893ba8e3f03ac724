//! Where a commit group's time goes, for profiling only: off unless the process starts with
//! `DATALITH_COMMIT_TIMING` set, and then printed to stderr when an environment closes.
//!
//! Each step of `committer::commit_batch` adds its wall-clock time to a process-wide counter;
//! the counters are read and reset together at the print, so two environments closing at once
//! may mix their figures (acceptable for a profiling aid). Off, a step costs one load of a
//! cached flag.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// A step of a commit group.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// Requests' `prepare` (validation and staging, Datalog's transaction work included).
    Prepare,
    /// Writing staged ops into the LMDB transaction (`Stage::apply`).
    StageApply,
    /// The batch slots' shared writes (statistics, counters).
    Slots,
    /// Encoding the group as a log record.
    LogEncode,
    /// Writing the record and its `fdatasync`.
    LogSync,
    /// LMDB's commit (unsynced with a log: the dirty pages' writes and the meta page).
    LmdbCommit,
    /// Completing the requests after the commit (reports, snapshots, wake-ups).
    Finish,
    /// LMDB written later: rebuilding the committer's overlay after the applier moved on.
    CatchUp,
    /// LMDB written later: adding a request's writes to the committer's overlay.
    WorkingAdd,
    /// The whole of `commit_batch`.
    Total,
}

const STEPS: [(Step, &str); 10] = [
    (Step::Prepare, "prepare"),
    (Step::StageApply, "stage-apply"),
    (Step::Slots, "slots"),
    (Step::LogEncode, "log-encode"),
    (Step::LogSync, "log-write-sync"),
    (Step::LmdbCommit, "lmdb-commit"),
    (Step::Finish, "finish"),
    (Step::CatchUp, "catch-up"),
    (Step::WorkingAdd, "working-add"),
    (Step::Total, "commit-total"),
];

static NANOS: [AtomicU64; STEPS.len()] = [const { AtomicU64::new(0) }; STEPS.len()];
static GROUPS: AtomicU64 = AtomicU64::new(0);
static OPS: AtomicU64 = AtomicU64::new(0);

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("DATALITH_COMMIT_TIMING").is_some())
}

/// A started measurement: `None` when timing is off.
pub(crate) fn start() -> Option<Instant> {
    enabled().then(Instant::now)
}

/// Adds the time since `started` to `step`.
pub(crate) fn add(step: Step, started: Option<Instant>) {
    if let Some(t) = started {
        NANOS[step as usize].fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// Counts one committed group of `ops` staged ops.
pub(crate) fn count_group(ops: usize) {
    if enabled() {
        GROUPS.fetch_add(1, Ordering::Relaxed);
        OPS.fetch_add(ops as u64, Ordering::Relaxed);
    }
}

/// Prints the per-group and per-op averages since the last print, then resets them.
pub(crate) fn report() {
    if !enabled() {
        return;
    }
    let groups = GROUPS.swap(0, Ordering::Relaxed);
    let ops = OPS.swap(0, Ordering::Relaxed);
    let nanos = NANOS.each_ref().map(|n| n.swap(0, Ordering::Relaxed));
    if let Some(line) = report_line(groups, ops, &nanos) {
        eprintln!("{line}");
    }
}

/// The printed line: each step's nanoseconds as microseconds per group and per staged op;
/// `None` when no group committed.
fn report_line(groups: u64, ops: u64, nanos: &[u64; STEPS.len()]) -> Option<String> {
    if groups == 0 {
        return None;
    }
    let mut line = format!("commit-timing groups={groups} ops={ops}");
    for (step, name) in STEPS {
        let ns = nanos[step as usize] as f64;
        line += &format!(
            " {name}={:.1}us/group({:.2}us/op)",
            ns / groups as f64 / 1e3,
            ns / ops.max(1) as f64 / 1e3
        );
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_each_step_per_group_and_per_op() {
        let mut nanos = [0u64; STEPS.len()];
        nanos[Step::Prepare as usize] = 30_000;
        nanos[Step::LogSync as usize] = 1_000_000;
        nanos[Step::Total as usize] = 1_200_000;
        let cases: [(u64, u64, Option<&str>); 3] = [
            (0, 0, None),
            (
                10,
                40,
                Some(
                    "commit-timing groups=10 ops=40 prepare=3.0us/group(0.75us/op) \
                     stage-apply=0.0us/group(0.00us/op) slots=0.0us/group(0.00us/op) \
                     log-encode=0.0us/group(0.00us/op) log-write-sync=100.0us/group(25.00us/op) \
                     lmdb-commit=0.0us/group(0.00us/op) finish=0.0us/group(0.00us/op) \
                     catch-up=0.0us/group(0.00us/op) working-add=0.0us/group(0.00us/op) \
                     commit-total=120.0us/group(30.00us/op)",
                ),
            ),
            // Groups that staged nothing still give per-group figures (per op: over one).
            (
                1,
                0,
                Some(
                    "commit-timing groups=1 ops=0 prepare=30.0us/group(30.00us/op) \
                     stage-apply=0.0us/group(0.00us/op) slots=0.0us/group(0.00us/op) \
                     log-encode=0.0us/group(0.00us/op) log-write-sync=1000.0us/group(1000.00us/op) \
                     lmdb-commit=0.0us/group(0.00us/op) finish=0.0us/group(0.00us/op) \
                     catch-up=0.0us/group(0.00us/op) working-add=0.0us/group(0.00us/op) \
                     commit-total=1200.0us/group(1200.00us/op)",
                ),
            ),
        ];
        for (groups, ops, want) in cases {
            assert_eq!(
                report_line(groups, ops, &nanos).as_deref(),
                want,
                "{groups} groups"
            );
        }
    }
}
