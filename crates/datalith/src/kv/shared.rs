//! What readers and writers of an open environment hold: its shared state (`core/`) and, with
//! the log, the groups durable there that LMDB does not hold yet (`unapplied/`). Readers pair
//! each snapshot with those groups (`read.rs`); the committer publishes into them
//! (`committer/`); the applier thread holds this weakly ([`Host`]).

use super::core::EnvCore;
use super::unapplied::{Host, Lazy};

pub(crate) struct EnvShared {
    pub(crate) core: EnvCore,
    /// Logged groups not yet written into LMDB (with the log, unless
    /// `EnvOptions::log_apply_later` is off).
    pub(crate) lazy: Option<Lazy>,
}

impl Host for EnvShared {
    fn core(&self) -> &EnvCore {
        &self.core
    }

    fn lazy(&self) -> Option<&Lazy> {
        self.lazy.as_ref()
    }
}
