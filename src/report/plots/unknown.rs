//! The share of client ops whose outcome is unknown (info) among those completing in each
//! time bucket.

use super::frame::{
    bucket_seconds, chart, failed, headroom, legend, steps, time_axis, Drawn, Labels, INFO_COLOUR,
    NS_PER_S,
};
use super::shading::{self, Nemesis};
use super::spans::Span;
use checkers::OpType;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// (bucket start in s, info / completed) for every bucket with a completion.
fn shares(spans: &[Span], width: u64) -> Vec<(f64, f64)> {
    let bucket_ns = width.saturating_mul(NS_PER_S);
    let mut counts: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for span in spans {
        let count = counts.entry(span.end() / bucket_ns).or_default();
        count.0 += u64::from(span.kind == OpType::Info);
        count.1 += 1;
    }
    counts
        .into_iter()
        .map(|(bucket, (info, all))| ((bucket * width) as f64, info as f64 / all as f64))
        .collect()
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spans: &[Span],
    faults: &Nemesis,
) -> Drawn {
    let end = spans.iter().map(Span::end).max().unwrap_or(0);
    let width = bucket_seconds(end);
    let title = format!("Share of unknown outcomes (info) per {width} s");
    let labels = Labels {
        title: &title,
        x: "time since start (s)",
        y: "info / completed",
    };
    let x = time_axis(end);
    let y = 0.0..headroom(0.0, 1.0);
    let mut chart = chart(root, &labels, x.clone(), y.clone())?;
    shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    let points = shares(spans, width);
    let total_info = spans.iter().filter(|s| s.kind == OpType::Info).count();
    chart
        .draw_series(LineSeries::new(
            steps(&points, width as f64),
            INFO_COLOUR.stroke_width(2),
        ))
        .map_err(failed)?
        .label(format!("unknown outcomes ({total_info} in all)"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], INFO_COLOUR.stroke_width(2)));
    legend(&mut chart)
}
