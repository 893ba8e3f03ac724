//! The JVM peer of workload W: the real Datalevin, KV (`transact-kv`, `transact-kv-async`)
//! and Datalog (`transact!`, `transact-async`), run by the harness in `bench/peers/datalevin/` (see `bench/peers/README.md` for its line
//! protocol: `RESULT {json}` lines on stdout, its own CSV in our format).
//!
//! Until that harness is on main this reports the conditions as skipped, with the reason.

use std::path::{Path, PathBuf};

use super::args::Plan;
use super::condition::ConditionSpec;
use super::result::RunResult;

/// Where `bench/peers` is: `--peers-dir`, else the nearest `bench/peers` above the current
/// directory, else the one of the source tree this binary was built from.
pub fn peers_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let candidate = dir.join("bench").join("peers");
            if candidate.is_dir() {
                return candidate;
            }
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .join("bench")
        .join("peers")
}

/// Runs a Datalevin condition at one batch size, or says why it cannot.
pub fn run_datalevin(spec: &ConditionSpec, batch: usize, plan: &Plan, peers: &Path) -> RunResult {
    let harness = peers.join("datalevin");
    let why = if !harness.is_dir() {
        format!(
            "peer harness {} not found (the JVM peer has not landed)",
            harness.display()
        )
    } else {
        format!(
            "peer harness {} exists but its write-kv task is not wired into datalith-bench yet",
            harness.display()
        )
    };
    RunResult::skipped(spec, batch, plan.writes, &why)
}
