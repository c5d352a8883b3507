//! The latency chart: one marker per completed client op, coloured by outcome, shaped by f.

use super::frame::{
    chart, dot, entry, failed, legend, outcome_colour, seconds, time_axis_beside_legend, Drawn,
    Labels, Px, OUTCOMES,
};
use super::shading::{self, Nemesis};
use super::spans::Span;
use super::tally::Tally;
use checkers::F;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// The smallest latency drawn on the log axis, in ms.
pub(super) const MIN_LATENCY_MS: f64 = 0.001;

/// A span's latency in ms, at least [`MIN_LATENCY_MS`] so that the log axis can show it.
pub(super) fn latency_ms(span: &Span) -> f64 {
    ms(span.latency as f64)
}

/// A latency of `ns` in milliseconds, clamped to [`MIN_LATENCY_MS`].
pub(super) fn ms(ns: f64) -> f64 {
    (ns / 1e6).max(MIN_LATENCY_MS)
}

/// A log axis from a power of ten below every latency to just above the largest (from
/// 0.1 ms when there are none); the legend sits beside the data, not above it.
pub(super) fn latency_axis(tally: &Tally) -> Range<f64> {
    let (lo, hi) = tally.latency_range().map_or((100.0, 0.1), |(lo, hi)| {
        (ms(lo as f64).min(100.0), ms(hi as f64).max(0.1))
    });
    let lo = (lo / 1.5).log10().floor();
    let hi = (hi * 1.5).log10().max(lo + 1.0);
    10f64.powf(lo)..10f64.powf(hi)
}

/// The outline of an op's marker, in pixels around its centre: a circle (octagon) for an add,
/// a triangle for a read, a diamond otherwise.
pub(super) fn outline(f: &F) -> Vec<Px> {
    match f {
        F::Add => vec![
            (-2, -4),
            (2, -4),
            (4, -2),
            (4, 2),
            (2, 4),
            (-2, 4),
            (-4, 2),
            (-4, -2),
        ],
        F::Read => vec![(0, -5), (5, 4), (-5, 4)],
        _ => vec![(0, -5), (5, 0), (0, 5), (-5, 0)],
    }
}

/// The latency chart: one marker per completed client op, coloured by outcome, shaped by f.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    tally: &Tally,
    faults: &Nemesis,
) -> Drawn {
    let labels = Labels {
        title: "Latency of client operations",
        x: "time since start (s)",
        y: "latency (ms, log scale)",
    };
    let end = tally.end();
    let ((x, data_end), y) = (time_axis_beside_legend(end), latency_axis(tally));
    let mut chart = chart(root, &labels, x, y.clone().log_scale())?;
    shading::shade(&mut chart, faults, data_end, (y.start, y.end))?;
    for (rank, kind) in OUTCOMES.into_iter().enumerate() {
        let (outcome, count) = tally.scatter(rank);
        let colour = outcome_colour(kind);
        chart
            .draw_series(outcome.iter().map(|span| {
                let at = (seconds(span.start), latency_ms(span));
                EmptyElement::at(at) + Polygon::new(outline(&span.f), colour.filled())
            }))
            .map_err(failed)?
            .label(format!("{} ({count})", kind.as_str()))
            .legend(dot(colour));
    }
    for (f, label) in [(F::Add, "add"), (F::Read, "read"), (F::Delete, "other f")] {
        entry(&mut chart, label.to_string(), move |(x, y)| {
            EmptyElement::at((x + 10, y)) + Polygon::new(outline(&f), BLACK.filled())
        })?;
    }
    legend(&mut chart)
}
