//! Latency quantiles over time: p50, p95, p99 and the maximum of the client ops completing
//! in each time bucket.

use super::frame::{chart, failed, legend, steps, time_axis_beside_legend, Drawn, Labels};
use super::latency::{latency_axis, ms};
use super::shading::{self, Nemesis};
use super::tally::Tally;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The quantiles drawn, with their colours.
const QUANTILES: [(&str, f64, RGBColor); 4] = [
    ("p50", 0.50, RGBColor(44, 160, 44)),
    ("p95", 0.95, RGBColor(31, 119, 180)),
    ("p99", 0.99, RGBColor(255, 127, 14)),
    ("max", 1.00, RGBColor(214, 39, 40)),
];

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    tally: &Tally,
    faults: &Nemesis,
) -> Drawn {
    let end = tally.end();
    let width = tally.bucket_width();
    let title = format!("Latency quantiles per {width} s");
    let labels = Labels {
        title: &title,
        x: "time since start (s)",
        y: "latency (ms, log scale)",
    };
    let ((x, data_end), y) = (time_axis_beside_legend(end), latency_axis(tally));
    let mut chart = chart(root, &labels, x, y.clone().log_scale())?;
    shading::shade(&mut chart, faults, data_end, (y.start, y.end))?;
    let buckets = tally.buckets();
    for (name, q, colour) in QUANTILES {
        let points: Vec<(f64, f64)> = (buckets.iter())
            .filter_map(|b| Some((b.start_s as f64, ms(b.latencies.quantile(q)?))))
            .collect();
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
