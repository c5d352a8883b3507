//! The soak's trend chart: each run's key figures, run after run.

use super::*;
use crate::soak::summary::TrendPoint;

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
    for (line, (name, colour)) in LINES.into_iter().enumerate() {
        let series: Vec<(f64, f64)> = (1..)
            .zip(points)
            .map(|(run, p)| (f64::from(run), value(p, line)))
            .collect();
        chart
            .draw_series(LineSeries::new(series.clone(), colour.stroke_width(2)))
            .map_err(failed)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                series
                    .into_iter()
                    .map(|at| Circle::new(at, 4, colour.filled())),
            )
            .map_err(failed)?;
    }
    legend(&mut chart)
}
