//! Command-line arguments of `search` and what they resolve to.

use std::path::PathBuf;

use clap::Args;

use super::queries::Kind;
use crate::common::run_args::RunArgs;
use crate::common::BenchError;

/// Every peer, in table order.
pub const PEERS: [&str; 5] = ["datalith", "lucene", "tantivy", "sqlite-fts5", "datalevin"];

/// `datalith-bench search`: workload S.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Flags every workload shares: --quick, --out, --peers-dir,
    /// --allow-missing-peers, --passes, --heap.
    #[command(flatten)]
    pub run: RunArgs,
    /// Documents to index, the first of the corpus (default all, 126,240; 3,000 with --quick).
    #[arg(long)]
    pub docs: Option<usize>,
    /// Queries of each kind (default 180, 7 kinds: 1,260 queries; 10 with --quick).
    #[arg(long)]
    pub per_kind: Option<usize>,
    /// Query kinds (default all): term-hi, term-mid, term-lo, and, or, phrase, prefix.
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Timed rounds over every query, after one untimed round (default 3; 1 with --quick).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Documents per commit while indexing (default 10,000; 1,000 with --quick).
    #[arg(long)]
    pub batch: Option<usize>,
    /// Peers to run (default all): datalith, lucene, tantivy, sqlite-fts5, datalevin.
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<String>,
    /// The folder holding the GCIDE dictionary (gcide.index, gcide.dict.dz).
    #[arg(long, default_value = super::corpus::DEFAULT_DIR)]
    pub corpus_dir: PathBuf,
    /// Seed of the query generator.
    #[arg(long, default_value_t = 20_261_202)]
    pub seed: u64,
}

/// What the flags resolve to.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub docs: Option<usize>,
    pub per_kind: usize,
    pub kinds: Vec<Kind>,
    pub rounds: usize,
    pub batch: usize,
    pub peers: Vec<String>,
    pub passes: usize,
}

impl SearchArgs {
    pub fn resolve(&self) -> Result<Resolved, BenchError> {
        let quick = self.run.quick;
        let positive = |arg: &'static str, v: usize| {
            if v == 0 {
                Err(BenchError::Arg {
                    arg,
                    message: "at least 1".into(),
                })
            } else {
                Ok(v)
            }
        };
        let kinds = if self.kinds.is_empty() {
            Kind::ALL.to_vec()
        } else {
            let mut v = Vec::new();
            for k in &self.kinds {
                v.push(Kind::from_name(k).ok_or_else(|| BenchError::Arg {
                    arg: "--kinds",
                    message: format!("unknown kind {k}"),
                })?);
            }
            Kind::ALL.into_iter().filter(|k| v.contains(k)).collect()
        };
        for p in &self.peers {
            if !PEERS.contains(&p.as_str()) {
                return Err(BenchError::Arg {
                    arg: "--peers",
                    message: format!("unknown peer {p} (known: {})", PEERS.join(", ")),
                });
            }
        }
        Ok(Resolved {
            docs: match self.docs {
                Some(n) => Some(positive("--docs", n)?),
                None => quick.then_some(3_000),
            },
            per_kind: positive(
                "--per-kind",
                self.per_kind.unwrap_or(if quick { 10 } else { 180 }),
            )?,
            kinds,
            rounds: positive("--rounds", self.rounds.unwrap_or(if quick { 1 } else { 3 }))?,
            batch: positive(
                "--batch",
                self.batch.unwrap_or(if quick { 1_000 } else { 10_000 }),
            )?,
            peers: PEERS
                .iter()
                .filter(|k| self.peers.is_empty() || self.peers.iter().any(|p| p == *k))
                .map(|s| s.to_string())
                .collect(),
            passes: self.run.checked_passes()?,
        })
    }
}
