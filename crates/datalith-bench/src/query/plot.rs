//! Latency bars: one group per task, one bar per peer, on a log axis (the rows span four
//! orders of magnitude), written as PNG and SVG through [`crate::common::plot::render`].

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::report::Table;
use super::tasks::Task;
use crate::common::plot::{render, Chart};
use crate::common::BenchError;

/// Draws the bars of `tasks` into a PNG and the SVG beside it; returns false (and writes
/// nothing) when no cell of them was measured.
pub fn bars(
    path: &Path,
    title: &str,
    table: &Table<'_>,
    tasks: &[Task],
) -> Result<bool, BenchError> {
    let values: Vec<f64> = tasks
        .iter()
        .flat_map(|t| table.peers.iter().filter_map(|p| table.ms(p, t.name)))
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    if values.is_empty() {
        return Ok(false);
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min) / 2.0;
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 2.0;
    render(
        path,
        &Bars {
            title,
            table,
            tasks,
            lo,
            hi,
        },
    )?;
    Ok(true)
}

/// The bar chart of some tasks.
struct Bars<'a> {
    title: &'a str,
    table: &'a Table<'a>,
    tasks: &'a [Task],
    lo: f64,
    hi: f64,
}

impl Chart for Bars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(root, self.title, self.table, self.tasks, self.lo, self.hi)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    table: &Table<'_>,
    tasks: &[Task],
    lo: f64,
    hi: f64,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, legend) = root.split_horizontally(1180);
    let n = tasks.len() as f64;
    let mut chart = ChartBuilder::on(&left)
        .caption(title, ("sans-serif", 26))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..n, (lo..hi).log_scale())
        .map_err(|e| err(&e))?;
    let names: Vec<&str> = tasks.iter().map(|t| t.name).collect();
    let label = |x: &f64| {
        let i = x.floor() as usize;
        if (x - x.floor() - 0.5).abs() < 1e-6 {
            names.get(i).map(|s| s.to_string()).unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * tasks.len() + 1)
        .x_label_formatter(&label)
        .y_desc("median ms (log)")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| err(&e))?;
    // Only the peers with a bar in this plot get a slot and a legend entry.
    let peers: Vec<&String> = table
        .peers
        .iter()
        .filter(|p| tasks.iter().any(|t| table.ms(p, t.name).is_some()))
        .collect();
    let width = 0.8 / peers.len().max(1) as f64;
    for (j, p) in peers.iter().enumerate() {
        let color = color(j);
        let bars: Vec<Rectangle<(f64, f64)>> = tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let ms = table.ms(p, t.name)?;
                let x0 = i as f64 + 0.1 + width * j as f64;
                Some(Rectangle::new(
                    [(x0, lo), (x0 + width * 0.9, ms.max(lo))],
                    color.filled(),
                ))
            })
            .collect();
        chart.draw_series(bars).map_err(|e| err(&e))?;
        let y = 60 + 24 * j as i32;
        legend
            .draw(&Rectangle::new([(10, y - 7), (40, y + 7)], color.filled()))
            .map_err(|e| err(&e))?;
        legend
            .draw(&Text::new(p.to_string(), (48, y - 8), ("sans-serif", 15)))
            .map_err(|e| err(&e))?;
    }
    Ok(())
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
