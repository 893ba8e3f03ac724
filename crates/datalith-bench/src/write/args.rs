//! Command-line arguments of `write` and of its hidden per-condition child, and the sizes
//! they resolve to.

use clap::Args;
use std::path::PathBuf;

use super::condition::{self, ConditionSpec, Family};
use super::init::{self, InitCondition};
use crate::common::run_args::RunArgs;
use crate::common::BenchError;

/// Writes per condition in a full run (the seeds' size).
pub const FULL_WRITES: u64 = 1_000_000;
/// Writes per condition with `--quick` (CI smoke run).
pub const QUICK_WRITES: u64 = 2_000;
/// Per-phase time cap with `--quick` unless `--max-secs` says otherwise.
pub const QUICK_MAX_SECS: f64 = 4.0;
/// Rows of the CSV: one every this many writes in a full run.
pub const FULL_WINDOW: u64 = 10_000;
/// Batch sizes of the seeds.
pub const DEFAULT_BATCHES: [usize; 4] = [1, 10, 100, 1000];
/// Seed of the value generator and of the mixed phase's key choice.
pub const DEFAULT_SEED: u64 = 20_250_402;
/// Warm-up writes (and mixed iterations) per run in a full run, before the timed ones.
pub const FULL_WARMUP: u64 = 50_000;
/// Cap on the seconds of each warm-up (full run / `--quick`).
pub const FULL_WARMUP_SECS: f64 = 10.0;
pub const QUICK_WARMUP_SECS: f64 = 0.5;

/// `datalith-bench write`: workload W.
#[derive(Args, Debug, Clone)]
pub struct WriteArgs {
    /// Flags every workload shares: --quick, --out, --peers-dir,
    /// --allow-missing-peers, --passes, --heap.
    #[command(flatten)]
    pub run: RunArgs,
    /// The key-value conditions (Datalith KV against SQLite, raw LMDB, RocksDB, Datalevin KV).
    /// Without it: the Datalog conditions (dl-sync, dl-async against SQLite and Datalevin).
    #[arg(long)]
    pub kv: bool,
    /// Writes per condition (default 1,000,000, or 2,000 with --quick).
    #[arg(long)]
    pub writes: Option<u64>,
    /// Cap on the seconds of each phase (pure write, mixed) of each condition; a capped run
    /// is marked in the summary.
    #[arg(long)]
    pub max_secs: Option<f64>,
    /// Batch sizes (records per call), e.g. 1,10.
    #[arg(long, value_delimiter = ',')]
    pub batches: Vec<usize>,
    /// Conditions to run: names or prefixes (kv-async, sqlite); default all.
    #[arg(long, value_delimiter = ',')]
    pub conditions: Vec<String>,
    /// Seed of the UUID values and of the mixed phase's keys.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Writes per CSV row (default 10,000, or writes/10 for smaller runs).
    #[arg(long)]
    pub window: Option<u64>,
    /// Mixed-phase iterations after the batch-1 pure write (default: as many as writes; 0
    /// skips the phase).
    #[arg(long)]
    pub mixed: Option<u64>,
    /// Where the databases go (default <out>/write-kv/db); each run's is deleted after it.
    #[arg(long)]
    pub db_dir: Option<PathBuf>,
    /// Keep each run's database directory.
    #[arg(long)]
    pub keep_db: bool,
    /// Run the JVM peers (Datalevin) in a --quick run too (each JVM start costs ~10 s).
    #[arg(long)]
    pub jvm_peers: bool,
    /// Do not run the JVM peers (reported as skipped; a full run then needs
    /// --allow-missing-peers).
    #[arg(long)]
    pub skip_jvm_peers: bool,
    /// Untimed warm-up writes of every condition before its timed run (into a throwaway
    /// store, in the same process), and warm-up iterations before each mixed phase (default
    /// 50,000, or writes/10 when smaller).
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Cap on the seconds of each warm-up (default 10, or 0.5 with --quick).
    #[arg(long)]
    pub warmup_secs: Option<f64>,
    /// Run only the bulk-load phase (Datalog: `init_db` against Datalevin's `init-db` and
    /// SQLite, `--writes` entities); `--conditions` may pick among dl-init, sqlite-init,
    /// datalevin-init.
    #[arg(long, conflicts_with_all = ["kv", "no_init"])]
    pub init_only: bool,
    /// Skip the bulk-load phase (which a Datalog run does first by default).
    #[arg(long)]
    pub no_init: bool,
    /// Over loopback: dl-sync (embedded `transact`), dl-remote (the real `datalith serve` on
    /// 127.0.0.1:0 through datalith-client), datalevin-default and datalevin-remote
    /// (Datalevin's server from $DATALEVIN_SERVER_DIR; a JVM peer, so not with --quick unless
    /// --jvm-peers). No bulk-load
    /// or mixed phase.
    #[arg(long, conflicts_with_all = ["kv", "init_only"])]
    pub remote: bool,
}

