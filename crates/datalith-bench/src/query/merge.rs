//! Merging the passes of workload Q: one cell per (peer, task) from the cells every pass
//! gave. Invariant: a merged cell is `Measured` only when every pass measured it with the same
//! result count; a failure in any pass fails the cell, and a pass that skipped it (a task the
//! peer does not have, a run over its cap) leaves the cell skipped.

use super::peer::{Cell, Outcome};
use super::tasks::Task;
use super::timing::Measured;
use crate::common::passes::Spread;

/// One cell per (peer, task) present in any pass, in table order.
pub fn passes(peers: &[String], tasks: &[Task], by_pass: &[Vec<Cell>]) -> Vec<Cell> {
    let mut out = Vec::new();
    for p in peers {
        for t in tasks {
            let got: Vec<&Outcome> = by_pass
                .iter()
                .filter_map(|cells| cells.iter().find(|c| &c.peer == p && c.task == t.name))
                .map(|c| &c.outcome)
                .collect();
            if got.is_empty() {
                continue;
            }
            out.push(Cell {
                peer: p.clone(),
                task: t.name.to_string(),
                outcome: merge(&got),
            });
        }
    }
    out
}

/// The outcome of one cell over its passes.
fn merge(got: &[&Outcome]) -> Outcome {
    if let Some((i, why)) = got.iter().enumerate().find_map(|(i, o)| match o {
        Outcome::Failed(why) => Some((i, why)),
        _ => None,
    }) {
        return Outcome::Failed(format!("pass {}: {why}", i + 1));
    }
    if let Some(why) = got.iter().find_map(|o| match o {
        Outcome::Skipped(why) => Some(why),
        _ => None,
    }) {
        return Outcome::Skipped(why.clone());
    }
    let ms: Vec<&Measured> = got
        .iter()
        .filter_map(|o| match o {
            Outcome::Measured(m) => Some(m),
            _ => None,
        })
        .collect();
    let count = ms[0].count;
    if let Some(other) = ms.iter().find(|m| m.count != count) {
        return Outcome::Failed(format!(
            "result count changed between passes: {count} then {}",
            other.count
        ));
    }
    let medians: Vec<f64> = ms.iter().map(|m| m.median_ms).collect();
    match Spread::of(&medians) {
        Some(s) => Outcome::Measured(Measured {
            median_ms: s.median,
            min_ms: s.min,
            max_ms: s.max,
            passes: ms.len(),
            runs: ms.iter().map(|m| m.runs).sum(),
            count,
        }),
        None => Outcome::Failed("no finite median in any pass".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ms: f64, count: u64) -> Outcome {
        Outcome::Measured(Measured {
            median_ms: ms,
            min_ms: ms,
            max_ms: ms,
            passes: 1,
            runs: 2,
            count,
        })
    }

    #[test]
    fn merge_table() {
        let skipped = Outcome::Skipped("no init".into());
        let failed = Outcome::Failed("boom".into());
        let cases: Vec<(Vec<Outcome>, Outcome)> = vec![
            (
                vec![m(3.0, 5), m(1.0, 5), m(2.0, 5)],
                Outcome::Measured(Measured {
                    median_ms: 2.0,
                    min_ms: 1.0,
                    max_ms: 3.0,
                    passes: 3,
                    runs: 6,
                    count: 5,
                }),
            ),
            (
                vec![m(1.0, 5), failed.clone()],
                Outcome::Failed("pass 2: boom".into()),
            ),
            (vec![skipped.clone(), m(1.0, 5)], skipped.clone()),
            (
                vec![m(1.0, 5), m(1.0, 6)],
                Outcome::Failed("result count changed between passes: 5 then 6".into()),
            ),
        ];
        for (input, want) in cases {
            let refs: Vec<&Outcome> = input.iter().collect();
            assert_eq!(merge(&refs), want, "{input:?}");
        }
    }
}
