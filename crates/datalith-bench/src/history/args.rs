//! Command-line arguments of `history` and the sizes they resolve to.

use clap::Args;

use super::data::Size;
use super::rows::{self, Row};
use super::timing::Plan;
use super::{datalith, external};
use crate::common::run_args::RunArgs;
use crate::common::BenchError;

/// A full run: 10,000 items, each updated 100 times (1M assertions), 1,000 items a
/// transaction (1,000 transactions).
pub const FULL: Size = Size {
    entities: 10_000,
    updates: 100,
    batch: 1_000,
};
/// `--quick`: 1,000 items, 10 updates, 100 a transaction (100 transactions).
pub const QUICK: Size = Size {
    entities: 1_000,
    updates: 10,
    batch: 100,
};
/// Timed seconds per row (full / quick).
pub const FULL_SECS: f64 = 3.0;
pub const QUICK_SECS: f64 = 0.3;
/// The generator's seed (printed in the summary).
pub const DEFAULT_SEED: u64 = 20_261_201;

/// `datalith-bench history`: workload H.
#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Flags every workload shares: --quick, --out, --peers-dir,
    /// --allow-missing-peers, --passes, --heap.
    #[command(flatten)]
    pub run: RunArgs,
    /// Items (default 10,000, or 1,000 with --quick).
    #[arg(long)]
    pub entities: Option<u64>,
    /// Versions of each item: the first assertion and its updates (default 100, or 10 with
    /// --quick).
    #[arg(long)]
    pub updates: Option<u64>,
    /// Items per transaction (default 1,000, or 100 with --quick).
    #[arg(long)]
    pub batch: Option<u64>,
    /// Timed seconds per row (default 3, or 0.3 with --quick), after a warm-up of two thirds
    /// of that (at least 3 calls), for every peer.
    #[arg(long)]
    pub secs: Option<f64>,
    /// Timed calls per row at least (default 3, or 1 with --quick).
    #[arg(long)]
    pub min_runs: Option<usize>,
    /// Rows to run (default all): current-agg, asof25-agg, asof50-agg, asof75-agg,
    /// current-lookup, asof25-lookup, asof50-lookup, asof75-lookup, entity-history,
    /// tx-range, tx-data-q.
    #[arg(long, value_delimiter = ',')]
    pub rows: Vec<String>,
    /// Peers to run (default all): datalith, datomic.
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<String>,
    /// Seed of the value generator.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
}

/// What the flags resolve to.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub size: Size,
    pub plan: Plan,
    pub passes: usize,
    pub rows: Vec<Row>,
    pub peers: Vec<String>,
}

impl HistoryArgs {
    pub fn resolve(&self) -> Result<Resolved, BenchError> {
        let quick = self.run.quick;
        let base = if quick { QUICK } else { FULL };
        let size = Size {
            entities: self.entities.unwrap_or(base.entities),
            updates: self.updates.unwrap_or(base.updates),
            batch: self.batch.unwrap_or(base.batch),
        };
        for (arg, n) in [
            ("--entities", size.entities),
            ("--updates", size.updates),
            ("--batch", size.batch),
        ] {
            if n == 0 {
                return Err(BenchError::Arg {
                    arg,
                    message: "at least 1".into(),
                });
            }
        }
        let secs = self
            .secs
            .unwrap_or(if quick { QUICK_SECS } else { FULL_SECS });
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(BenchError::Arg {
                arg: "--secs",
                message: format!("{secs} is not a number of seconds"),
            });
        }
        let rows = if self.rows.is_empty() {
            rows::ALL.to_vec()
        } else {
            let mut want = Vec::new();
            for n in &self.rows {
                want.push(rows::by_name(n).ok_or_else(|| BenchError::Arg {
                    arg: "--rows",
                    message: format!("unknown row {n}"),
                })?);
            }
            rows::ALL
                .iter()
                .copied()
                .filter(|r| want.contains(r))
                .collect()
        };
        let known: Vec<&str> = std::iter::once(datalith::LABEL)
            .chain(external::PEERS)
            .collect();
        for p in &self.peers {
            if !known.contains(&p.as_str()) {
                return Err(BenchError::Arg {
                    arg: "--peers",
                    message: format!("unknown peer {p} (known: {})", known.join(", ")),
                });
            }
        }
        let peers = known
            .iter()
            .filter(|k| self.peers.is_empty() || self.peers.iter().any(|p| p == *k))
            .map(|s| s.to_string())
            .collect();
        Ok(Resolved {
            size,
            plan: Plan {
                secs,
                min_runs: self.min_runs.unwrap_or(if quick { 1 } else { 3 }),
            },
            passes: self.run.checked_passes()?,
            rows,
            peers,
        })
    }
}
