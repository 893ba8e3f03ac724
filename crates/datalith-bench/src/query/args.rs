//! Command-line arguments of `query` and the sizes they resolve to.

use clap::Args;

use super::tasks::{self, Task};
use super::timing::Plan;
use super::{external, python};
use crate::common::run_args::RunArgs;
use crate::common::BenchError;

/// People in a full run (the seed's 20,000: 100K datoms).
pub const FULL_PEOPLE: u64 = 20_000;
/// Timed seconds per task in a full run.
pub const FULL_SECS: f64 = 3.0;
/// People with `--quick`: every write task stays a few seconds even with an fsync per commit.
pub const QUICK_PEOPLE: u64 = 2_000;
/// Timed seconds per task with `--quick`.
pub const QUICK_SECS: f64 = 0.3;
/// Seconds one run of a many-commit write task may take (full run / quick): past it the
/// cell is reported skipped with the measured per-commit cost.
pub const FULL_CAP_SECS: f64 = 60.0;
pub const QUICK_CAP_SECS: f64 = 2.0;
/// The generator's seed (printed in the summary).
pub const DEFAULT_SEED: u64 = 20_031_120;

/// The in-process peers, in column order.
/// `datalith-nosync` is `Durability::NoSync` (the write-ahead log, its records not synced);
/// `datalith-writemap-mapasync` is
/// `Durability::WriteMapAsync` (`MDB_WRITEMAP | MDB_MAPASYNC`), the nearest to the seed's
/// Datalevin flags (`:writemap :nosync`).
pub const IN_PROCESS: [&str; 5] = [
    "datalith",
    "datalith-nosync",
    "datalith-writemap-mapasync",
    "sqlite",
    "sqlite-nosync",
];

/// In-process peers run only when named: `datalith-all` (durable, every datom in AVE,
/// Datalevin's choice and Datalith's default before 2026-12-08).
pub const BY_NAME_ONLY: [&str; 1] = ["datalith-all"];

/// The peers of `--remote`: Datalith through `datalith serve` (Rust client, loopback,
/// HTTP/1.1), and Datalevin's server (prepared outside the repository, `$DATALEVIN_SERVER_DIR`)
/// through its own client.
pub const REMOTE: [&str; 2] = ["datalith-remote", "datalevin-remote"];

/// `datalith-bench query`: workload Q.
#[derive(Args, Debug, Clone)]
pub struct QueryArgs {
    /// Flags every workload shares: --quick, --out, --peers-dir,
    /// --allow-missing-peers, --passes, --heap.
    #[command(flatten)]
    pub run: RunArgs,
    /// Timed seconds per task (default 3, or 0.3 with --quick), after a warm-up of two thirds
    /// of that for reads (at least 3 calls) and one untimed run for writes, for every peer.
    #[arg(long)]
    pub secs: Option<f64>,
    /// Seconds one run of add-1, add-5 or retract-5 may take before it is stopped and
    /// reported skipped with its per-commit cost (default 60, or 2 with --quick).
    #[arg(long)]
    pub cap_secs: Option<f64>,
    /// Timed runs per task at least (default 3, or 1 with --quick).
    #[arg(long)]
    pub min_runs: Option<usize>,
    /// Tasks to run (default all): init, add-1, add-5, add-all, retract-5, q1, q2, q2-switch,
    /// q3, q4, q5, qpred1, qpred2, lookup-q, lookup-raw.
    #[arg(long, value_delimiter = ',')]
    pub tasks: Vec<String>,
    /// Peers to run (default all): datalith, datalith-nosync, datalith-writemap-mapasync,
    /// sqlite, sqlite-nosync,
    /// datalevin, datomic, datascript; and datalith-remote, datalevin-remote (the default of
    /// --remote, with datalith); datalith-py, datalith-py-nosync, datalevin-py, sqlite3-py,
    /// sqlite3-py-nosync (the default of --python, with datalith).
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<String>,
    /// People to generate (default 20,000, or 2,000 with --quick).
    #[arg(long)]
    pub people: Option<u64>,
    /// Seed of the people generator.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Over loopback: the peers become datalith (embedded), datalith-remote (the real
    /// `datalith serve`, started on 127.0.0.1:0, through datalith-client) and
    /// datalevin-remote (Datalevin's server from $DATALEVIN_SERVER_DIR; not with --quick).
    /// --peers may name them too.
    #[arg(long)]
    pub remote: bool,
    /// From Python: the peers become datalith (the Rust API, for the conversion cost),
    /// datalith-py and datalith-py-nosync (the wheel, built from this checkout by
    /// `bench/peers/install.sh datalith-py`), datalevin-py (Datalevin's PyPI package; not with
    /// --quick), sqlite3-py and sqlite3-py-nosync (Python's `sqlite3`). --peers may name them.
    #[arg(long, conflicts_with = "remote")]
    pub python: bool,
}

