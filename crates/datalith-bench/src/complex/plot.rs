//! The chart: one group of bars per query, one bar per peer (its median ms, agreeing answers
//! only), on a log axis ([`crate::common::plot::GroupedBars`]).

use std::path::Path;

use plotters::prelude::RGBColor;

use super::report::Table;
use crate::common::plot::GroupedBars;
use crate::common::BenchError;

/// Draws the chart; false (nothing written) when no cell was measured.
pub fn bars(path: &Path, title: &str, table: &Table<'_>) -> Result<bool, BenchError> {
    GroupedBars {
        title,
        groups: table.queries.iter().map(|q| q.to_string()).collect(),
        series: table
            .peers
            .iter()
            .map(|p| {
                let ms = table.queries.iter().map(|q| table.good_ms(p, q)).collect();
                (p.to_string(), ms)
            })
            .collect(),
        color,
    }
    .write(path)
}

fn color(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 5] = [
        (44, 160, 44),
        (31, 119, 180),
        (255, 127, 14),
        (214, 39, 40),
        (148, 103, 189),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}