/// Hidden child subcommand: one condition at one batch size.
#[derive(Args, Debug, Clone)]
pub struct ChildArgs {
    #[arg(long)]
    pub condition: String,
    #[arg(long)]
    pub batch: usize,
    #[arg(long)]
    pub writes: u64,
    #[arg(long)]
    pub window: u64,
    #[arg(long)]
    pub max_secs: Option<f64>,
    #[arg(long)]
    pub seed: u64,
    #[arg(long, default_value_t = 0)]
    pub mixed: u64,
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    #[arg(long, default_value_t = 0.0)]
    pub warmup_secs: f64,
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub csv: PathBuf,
}

/// What a `write` invocation will run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub family: Family,
    pub quick: bool,
    pub writes: u64,
    pub window: u64,
    pub max_secs: Option<f64>,
    pub batches: Vec<usize>,
    pub conditions: Vec<ConditionSpec>,
    pub mixed: u64,
    pub seed: u64,
    pub out: PathBuf,
    pub db_dir: PathBuf,
    /// Bulk-load conditions to run first (empty: no bulk-load phase).
    pub init: Vec<InitCondition>,
    /// Passes over the conditions, the order rotated each pass.
    pub passes: usize,
    /// The JVM peers' heap (`-Xms` = `-Xmx`).
    pub heap: String,
    /// Warm-up writes / mixed iterations per run, and the cap on their seconds.
    pub warmup: u64,
    pub warmup_secs: f64,
}

impl Plan {
    /// Resolves defaults and checks the arguments.
    pub fn from_args(a: &WriteArgs) -> Result<Plan, BenchError> {
        let family = if a.kv {
            Family::Kv
        } else if a.remote {
            Family::Remote
        } else {
            Family::Datalog
        };
        if a.remote && a.mixed.is_some_and(|m| m > 0) {
            return Err(BenchError::Arg {
                arg: "--mixed",
                message: "the mixed phase does not run with --remote".into(),
            });
        }
        let writes = a.writes.unwrap_or(if a.run.quick {
            QUICK_WRITES
        } else {
            FULL_WRITES
        });
        if writes == 0 {
            return Err(BenchError::Arg {
                arg: "--writes",
                message: "must be at least 1".into(),
            });
        }
        let window = a
            .window
            .unwrap_or(if a.run.quick || writes < 10 * FULL_WINDOW {
                (writes / 10).max(1)
            } else {
                FULL_WINDOW
            })
            .max(1);
        let max_secs = a.max_secs.or(a.run.quick.then_some(QUICK_MAX_SECS));
        if max_secs.is_some_and(|s| s.is_nan() || s <= 0.0) {
            return Err(BenchError::Arg {
                arg: "--max-secs",
                message: "must be positive".into(),
            });
        }
        let batches = if a.batches.is_empty() {
            DEFAULT_BATCHES.to_vec()
        } else {
            a.batches.clone()
        };
        if batches.contains(&0) {
            return Err(BenchError::Arg {
                arg: "--batches",
                message: "batch sizes must be at least 1".into(),
            });
        }
        // The bulk-load conditions are picked by their own names (dl-init, ...); a selection
        // naming none of them leaves the phase out, one naming only them leaves out the rest.
        let (init_names, names): (Vec<String>, Vec<String>) = a
            .conditions
            .iter()
            .cloned()
            .partition(|w| InitCondition::find(w).is_some());
        let (conditions, init) = if a.init_only {
            if !names.is_empty() {
                return Err(BenchError::Arg {
                    arg: "--conditions",
                    message: format!(
                        "with --init-only only dl-init, sqlite-init, datalevin-init; not {}",
                        names.join(", ")
                    ),
                });
            }
            (Vec::new(), init::select(&init_names))
        } else if a.no_init || family != Family::Datalog {
            (condition::select(family, &a.conditions)?, Vec::new())
        } else if a.conditions.is_empty() {
            (condition::select(family, &[])?, init::select(&[]))
        } else {
            let conditions = if names.is_empty() {
                Vec::new()
            } else {
                condition::select(family, &names)?
            };
            let init = if init_names.is_empty() {
                Vec::new()
            } else {
                init::select(&init_names)
            };
            (conditions, init)
        };
        let passes = a.run.checked_passes()?;
        let warmup = a.warmup.unwrap_or((writes / 10).min(FULL_WARMUP));
        let warmup_secs = a.warmup_secs.unwrap_or(if a.run.quick {
            QUICK_WARMUP_SECS
        } else {
            FULL_WARMUP_SECS
        });
        let out = a.run.out.join(family.out_name());
        let db_dir = a.db_dir.clone().unwrap_or_else(|| out.join("db"));
        Ok(Plan {
            family,
            quick: a.run.quick,
            writes,
            window,
            max_secs,
            batches,
            conditions,
            mixed: if family == Family::Remote {
                0
            } else {
                a.mixed.unwrap_or(writes)
            },
            seed: a.seed,
            out,
            db_dir,
            init,
            passes,
            heap: a.run.heap.clone(),
            warmup,
            warmup_secs,
        })
    }
}
