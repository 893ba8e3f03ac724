//! The flags every workload command shares (`query`, `write`): run size, output folder and
//! the external peers. Each workload flattens [`RunArgs`] into its own arguments and says in
//! its own flags what `--quick` means for its sizes.

use clap::Args;
use std::path::PathBuf;

use super::BenchError;

/// Flags shared by the workload commands.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// CI smoke size: small workloads and short caps (each workload's size flags give its
    /// --quick figures); peers that need installing are run only if already installed, else
    /// reported skipped.
    #[arg(long)]
    pub quick: bool,
    /// Output directory; each workload writes below it (<out>/query/, <out>/write-kv/, ...).
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Directory of the peer harnesses (default: bench/peers of this repository).
    #[arg(long)]
    pub peers_dir: Option<PathBuf>,
    /// Let a full run succeed although a peer could not run (it is still reported loudly).
    #[arg(long)]
    pub allow_missing_peers: bool,
    /// Passes over every peer or condition, their order rotated by one each pass (default 3,
    /// or 1 with --quick); a cell reports the median pass and the min-max.
    #[arg(long)]
    pub passes: Option<usize>,
    /// Heap of every JVM peer (-Xms and -Xmx) and Node peer (--max-old-space-size), e.g. 4g.
    #[arg(long, default_value = crate::common::jvm::DEFAULT_HEAP)]
    pub heap: String,
}

impl RunArgs {
    /// The passes to run, after checking the shared flags (at least one pass; a heap size
    /// such as 4g).
    pub fn checked_passes(&self) -> Result<usize, BenchError> {
        let passes = self.passes.unwrap_or(if self.quick {
            1
        } else {
            super::passes::MIN_PASSES
        });
        if passes == 0 {
            return Err(BenchError::Arg {
                arg: "--passes",
                message: "at least one pass".into(),
            });
        }
        if super::jvm::heap_mib(&self.heap).is_none() {
            return Err(BenchError::Arg {
                arg: "--heap",
                message: format!("{} is not a size such as 4g or 512m", self.heap),
            });
        }
        Ok(passes)
    }
}
