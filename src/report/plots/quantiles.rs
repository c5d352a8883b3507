//! Latency quantiles over time: p50, p95, p99 and the maximum of the client ops completing
//! in each time bucket.

use super::frame::{
    bucket_seconds, chart, failed, legend, steps, time_axis_beside_legend, Drawn, Labels, NS_PER_S,
};
use super::latency::{latency_axis, latency_ms, MIN_LATENCY_MS};
use super::shading::{self, Nemesis};
use super::spans::Span;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// The quantiles drawn, with their colours.
const QUANTILES: [(&str, f64, RGBColor); 4] = [
    ("p50", 0.50, RGBColor(44, 160, 44)),
    ("p95", 0.95, RGBColor(31, 119, 180)),
    ("p99", 0.99, RGBColor(255, 127, 14)),
    ("max", 1.00, RGBColor(214, 39, 40)),
];

/// Per bucket start (s): the latencies (ms) of the ops completing in it, sorted.
fn buckets(spans: &[Span], width: u64) -> Vec<(f64, Vec<f64>)> {
    let bucket_ns = width.saturating_mul(NS_PER_S);
    let mut by_bucket: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for span in spans {
        by_bucket
            .entry(span.end() / bucket_ns)
            .or_default()
            .push(latency_ms(span));
    }
    by_bucket
        .into_iter()
        .map(|(bucket, mut latencies)| {
            latencies.sort_by(f64::total_cmp);
            ((bucket * width) as f64, latencies)
        })
        .collect()
}

/// The `q` quantile of sorted values (nearest rank).
pub(super) fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(MIN_LATENCY_MS)
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spans: &[Span],
    faults: &Nemesis,
) -> Drawn {
    let end = spans.iter().map(Span::end).max().unwrap_or(0);
    let width = bucket_seconds(end);
    let title = format!("Latency quantiles per {width} s");
    let labels = Labels {
        title: &title,
        x: "time since start (s)",
        y: "latency (ms, log scale)",
    };
    let ((x, data_end), y) = (time_axis_beside_legend(end), latency_axis(spans));
    let mut chart = chart(root, &labels, x, y.clone().log_scale())?;
    shading::shade(&mut chart, faults, data_end, (y.start, y.end))?;
    let buckets = buckets(spans, width);
    for (name, q, colour) in QUANTILES {
        let points: Vec<(f64, f64)> = buckets.iter().map(|(t, l)| (*t, quantile(l, q))).collect();
        chart
            .draw_series(LineSeries::new(
                steps(&points, width as f64),
                colour.stroke_width(2),
            ))
            .map_err(failed)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    legend(&mut chart)
}
