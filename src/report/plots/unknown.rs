//! The share of client ops whose outcome is unknown (info) among those completing in each
//! time bucket.

use super::frame::{
    chart, failed, headroom, legend, steps, time_axis, Drawn, Labels, INFO_COLOUR, OUTCOMES,
};
use super::shading::{self, Nemesis};
use super::tally::Tally;
use checkers::OpType;
use plotters::coord::Shift;
use plotters::prelude::*;

/// (bucket start in s, info / completed) for every bucket with a completion, and the
/// unknown outcomes in all.
fn shares(tally: &Tally) -> (Vec<(f64, f64)>, u64) {
    let info = OUTCOMES.iter().position(|k| *k == OpType::Info);
    let mut total = 0;
    let shares = (tally.buckets().into_iter())
        .map(|bucket| {
            let count = |of_info: bool| -> u64 {
                (bucket.completed.iter())
                    .filter(|((_, rank), _)| !of_info || Some(*rank) == info)
                    .map(|(_, n)| n)
                    .sum()
            };
            let (unknown, all) = (count(true), count(false));
            total += unknown;
            (bucket.start_s as f64, unknown as f64 / all.max(1) as f64)
        })
        .collect();
    (shares, total)
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    tally: &Tally,
    faults: &Nemesis,
) -> Drawn {
    let end = tally.end();
    let width = tally.bucket_width();
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
    let (points, total_info) = shares(tally);
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
