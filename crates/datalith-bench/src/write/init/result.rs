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
    /// Timed seconds over the passes (median, min, max); `seconds` is their median.
    #[serde(default)]
    pub seconds_spread: Option<crate::common::passes::Spread>,
}

/// One result per condition from the runs of every pass (in the order of `by_pass[0]`): a
/// failed pass fails it, a skipped one leaves it skipped, else the pass with the median
/// seconds stands for it, with the median seconds and the spread.
pub fn merge_passes(by_pass: &[Vec<InitResult>]) -> Vec<InitResult> {
    let Some(first) = by_pass.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|c| {
            let runs: Vec<&InitResult> = by_pass
                .iter()
                .filter_map(|p| p.iter().find(|r| r.condition == c.condition))
                .collect();
            if let Some(bad) = runs.iter().find(|r| !r.ok() || r.skipped.is_some()) {
                return (*bad).clone();
            }
            let secs: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
            match crate::common::passes::Spread::of(&secs) {
                Some(spread) if runs.len() > 1 => {
                    let mut r = runs[spread.median_pass()].clone();
                    r.seconds = spread.median;
                    r.seconds_spread = Some(spread);
                    r
                }
                _ => c.clone(),
            }
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(condition: &str, seconds: f64) -> InitResult {
        InitResult {
            condition: condition.into(),
            seconds,
            count_ok: true,
            ..InitResult::default()
        }
    }

    #[test]
    fn passes_merge_to_the_median_run() {
        let by_pass = vec![
            vec![run("dl-init", 3.0), run("sqlite-init", 1.0)],
            vec![run("sqlite-init", 2.0), run("dl-init", 1.0)],
            vec![run("dl-init", 2.0), run("sqlite-init", 3.0)],
        ];
        let got = merge_passes(&by_pass);
        let summary: Vec<(String, f64, f64, f64)> = got
            .iter()
            .map(|r| {
                let s = r.seconds_spread.as_ref().unwrap();
                (r.condition.clone(), r.seconds, s.min, s.max)
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("dl-init".to_string(), 2.0, 1.0, 3.0),
                ("sqlite-init".to_string(), 2.0, 1.0, 3.0),
            ]
        );
        let mut failed = run("dl-init", 1.0);
        failed.error = Some("boom".into());
        let got = merge_passes(&[vec![run("dl-init", 2.0)], vec![failed]]);
        assert_eq!(got[0].error.as_deref(), Some("boom"));
        assert!(merge_passes(&[]).is_empty());
    }
}
