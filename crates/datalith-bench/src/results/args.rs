//! Flags of `datalith-bench results`.

use clap::Args;
use std::path::PathBuf;

/// `datalith-bench results`: writes (or checks) `RESULTS.md` and the README's block.
#[derive(Args, Debug, Clone)]
pub struct ResultsArgs {
    /// The directory of the published results folders.
    #[arg(long, default_value = "bench/results")]
    pub dir: PathBuf,
    /// The README whose performance block (between `<!-- results:begin -->` and
    /// `<!-- results:end -->`) is generated.
    #[arg(long, default_value = "README.md")]
    pub readme: PathBuf,
    /// Write nothing: fail if a folder is not whole (a peer missing, a count check not
    /// passed, a chart missing) or if `RESULTS.md` or the README's block differ from what the
    /// folders give.
    #[arg(long)]
    pub check: bool,
}
