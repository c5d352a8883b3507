//! The soak's trend chart: each run's key figures, run after run.

use super::frame::{
    chart, entry, failed, headroom, legend, Drawn, Labels, INFO_COLOUR, OVER_COLOUR,
    RESURRECTION_COLOUR, UNDER_COLOUR,
};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One point of the trend chart: a run's key figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    /// The run's workload.
    pub workload: String,
    /// Overcounting reads, % of reads.
    pub overcount_pct: f64,
    /// Undercounting reads, % of reads.
    pub undercount_pct: f64,
    /// Resurrection events.
    pub resurrections: f64,
    /// Unknown outcomes, % of client ops.
    pub unknown_pct: f64,
}

/// The dash and gap of each workload's lines, in pixels, in turn.
const WORKLOAD_DASHES: [(u32, u32); 3] = [(20, 1), (8, 5), (2, 5)];

/// The lines drawn, with their colours.
const LINES: [(&str, RGBColor); 4] = [
    ("overcounting reads, % of reads", OVER_COLOUR),
    ("undercounting reads, % of reads", UNDER_COLOUR),
    ("resurrection events", RESURRECTION_COLOUR),
    ("unknown outcomes, % of ops", INFO_COLOUR),
];

fn value(point: &TrendPoint, line: usize) -> f64 {
    match line {
        0 => point.overcount_pct,
        1 => point.undercount_pct,
        2 => point.resurrections,
        _ => point.unknown_pct,
    }
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[TrendPoint],
) -> Drawn {
    let labels = Labels {
        title: "Key figures across the soak's runs",
        x: "run",
        y: "value (see legend for units)",
    };
    let top = (0..LINES.len())
        .flat_map(|line| points.iter().map(move |p| value(p, line)))
        .fold(1.0, f64::max);
    let x = 0.5..(points.len() as f64 + 0.5).max(1.5);
    let mut chart = chart(root, &labels, x, 0.0..headroom(0.0, top))?;
    // One line per figure and workload: colour for the figure, dashes for the workload,
    // each joining that workload's runs.
    let mut workloads: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    workloads.dedup();
    workloads.sort_unstable();
    workloads.dedup();
    for (line, (name, colour)) in LINES.into_iter().enumerate() {
        for (w, workload) in workloads.iter().enumerate() {
            let series: Vec<(f64, f64)> = (1..)
                .zip(points)
                .filter(|(_, p)| p.workload == *workload)
                .map(|(run, p)| (f64::from(run), value(p, line)))
                .collect();
            let (dash, gap) = WORKLOAD_DASHES[w % WORKLOAD_DASHES.len()];
            let style = colour.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(series.clone(), dash, gap, style))
                .map_err(failed)?;
            chart
                .draw_series(
                    series
                        .into_iter()
                        .map(|at| Circle::new(at, 4, colour.filled())),
                )
                .map_err(failed)?;
        }
        entry(&mut chart, name.to_string(), move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
        })?;
    }
    for (w, workload) in workloads.iter().enumerate() {
        let (dash, gap) = WORKLOAD_DASHES[w % WORKLOAD_DASHES.len()];
        let dash_at = move |start: u32| {
            let (from, to) = (start.min(20), (start + dash).min(20));
            PathElement::new(
                vec![(from as i32, 0), (to as i32, 0)],
                BLACK.stroke_width(2),
            )
        };
        entry(&mut chart, format!("runs of {workload}"), move |at| {
            let step = dash + gap;
            EmptyElement::at(at) + dash_at(0) + dash_at(step) + dash_at(2 * step)
        })?;
    }
    legend(&mut chart)
}
