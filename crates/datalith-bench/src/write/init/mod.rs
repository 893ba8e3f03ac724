//! The bulk-load phase of workload W: the 1M entities `{:k long unique, :v uuid string}` loaded
//! in one go into an empty durable database, Datalith's `init_db` against the real Datalevin's
//! `init-db` and SQLite (one transaction), each in its own process.
//!
//! What is timed, equally for all: from the call that creates the database until it is closed
//! again, with the data durable (Datalith: `Database::init_db` then drop; Datalevin: `init-db`
//! then `close-db`; SQLite: open, `CREATE TABLE`, one transaction inserting every row, commit,
//! close). The data (datoms with their entity ids, UUID strings included) is built before the
//! clock starts; each condition first loads [`WARMUP`] entities into a throwaway directory (the
//! JVM's JIT warm-up, done by all alike). A count check on the reopened database follows, untimed.
//!
//! - [`result`]: [`InitResult`], one line of `summary.jsonl`.
//! - [`local`]: the child side of the in-process conditions (Datalith, SQLite).
//! - [`peer`]: Datalevin through `bench/peers/run.sh datalevin init`.
//! - [`report`]: terminal line, summary section and the ratio line.

mod local;
mod peer;
mod report;
mod result;

use std::path::Path;
use std::process::{Command, ExitCode};

pub use report::{markdown, one_line};
pub use result::{merge_passes, InitResult};

use super::args::{ChildArgs, Plan};
use crate::common::child::{self, emit_result};
use crate::common::BenchError;

/// Entities each condition loads (and deletes) before the timed load.
pub const WARMUP: u64 = 20_000;

/// One bulk-load condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitCondition {
    /// `Database::init_db`, durable.
    Datalith,
    /// SQLite, WAL, `synchronous=FULL`, one transaction.
    Sqlite,
    /// The real Datalevin's `init-db` (JVM harness).
    Datalevin,
}

impl InitCondition {
    /// Every condition, in summary order.
    pub const ALL: [InitCondition; 3] = [
        InitCondition::Datalith,
        InitCondition::Sqlite,
        InitCondition::Datalevin,
    ];

    /// Name in file names, the summary and `--conditions`.
    pub fn name(self) -> &'static str {
        match self {
            InitCondition::Datalith => "dl-init",
            InitCondition::Sqlite => "sqlite-init",
            InitCondition::Datalevin => "datalevin-init",
        }
    }

    /// What the timed part calls.
    pub fn timed(self) -> &'static str {
        match self {
            InitCondition::Datalith => "Database::init_db(dir, Durable, schema, datoms) + drop",
            InitCondition::Sqlite => {
                "open + CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT) + BEGIN + INSERT x N + \
                 COMMIT + close"
            }
            InitCondition::Datalevin => "(d/close-db (d/init-db datoms dir schema opts))",
        }
    }

    /// The condition called `name`.
    pub fn find(name: &str) -> Option<InitCondition> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    fn peer(self) -> bool {
        self != InitCondition::Datalith
    }
}

/// The bulk-load conditions `--conditions` names (all of them when it names nothing).
pub fn select(wanted: &[String]) -> Vec<InitCondition> {
    InitCondition::ALL
        .into_iter()
        .filter(|c| wanted.is_empty() || wanted.iter().any(|w| w == c.name()))
        .collect()
}

/// Where the parent runs the phase.
pub struct PhaseRun<'a> {
    pub plan: &'a Plan,
    pub peers: &'a Path,
    pub logs: &'a Path,
    pub keep_db: bool,
    /// Why the JVM peer does not run, if it does not.
    pub jvm_skip: Option<&'static str>,
}

/// Runs one bulk-load condition and returns its result.
pub fn run_condition(c: InitCondition, run: &PhaseRun<'_>) -> InitResult {
    let plan = run.plan;
    let dir = plan.db_dir.join(c.name());
    let _ = std::fs::remove_dir_all(&dir);
    let r = match c {
        InitCondition::Datalevin => match run.jvm_skip {
            Some(why) => InitResult::skipped(c, plan.writes, why),
            None => peer::run(&dir, run),
        },
        _ => run_local(c, &dir, run),
    };
    if !run.keep_db {
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(warmup_dir(&dir));
    }
    r
}

fn warmup_dir(dir: &Path) -> std::path::PathBuf {
    let mut s = dir.as_os_str().to_owned();
    s.push("-warmup");
    s.into()
}

fn run_local(c: InitCondition, dir: &Path, run: &PhaseRun<'_>) -> InitResult {
    let plan = run.plan;
    let log = run.logs.join(format!("{}.stderr", c.name()));
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return InitResult::failed(c, plan.writes, &e.to_string()),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("__write-child")
        .args(["--condition", c.name()])
        .args(["--batch", "1"])
        .args(["--writes", &plan.writes.to_string()])
        .args(["--window", "1"])
        .args(["--seed", &plan.seed.to_string()])
        .arg("--dir")
        .arg(dir)
        .arg("--csv")
        .arg("-");
    match child::run(cmd, c.name(), &log, |_| {}) {
        Err(e) => InitResult::failed(c, plan.writes, &e.to_string()),
        Ok(out) => match out.results.into_iter().next() {
            Some(v) => match serde_json::from_value::<InitResult>(v) {
                Ok(mut r) => {
                    if !out.status.success() && r.error.is_none() {
                        r.error = Some(format!("child exited with {}", out.status));
                    }
                    r
                }
                Err(e) => InitResult::failed(c, plan.writes, &e.to_string()),
            },
            None => InitResult::failed(
                c,
                plan.writes,
                &format!(
                    "child exited with {} and no result; stderr: {}",
                    out.status,
                    child::tail(&log, 5)
                ),
            ),
        },
    }
}

/// The child side (`__write-child --condition dl-init|sqlite-init`), if `a` names one.
pub fn run_child(a: &ChildArgs) -> Option<Result<ExitCode, BenchError>> {
    let c = InitCondition::find(&a.condition)?;
    Some((|| {
        let r = local::run(c, &a.dir, a.writes, a.seed)?;
        emit_result(&r)?;
        if let Some(e) = &r.error {
            eprintln!("{}: {e}", r.condition);
        }
        Ok(if r.ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    })())
}
