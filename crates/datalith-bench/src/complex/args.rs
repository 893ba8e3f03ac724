//! Command-line arguments of `complex` and what they resolve to.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{external, queries};
use crate::common::run_args::RunArgs;
use crate::common::BenchError;

/// The in-process peers, in column order (PostgreSQL first: the reference).
pub const IN_PROCESS: [&str; 3] = ["postgres", "datalith", "sqlite"];

/// `datalith-bench complex`: TPC-H's 22 queries in Datalog and SQL.
#[derive(Args, Debug, Clone)]
pub struct ComplexArgs {
    /// Flags every workload shares: --quick, --out, --peers-dir, --allow-missing-peers,
    /// --passes, --heap.
    #[command(flatten)]
    pub run: RunArgs,
    /// TPC-H scale factor (default 0.1, or 0.01 with --quick): 0.1 is ~11M datoms, 1 ~110M.
    #[arg(long)]
    pub sf: Option<f64>,
    /// Queries to run (default all): q1 .. q22.
    #[arg(long, value_delimiter = ',')]
    pub queries: Vec<String>,
    /// Peers to run (default all): postgres, datalith, sqlite, and the external datalevin,
    /// duckdb (through bench/peers/run.sh; skipped while they have no harness).
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<String>,
    /// Timed seconds per query, peer and pass after its warm-up run (default 1, or 0 with
    /// --quick: one timed run); the pass's figure is the median run.
    #[arg(long)]
    pub secs: Option<f64>,
    /// Seconds one run of a query may take before it is stopped and reported timed out.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_secs: f64,
    /// Where the generated data and the loaded Datalith and SQLite databases are kept and
    /// reused (one folder per scale factor).
    #[arg(long, default_value = "bench-results/tpch")]
    pub data_dir: PathBuf,
    /// The query files (default: bench/complex of this repository).
    #[arg(long)]
    pub queries_dir: Option<PathBuf>,
    /// Do not start PostgreSQL: answers are compared with SQLite's instead (said in the
    /// summary).
    #[arg(long)]
    pub no_postgres: bool,
    /// Leave out explain.md (Datalith's plan of each query: one more untimed run of each).
    #[arg(long)]
    pub no_explain: bool,
}

/// What the flags resolve to.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub sf: f64,
    pub passes: usize,
    pub secs: f64,
    pub limit: Duration,
    pub queries: Vec<&'static str>,
    pub peers: Vec<String>,
    pub queries_dir: PathBuf,
}

impl ComplexArgs {
    pub fn resolve(&self) -> Result<Resolved, BenchError> {
        let sf = self.sf.unwrap_or(if self.run.quick { 0.01 } else { 0.1 });
        if !(sf.is_finite() && sf > 0.0 && sf <= 100.0) {
            return Err(BenchError::Arg {
                arg: "--sf",
                message: format!("{sf} is not a scale factor (0 < SF <= 100)"),
            });
        }
        let secs = self.secs.unwrap_or(if self.run.quick { 0.0 } else { 1.0 });
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(BenchError::Arg {
                arg: "--secs",
                message: format!("{secs} is not a number of seconds"),
            });
        }
        if !(self.timeout_secs.is_finite() && self.timeout_secs > 0.0) {
            return Err(BenchError::Arg {
                arg: "--timeout-secs",
                message: format!("{} is not a number of seconds", self.timeout_secs),
            });
        }
        let known: Vec<&str> = IN_PROCESS
            .iter()
            .chain(external::PEERS.iter())
            .copied()
            .collect();
        for p in &self.peers {
            if !known.contains(&p.as_str()) {
                return Err(BenchError::Arg {
                    arg: "--peers",
                    message: format!("unknown peer {p} (known: {})", known.join(", ")),
                });
            }
        }
        let peers: Vec<String> = known
            .iter()
            .filter(|k| self.peers.is_empty() || self.peers.iter().any(|p| p == *k))
            .filter(|k| !(self.no_postgres && **k == "postgres"))
            .map(|s| s.to_string())
            .collect();
        if peers.is_empty() {
            return Err(BenchError::Arg {
                arg: "--peers",
                message: "no peer left to run".into(),
            });
        }
        Ok(Resolved {
            sf,
            passes: self.run.checked_passes()?,
            secs,
            limit: Duration::from_secs_f64(self.timeout_secs),
            queries: queries::pick(&self.queries)?,
            peers,
            queries_dir: self
                .queries_dir
                .clone()
                .unwrap_or_else(queries::default_dir),
        })
    }
}
