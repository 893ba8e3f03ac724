//! Line plots, each written twice: a PNG (plotters' bitmap backend; text in the DejaVu Sans
//! font compiled into the binary through `ab_glyph`, so no font library is needed) and an SVG
//! beside it (same drawing, text left to the viewer's sans-serif font), through one drawing
//! routine generic over the backend ([`Chart`], [`render`]).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

use super::BenchError;

static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Picture size of every plot, in pixels.
pub const SIZE: (u32, u32) = (1400, 750);

/// A picture that can be drawn on any plotters backend.
pub trait Chart {
    /// Draws the whole picture on `root` (already sized [`SIZE`]).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Registers the compiled-in font once (a font that does not parse only loses the labels).
pub fn register_font() {
    REGISTER.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Writes `chart` to `png` and to the `.svg` beside it.
pub fn render(png: &Path, chart: &impl Chart) -> Result<(), BenchError> {
    register_font();
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |message| BenchError::Plot { path, message }
    };
    {
        let root = BitMapBackend::new(png, SIZE).into_drawing_area();
        chart.draw(&root).map_err(fail(png))?;
        root.present().map_err(|e| fail(png)(e.to_string()))?;
    }
    let svg = png.with_extension("svg");
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    chart.draw(&root).map_err(fail(&svg))?;
    root.present().map_err(|e| fail(&svg)(e.to_string()))?;
    Ok(())
}

/// One line of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Which axes are logarithmic.
#[derive(Debug, Clone, Copy)]
pub struct Axes {
    pub log_x: bool,
    pub log_y: bool,
}

/// Draws `series` as lines with point markers into a PNG at `path` and the SVG beside it.
/// Points that cannot be
/// shown (non-finite, or not positive on a log axis) are left out; a plot with no point at all
/// is not written.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    axes: Axes,
) -> Result<bool, BenchError> {
    let keep = |(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (!axes.log_x || *x > 0.0) && (!axes.log_y || *y > 0.0)
    };
    let series: Vec<Series> = series
        .iter()
        .map(|s| Series {
            label: s.label.clone(),
            points: s.points.iter().copied().filter(keep).collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    if all.is_empty() {
        return Ok(false);
    }
    let span = |vals: Vec<f64>, log: bool| {
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-9);
            (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad)
        }
    };
    let (x0, x1) = span(all.iter().map(|p| p.0).collect(), axes.log_x);
    let (y0, y1) = span(all.iter().map(|p| p.1).collect(), axes.log_y);
    let text = Text {
        title,
        x_label,
        y_label,
    };
    let (xr, yr) = (x0..x1, y0..y1);
    match (axes.log_x, axes.log_y) {
        (false, false) => render(path, &Lines::new(&text, &series, xr, yr)),
        (false, true) => render(path, &Lines::new(&text, &series, xr, yr.log_scale())),
        (true, false) => render(path, &Lines::new(&text, &series, xr.log_scale(), yr)),
        (true, true) => render(
            path,
            &Lines::new(&text, &series, xr.log_scale(), yr.log_scale()),
        ),
    }?;
    Ok(true)
}

struct Text<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
}

/// A line plot on axes `X` and `Y` (linear or log ranges).
struct Lines<'a, X, Y> {
    text: &'a Text<'a>,
    series: &'a [Series],
    x: X,
    y: Y,
}

impl<'a, X, Y> Lines<'a, X, Y> {
    fn new(text: &'a Text<'a>, series: &'a [Series], x: X, y: Y) -> Self {
        Lines { text, series, x, y }
    }
}

impl<X, Y> Chart for Lines<'_, X, Y>
where
    X: AsRangedCoord<Value = f64> + Clone,
    Y: AsRangedCoord<Value = f64> + Clone,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(root, self.text, self.series, self.x.clone(), self.y.clone())
    }
}

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    text: &Text<'_>,
    series: &[Series],
    x: X,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // The legend gets its own panel on the right, so it never hides a line.
    let (left, legend) = root.split_horizontally(1120);
    let mut chart = ChartBuilder::on(&left)
        .caption(text.title, ("sans-serif", 26))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(|e| err(&e))?;
    let tick = |v: &f64| short(*v);
    chart
        .configure_mesh()
        .x_desc(text.x_label)
        .y_desc(text.y_label)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = color(i);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
        let y = 60 + 24 * i as i32;
        legend
            .draw(&PathElement::new(
                vec![(10, y), (40, y)],
                color.stroke_width(3),
            ))
            .map_err(|e| err(&e))?;
        legend
            .draw(&plotters::element::Text::new(
                s.label.clone(),
                (48, y - 8),
                ("sans-serif", 15),
            ))
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// Tick labels: no useless decimals, thousands as `k`, millions as `M`.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Distinct colours readable on white (Tableau 10, then darker variants).
pub fn color(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 16] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
        (0, 0, 0),
        (0, 70, 120),
        (160, 70, 0),
        (0, 100, 0),
        (120, 0, 0),
        (80, 40, 120),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

/// A grouped bar chart on a log axis: one group per label, one bar per series (a peer, its
/// median ms per group; `None` where it has none), a legend of the series that have a bar.
/// The query and complex workloads draw their latency charts with it.
pub struct GroupedBars<'a> {
    pub title: &'a str,
    pub groups: Vec<String>,
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// The colour of the n-th series drawn.
    pub color: fn(usize) -> RGBColor,
}

impl GroupedBars<'_> {
    /// Writes the chart as PNG and the SVG beside it; false (nothing written) when no bar
    /// has a positive, finite value.
    pub fn write(mut self, path: &Path) -> Result<bool, BenchError> {
        self.series
            .retain(|(_, v)| v.iter().flatten().any(|x| *x > 0.0 && x.is_finite()));
        if self.series.is_empty() {
            return Ok(false);
        }
        render(path, &self)?;
        Ok(true)
    }

    /// The value range of the axis: half the smallest bar to twice the largest.
    fn span(&self) -> (f64, f64) {
        let values = || {
            self.series
                .iter()
                .flat_map(|(_, v)| v.iter().flatten().copied())
                .filter(|x| *x > 0.0 && x.is_finite())
        };
        let lo = values().fold(f64::INFINITY, f64::min) / 2.0;
        let hi = values().fold(f64::NEG_INFINITY, f64::max) * 2.0;
        (lo, hi)
    }
}

impl Chart for GroupedBars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let (lo, hi) = self.span();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (left, legend) = root.split_horizontally(1180);
        let names = &self.groups;
        let mut chart = ChartBuilder::on(&left)
            .caption(self.title, ("sans-serif", 26))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..names.len() as f64, (lo..hi).log_scale())
            .map_err(|e| err(&e))?;
        let label = |x: &f64| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-6 {
                names.get(i).cloned().unwrap_or_default()
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
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(|e| err(&e))?;
        let width = 0.8 / self.series.len().max(1) as f64;
        for (j, (name, values)) in self.series.iter().enumerate() {
            let color = (self.color)(j);
            let bars: Vec<Rectangle<(f64, f64)>> = values
                .iter()
                .enumerate()
                .filter_map(|(i, ms)| {
                    let ms = (*ms)?;
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
                .draw(&plotters::element::Text::new(
                    name.clone(),
                    (48, y - 8),
                    ("sans-serif", 15),
                ))
                .map_err(|e| err(&e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels() {
        let cases = [
            (0.5, "0.5"),
            (1.0, "1"),
            (200.0, "200"),
            (10_000.0, "10k"),
            (1_500_000.0, "1.5M"),
            (0.001, "0.001"),
        ];
        for (v, s) in cases {
            assert_eq!(short(v), s);
        }
    }
}
