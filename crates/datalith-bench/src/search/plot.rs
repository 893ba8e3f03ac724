//! The workload's charts (PNG and SVG through [`crate::common::plot::render`]): grouped bars,
//! one group per row (a query kind, an indexing mode), one bar per peer.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::merge::PeerSummary;
use super::queries::Kind;
use crate::common::plot::{color, render, Chart};
use crate::common::BenchError;

/// One chart's data: group names, and per peer a value per group.
struct Bars<'a> {
    title: &'a str,
    y_desc: &'a str,
    groups: Vec<String>,
    series: Vec<(String, Vec<Option<f64>>)>,
    log: bool,
}

/// Writes every chart of the workload into `dir`; returns the files written (PNG names).
pub fn all(dir: &Path, peers: &[PeerSummary], kinds: &[Kind]) -> Result<Vec<String>, BenchError> {
    let groups: Vec<String> = kinds.iter().map(|k| k.name().to_string()).collect();
    let per_kind =
        |f: &dyn Fn(&PeerSummary, Kind) -> Option<f64>| -> Vec<(String, Vec<Option<f64>>)> {
            peers
                .iter()
                .map(|p| (p.peer.clone(), kinds.iter().map(|&k| f(p, k)).collect()))
                .collect()
        };
    let charts = [
        (
            "search-top10-p50.png",
            Bars {
                title: "Top-10 query latency, p50 (log)",
                y_desc: "ms",
                groups: groups.clone(),
                series: per_kind(&|p, k| p.kinds.get(&k)?.top_p50.as_ref().map(|s| s.median)),
                log: true,
            },
        ),
        (
            "search-count-p50.png",
            Bars {
                title: "Full count latency, p50 (log)",
                y_desc: "ms",
                groups: groups.clone(),
                series: per_kind(&|p, k| p.kinds.get(&k)?.count_p50.as_ref().map(|s| s.median)),
                log: true,
            },
        ),
        (
            "search-overlap.png",
            Bars {
                title: "Top-10 agreement with Lucene BM25",
                y_desc: "mean overlap",
                groups,
                series: per_kind(&|p, k| p.kinds.get(&k)?.overlap),
                log: false,
            },
        ),
        (
            "search-indexing.png",
            Bars {
                title: "Indexing throughput (log)",
                y_desc: "documents/s",
                groups: vec!["durable".into(), "no sync".into()],
                series: peers
                    .iter()
                    .map(|p| {
                        (
                            p.peer.clone(),
                            ["durable", "nosync"]
                                .iter()
                                .map(|m| p.index_rate.get(m).map(|s| s.median))
                                .collect(),
                        )
                    })
                    .collect(),
                log: true,
            },
        ),
        (
            "search-index-size.png",
            Bars {
                title: "Index size on disk (durable)",
                y_desc: "MB",
                groups: vec!["index".into()],
                series: peers
                    .iter()
                    .map(|p| {
                        (
                            p.peer.clone(),
                            vec![p.bytes.as_ref().map(|b| b.median / 1e6)],
                        )
                    })
                    .collect(),
                log: false,
            },
        ),
    ];
    let mut written = Vec::new();
    for (name, chart) in charts {
        let any = chart
            .series
            .iter()
            .flat_map(|(_, v)| v)
            .any(|v| v.is_some_and(|x| x > 0.0 && x.is_finite()));
        if any {
            render(&dir.join(name), &chart)?;
            written.push(name.to_string());
        }
    }
    Ok(written)
}

impl Chart for Bars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (left, legend) = root.split_horizontally(1180);
        let values: Vec<f64> = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
            .filter(|x| *x > 0.0 && x.is_finite())
            .collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let n = self.groups.len() as f64;
        let groups = &self.groups;
        let label = |x: &f64| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-6 {
                groups.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let width = 0.8 / self.series.len().max(1) as f64;
        let draw_legend = |j: usize, name: &str| -> Result<(), String> {
            let y = 60 + 24 * j as i32;
            legend
                .draw(&Rectangle::new(
                    [(10, y - 7), (40, y + 7)],
                    color(j).filled(),
                ))
                .map_err(|x| e(&x))?;
            legend
                .draw(&Text::new(
                    name.to_string(),
                    (48, y - 8),
                    ("sans-serif", 15),
                ))
                .map_err(|x| e(&x))
        };
        macro_rules! bars {
            ($chart:expr, $floor:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_labels(2 * self.groups.len() + 1)
                    .x_label_formatter(&label)
                    .y_desc(self.y_desc)
                    .label_style(("sans-serif", 15))
                    .draw()
                    .map_err(|x| e(&x))?;
                for (j, (name, vals)) in self.series.iter().enumerate() {
                    let rects: Vec<Rectangle<(f64, f64)>> = vals
                        .iter()
                        .enumerate()
                        .filter_map(|(i, v)| {
                            let v = (*v)?;
                            let x0 = i as f64 + 0.1 + width * j as f64;
                            Some(Rectangle::new(
                                [(x0, $floor), (x0 + width * 0.9, v.max($floor))],
                                color(j).filled(),
                            ))
                        })
                        .collect();
                    chart.draw_series(rects).map_err(|x| e(&x))?;
                    draw_legend(j, name)?;
                }
            }};
        }
        let builder = || {
            let mut b = ChartBuilder::on(&left);
            b.caption(self.title, ("sans-serif", 26))
                .margin(15)
                .x_label_area_size(50)
                .y_label_area_size(90);
            b
        };
        if self.log {
            let (lo, hi) = (min / 2.0, max * 2.0);
            bars!(
                builder()
                    .build_cartesian_2d(0.0..n, (lo..hi).log_scale())
                    .map_err(|x| e(&x))?,
                lo
            );
        } else {
            bars!(
                builder()
                    .build_cartesian_2d(0.0..n, 0.0..max * 1.1)
                    .map_err(|x| e(&x))?,
                0.0
            );
        }
        Ok(())
    }
}
