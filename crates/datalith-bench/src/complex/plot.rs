//! The chart: one group of bars per query, one bar per peer (its median ms, agreeing answers
//! only), on a log axis; PNG and SVG through [`crate::common::plot::render`].

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::report::Table;
use crate::common::plot::{render, Chart};
use crate::common::BenchError;

/// Draws the chart; false (nothing written) when no cell was measured.
pub fn bars(path: &Path, title: &str, table: &Table<'_>) -> Result<bool, BenchError> {
    let values: Vec<f64> = table
        .queries
        .iter()
        .flat_map(|q| table.peers.iter().filter_map(|p| table.good_ms(p, q)))
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
            lo,
            hi,
        },
    )?;
    Ok(true)
}

struct Bars<'a> {
    title: &'a str,
    table: &'a Table<'a>,
    lo: f64,
    hi: f64,
}

impl Chart for Bars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let (t, lo, hi) = (self.table, self.lo, self.hi);
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (left, legend) = root.split_horizontally(1230);
        let n = t.queries.len() as f64;
        let mut chart = ChartBuilder::on(&left)
            .caption(self.title, ("sans-serif", 24))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..n, (lo..hi).log_scale())
            .map_err(|e| err(&e))?;
        let names = t.queries;
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
            .x_labels(2 * names.len() + 1)
            .x_label_formatter(&label)
            .y_desc("median ms (log)")
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
        let peers: Vec<&String> = t
            .peers
            .iter()
            .filter(|p| names.iter().any(|q| t.good_ms(p, q).is_some()))
            .collect();
        let width = 0.8 / peers.len().max(1) as f64;
        for (j, p) in peers.iter().enumerate() {
            let color = color(j);
            let bars: Vec<Rectangle<(f64, f64)>> = names
                .iter()
                .enumerate()
                .filter_map(|(i, q)| {
                    let ms = t.good_ms(p, q)?;
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