/// What the flags resolve to.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub plan: Plan,
    pub passes: usize,
    pub people: u64,
    pub tasks: Vec<Task>,
    pub peers: Vec<String>,
}

impl QueryArgs {
    pub fn resolve(&self) -> Result<Resolved, BenchError> {
        let secs = self.secs.unwrap_or(if self.run.quick {
            QUICK_SECS
        } else {
            FULL_SECS
        });
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(BenchError::Arg {
                arg: "--secs",
                message: format!("{secs} is not a number of seconds"),
            });
        }
        let min_runs = self.min_runs.unwrap_or(if self.run.quick { 1 } else { 3 });
        let tasks = if self.tasks.is_empty() {
            tasks::ALL.to_vec()
        } else {
            let mut out = Vec::new();
            for n in &self.tasks {
                out.push(tasks::by_name(n).ok_or_else(|| BenchError::Arg {
                    arg: "--tasks",
                    message: format!("unknown task {n}"),
                })?);
            }
            // Run order is the table's order, whatever the flag's order.
            tasks::ALL
                .iter()
                .copied()
                .filter(|t| out.contains(t))
                .collect()
        };
        let known: Vec<&str> = IN_PROCESS
            .iter()
            .chain(BY_NAME_ONLY.iter())
            .chain(external::PEERS.iter())
            .chain(REMOTE.iter())
            .chain(python::PEERS.iter())
            .copied()
            .collect();
        let peers: Vec<String> = if self.peers.is_empty() && self.python {
            python::default_peers(self.run.quick)
        } else if self.peers.is_empty() && self.remote {
            // The JVM peer stays out of --quick (a JVM start costs seconds; CI runs --quick).
            ["datalith", "datalith-remote", "datalevin-remote"]
                .iter()
                .filter(|p| !(self.run.quick && **p == "datalevin-remote"))
                .map(|s| s.to_string())
                .collect()
        } else if self.peers.is_empty() {
            IN_PROCESS
                .iter()
                .chain(external::PEERS.iter())
                .map(|s| s.to_string())
                .collect()
        } else {
            for p in &self.peers {
                if !known.contains(&p.as_str()) {
                    return Err(BenchError::Arg {
                        arg: "--peers",
                        message: format!("unknown peer {p} (known: {})", known.join(", ")),
                    });
                }
            }
            known
                .iter()
                .filter(|k| self.peers.iter().any(|p| p == *k))
                .map(|s| s.to_string())
                .collect()
        };
        let people = self.people.unwrap_or(if self.run.quick {
            QUICK_PEOPLE
        } else {
            FULL_PEOPLE
        });
        if people == 0 {
            return Err(BenchError::Arg {
                arg: "--people",
                message: "at least one person".into(),
            });
        }
        let passes = self.run.checked_passes()?;
        Ok(Resolved {
            passes,
            plan: Plan {
                secs,
                cap_secs: self.cap_secs.unwrap_or(if self.run.quick {
                    QUICK_CAP_SECS
                } else {
                    FULL_CAP_SECS
                }),
                min_runs,
                // Set per task by `Plan::for_kind`.
                warm_secs: 0.0,
                warm_min: 1,
            },
            people,
            tasks,
            peers,
        })
    }
}
