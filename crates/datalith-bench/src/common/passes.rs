//! Repeated passes: every workload runs its peers in at least [`MIN_PASSES`] passes, the peer
//! order rotated by one each pass (so no peer always runs first on a cold page cache or last on
//! a hot machine), and reports the median of the per-pass figures with their min-max spread.
//!
//! Invariant: a [`Spread`] is built only from finite figures; its `median` lies in
//! `min..=max`.

use serde::{Deserialize, Serialize};

/// Passes in a full run (the "at least 3").
pub const MIN_PASSES: usize = 3;

/// The order in which pass `pass` (0-based) runs `items`: the list rotated left by `pass`.
pub fn rotated<T: Clone>(items: &[T], pass: usize) -> Vec<T> {
    if items.is_empty() {
        return Vec::new();
    }
    let k = pass % items.len();
    items[k..].iter().chain(&items[..k]).cloned().collect()
}

/// The figures of one cell over the passes: their median, min and max.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Spread {
    /// The median of the per-pass figures (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest per-pass figure.
    pub min: f64,
    /// The largest per-pass figure.
    pub max: f64,
    /// Every per-pass figure, in pass order.
    pub passes: Vec<f64>,
}

impl Spread {
    /// The spread of `figures` (non-finite ones are dropped); `None` when none is left.
    pub fn of(figures: &[f64]) -> Option<Spread> {
        let passes: Vec<f64> = figures.iter().copied().filter(|x| x.is_finite()).collect();
        if passes.is_empty() {
            return None;
        }
        let mut sorted = passes.clone();
        sorted.sort_by(f64::total_cmp);
        let m = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[m]
        } else {
            (sorted[m - 1] + sorted[m]) / 2.0
        };
        Some(Spread {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            passes,
        })
    }

    /// `min-max` with `fmt` applied to both ends, for tables.
    pub fn range_text(&self, fmt: impl Fn(f64) -> String) -> String {
        format!("{}-{}", fmt(self.min), fmt(self.max))
    }

    /// Index (in pass order) of the pass whose figure is nearest the median: the pass whose
    /// detailed output (CSV, latencies) stands for the cell.
    pub fn median_pass(&self) -> usize {
        self.passes
            .iter()
            .enumerate()
            .min_by(|a, b| {
                (a.1 - self.median)
                    .abs()
                    .total_cmp(&(b.1 - self.median).abs())
            })
            .map_or(0, |(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_table() {
        let items = ["a", "b", "c"];
        let cases: [(usize, [&str; 3]); 4] = [
            (0, ["a", "b", "c"]),
            (1, ["b", "c", "a"]),
            (2, ["c", "a", "b"]),
            (3, ["a", "b", "c"]),
        ];
        for (pass, want) in cases {
            assert_eq!(rotated(&items, pass), want.to_vec(), "pass {pass}");
        }
        assert!(rotated::<u8>(&[], 2).is_empty());
    }

    #[test]
    fn spread_table() {
        let cases: [(&[f64], Option<(f64, f64, f64, usize)>); 5] = [
            (&[], None),
            (&[f64::NAN], None),
            (&[2.0], Some((2.0, 2.0, 2.0, 0))),
            (&[5.0, 1.0, 3.0], Some((3.0, 1.0, 5.0, 2))),
            (&[4.0, 1.0, 3.0, 2.0], Some((2.5, 1.0, 4.0, 2))),
        ];
        for (xs, want) in cases {
            let got = Spread::of(xs).map(|s| (s.median, s.min, s.max, s.median_pass()));
            assert_eq!(got, want, "{xs:?}");
        }
        let s = Spread::of(&[90.0, 100.0, 110.0]).unwrap();
        assert_eq!(s.range_text(|x| format!("{x:.0}")), "90-110");
    }
}
