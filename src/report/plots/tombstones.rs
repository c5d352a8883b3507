//! Tombstones each read and scan went over, against the warn and failure thresholds.

use super::frame::{
    chart, dot, failed, headroom, legend, seconds, thin, Drawn, Labels, FAIL_COLOUR, INFO_COLOUR,
    VALUE_COLOUR,
};
use super::shading::{self, Nemesis};
use checkers::tombstones::Thresholds;
use checkers::{Op, OpType};
use plotters::coord::Shift;
use plotters::prelude::*;

/// (completion time in s, tombstones) of every ok read or scan that reported a count.
pub(super) fn scanned(history: &[Op]) -> Vec<(f64, u64)> {
    history
        .iter()
        .filter(|op| op.process.is_client() && op.kind == OpType::Ok)
        .filter_map(|op| Some((seconds(op.time), op.tombstones?)))
        .collect()
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[(f64, u64)],
    thresholds: Thresholds,
    faults: &Nemesis,
) -> Drawn {
    let labels = Labels {
        title: "Tombstones each read went over",
        x: "read completion time since start (s)",
        y: "tombstones scanned",
    };
    let end = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let x = 0.0..(end * 1.02).max(1.0);
    // The failure threshold is drawn only when it is near the data; far above, it would
    // flatten every point to the axis, and its legend entry says so instead.
    let data_top = points
        .iter()
        .map(|p| p.1)
        .max()
        .unwrap_or(0)
        .max(thresholds.warn);
    let fail_shown = thresholds.fail <= data_top.saturating_mul(2);
    let top = if fail_shown {
        data_top.max(thresholds.fail)
    } else {
        data_top
    } as f64;
    let y = 0.0..headroom(0.0, top.max(1.0) * 1.05);
    let mut chart = chart(root, &labels, x.clone(), y.clone())?;
    shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    let over = |n: u64| n > thresholds.warn;
    let dots = thin(points).map(|&(t, n)| {
        let colour = if over(n) { INFO_COLOUR } else { VALUE_COLOUR };
        Circle::new((t, n as f64), 2, colour.filled())
    });
    chart
        .draw_series(dots)
        .map_err(failed)?
        .label(format!(
            "reads ({}, {} over the warn threshold)",
            points.len(),
            points.iter().filter(|p| over(p.1)).count()
        ))
        .legend(dot(VALUE_COLOUR));
    let fail_name = if fail_shown {
        "failure threshold"
    } else {
        "failure threshold, far above"
    };
    for (name, level, colour) in [
        ("warn threshold", thresholds.warn, INFO_COLOUR),
        (fail_name, thresholds.fail, FAIL_COLOUR),
    ] {
        let at = (level as f64).min(y.end);
        let line = vec![(0.0, at), (x.end, at)];
        chart
            .draw_series(DashedLineSeries::new(line, 10, 6, colour.stroke_width(2)))
            .map_err(failed)?
            .label(format!("{name} ({level})"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    legend(&mut chart)
}
