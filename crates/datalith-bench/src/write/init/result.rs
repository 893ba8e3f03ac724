//! The result of one bulk-load condition: one line of `summary.jsonl` (`"phase":"init"`), the
//! `RESULT` line of a child.

use serde::{Deserialize, Serialize};

use super::InitCondition;

/// One bulk load of the W entities.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct InitResult {
    /// Always `init`, to tell these lines from the pure-write ones in `summary.jsonl`.
    pub phase: String,
    pub condition: String,
    /// What the timed part calls.
    pub timed: String,
    /// Entities asked for.
    pub entities: u64,
    /// Datoms (Datalog stores) or rows (SQLite) loaded.
    pub items: u64,
    /// Wall seconds of the timed part.
    pub seconds: f64,
    /// Wall seconds building the data before the clock started (not compared).
    pub prep_seconds: f64,
    /// CPU seconds of the timed part (the whole process: every thread).
    pub user_s: f64,
    pub sys_s: f64,
    pub peak_rss_mb: f64,
    /// Entities read back (`:k` datoms or rows) from the reopened database.
    pub count: Option<u64>,
    pub count_ok: bool,
    /// What the count check looked at, when it failed.
    pub check: Option<String>,
    /// Why the condition did not run.
    pub skipped: Option<String>,
    /// Why the run failed.
    pub error: Option<String>,
}

impl InitResult {
    /// A result carrying only the condition's identity.
    pub fn new(c: InitCondition, entities: u64) -> InitResult {
        InitResult {
            phase: "init".into(),
            condition: c.name().into(),
            timed: c.timed().into(),
            entities,
            ..InitResult::default()
        }
    }

    /// A condition that did not run.
    pub fn skipped(c: InitCondition, entities: u64, why: &str) -> InitResult {
        InitResult {
            skipped: Some(why.into()),
            ..InitResult::new(c, entities)
        }
    }

    /// A condition whose run failed before producing a result.
    pub fn failed(c: InitCondition, entities: u64, why: &str) -> InitResult {
        InitResult {
            error: Some(why.into()),
            ..InitResult::new(c, entities)
        }
    }

    /// Skipped, or ran and read everything back.
    pub fn ok(&self) -> bool {
        self.skipped.is_some() || (self.error.is_none() && self.count_ok)
    }

    /// Ran and produced a time.
    pub fn measured(&self) -> bool {
        self.skipped.is_none() && self.error.is_none()
    }

    /// A peer (not Datalith).
    pub fn is_peer(&self) -> bool {
        InitCondition::find(&self.condition).is_none_or(InitCondition::peer)
    }
}
