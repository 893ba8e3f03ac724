//! Latency bars: one group per task, one bar per peer, on a log axis (the rows span four
//! orders of magnitude), written as PNG and SVG ([`crate::common::plot::GroupedBars`]).

use std::path::Path;

use plotters::prelude::RGBColor;

use super::report::Table;
use super::tasks::Task;
use crate::common::plot::GroupedBars;
use crate::common::BenchError;

/// Draws the bars of `tasks` into a PNG and the SVG beside it; returns false (and writes
/// nothing) when no cell of them was measured.
pub fn bars(
    path: &Path,
    title: &str,
    table: &Table<'_>,
    tasks: &[Task],
) -> Result<bool, BenchError> {
    GroupedBars {
        title,
        groups: tasks.iter().map(|t| t.name.to_string()).collect(),
        series: table
            .peers
            .iter()
            .map(|p| {
                let ms = tasks.iter().map(|t| table.ms(p, t.name)).collect();
                (p.to_string(), ms)
            })
            .collect(),
        color,
    }
    .write(path)
}

fn color(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 8] = [
        (31, 119, 180),
        (174, 199, 232),
        (255, 127, 14),
        (255, 187, 120),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}
