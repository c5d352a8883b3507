//! The throughput chart: completions per second over time, one line per f and outcome.

use super::frame::{
    chart, failed, headroom, legend, outcome_colour, steps, Drawn, Labels, LinearChart, NS_PER_S,
    OUTCOMES,
};
use super::shading::{self, Nemesis};
use super::tally::Tally;
use checkers::{OpType, F};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// One line of the throughput chart: an f and an outcome, and its rate per bucket.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    pub(super) f: F,
    pub(super) kind: OpType,
    /// (bucket start in s, completions per second in that bucket).
    pub(super) points: Vec<(f64, f64)>,
}

/// The throughput chart's data.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Throughput {
    /// Bucket width, s.
    pub(super) width: u64,
    /// One line per (f, outcome) that occurs, each with every bucket.
    pub(super) lines: Vec<Line>,
}

/// The completion rate of each (f, outcome) that occurs, per bucket of completion time.
pub(super) fn throughput(tally: &Tally) -> Throughput {
    let width = tally.bucket_width();
    let end_s = tally.end() / NS_PER_S;
    let buckets = usize::try_from(end_s / width).unwrap_or(0) + 1;
    let mut counts: BTreeMap<(F, usize), Vec<u64>> = BTreeMap::new();
    for bucket in tally.buckets() {
        let at = usize::try_from(bucket.start_s / width).unwrap_or(0);
        for (line, n) in bucket.completed {
            let line = counts.entry(line).or_insert_with(|| vec![0; buckets]);
            if let Some(count) = line.get_mut(at) {
                *count += n;
            }
        }
    }
    let lines = counts
        .into_iter()
        .map(|((f, rank), counts)| Line {
            f,
            kind: OUTCOMES[rank],
            points: (0u64..)
                .zip(counts)
                .map(|(i, n)| ((i * width) as f64, n as f64 / width as f64))
                .collect(),
        })
        .collect();
    Throughput { width, lines }
}

/// The rate the workload asked for and the one the run achieved, ops/s invoked.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rates {
    pub configured: Option<f64>,
    pub achieved: Option<f64>,
}

/// The throughput chart: completions per second over time, one line per (f, outcome), and
/// the configured and achieved rates as level lines.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    tally: &Tally,
    faults: &Nemesis,
    rates: Rates,
) -> Drawn {
    let Throughput { width, lines } = throughput(tally);
    let title = format!("Throughput of client operations ({width} s buckets)");
    let labels = Labels {
        title: &title,
        x: "time since start (s)",
        y: "completed operations (ops/s)",
    };
    let top = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|&(_, rate)| rate))
        .chain(rates.configured)
        .chain(rates.achieved)
        .fold(0.0, f64::max);
    let buckets = lines.first().map_or(0, |line| line.points.len());
    let x = 0.0..(buckets as u64 * width).max(1) as f64;
    let y = 0.0..headroom(0.0, if top > 0.0 { top } else { 1.0 });
    let mut chart = chart(root, &labels, x.clone(), y.clone())?;
    shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    for line in &lines {
        draw_line(&mut chart, line, width as f64)?;
    }
    let levels = [
        (rates.configured, "configured", RGBColor(90, 90, 90)),
        (rates.achieved, "achieved", RGBColor(0, 0, 0)),
    ];
    for (rate, what, colour) in levels {
        let Some(rate) = rate else { continue };
        let style = colour.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                [(x.start, rate), (x.end, rate)],
                10,
                6,
                style,
            ))
            .map_err(failed)?
            .label(format!("{what} rate, {rate:.0} ops/s invoked"))
            .legend(move |(x, y)| PathElement::new(vec![(x + 3, y), (x + 17, y)], style));
    }
    if lines.is_empty() {
        return Ok(());
    }
    legend(&mut chart)
}

/// The (dash, gap) lengths of an f's line, in pixels: solid for add, dashed for read, dotted otherwise.
pub(super) fn dashes(f: &F) -> (u32, u32) {
    match f {
        F::Add => (20, 0),
        F::Read => (8, 5),
        _ => (2, 5),
    }
}

/// Draws one throughput line: coloured by outcome, dashed by f.
pub(super) fn draw_line<'a, DB: DrawingBackend + 'a>(
    chart: &mut LinearChart<'a, DB>,
    line: &Line,
    width: f64,
) -> Drawn {
    let style = outcome_colour(line.kind).stroke_width(2);
    let points = steps(&line.points, width);
    let (dash, gap) = dashes(&line.f);
    let series = if gap == 0 {
        chart.draw_series(LineSeries::new(points, style))
    } else {
        chart.draw_series(DashedLineSeries::new(points, dash, gap, style))
    }
    .map_err(failed)?;
    let dash_at = move |start: u32| {
        let (from, to) = (start.min(20), (start + dash).min(20));
        PathElement::new(vec![(from as i32, 0), (to as i32, 0)], style)
    };
    series
        .label(format!("{} {}", line.f, line.kind.as_str()))
        .legend(move |at| {
            let step = dash + gap;
            EmptyElement::at(at) + dash_at(0) + dash_at(step) + dash_at(2 * step)
        });
    Ok(())
}
