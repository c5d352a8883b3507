//! The counter chart: each read of one counter against the range the history allows it.

use super::frame::{
    chart, dot, entry, failed, headroom, legend, seconds, thin, time_axis, Drawn, Labels,
    LinearChart, BAND_COLOUR, EXISTENCE_COLOUR, OVER_COLOUR, RESURRECTION_COLOUR, UNDER_COLOUR,
    VALUE_COLOUR,
};
use super::shading::{self, Nemesis};
use checkers::counter::{KeyFigures, ReadBounds};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;

/// The key with the most reads (the first in order on a tie), if there are reads.
pub(super) fn hot_key(keys: &BTreeMap<String, KeyFigures>) -> Option<&str> {
    (keys.iter())
        .map(|(key, figures)| (key.as_str(), figures.reads))
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(key, _)| key)
}

/// The counter chart's value axis: every bound and value, with a margin.
pub(super) fn counter_axis(reads: &[&ReadBounds]) -> Range<f64> {
    let lo = reads
        .iter()
        .map(|r| r.lower.min(r.count()))
        .min()
        .unwrap_or(0);
    let hi = reads
        .iter()
        .map(|r| r.upper.max(r.count()))
        .max()
        .unwrap_or(0);
    let (lo, hi) = (lo as f64 - 1.0, hi as f64 + 1.0);
    lo..headroom(lo, hi)
}

/// Draws reads as their allowed range (a vertical segment) and their value (a dot).
pub(super) fn draw_reads<DB: DrawingBackend>(
    chart: &mut LinearChart<'_, DB>,
    reads: &[&ReadBounds],
    (band, value, size): (RGBColor, RGBColor, i32),
) -> Drawn {
    let bands = reads.iter().map(|r| {
        let t = seconds(r.time);
        PathElement::new(
            vec![(t, r.lower as f64), (t, r.upper as f64)],
            band.stroke_width(2),
        )
    });
    chart.draw_series(bands).map_err(failed)?;
    let dots = reads
        .iter()
        .map(|r| Circle::new((seconds(r.time), r.count() as f64), size, value.filled()));
    chart.draw_series(dots).map_err(failed)?;
    Ok(())
}

/// A key's reads as drawn: those within bounds (thinned), and every one out of bounds.
pub(super) struct ReadGroups<'r> {
    pub(super) fine: Vec<&'r ReadBounds>,
    pub(super) under: Vec<&'r ReadBounds>,
    pub(super) over: Vec<&'r ReadBounds>,
    pub(super) resurrected: Vec<&'r ReadBounds>,
    /// Wrong only about whether the counter exists, or read where the sum may leave 64 bits.
    pub(super) existence: Vec<&'r ReadBounds>,
}

/// Splits reads by whether they are within bounds; only those within bounds are thinned.
pub(super) fn group_reads<'r>(reads: &[&'r ReadBounds]) -> ReadGroups<'r> {
    let (resurrected, rest): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        reads.iter().partition(|r| r.resurrection);
    let (over, rest): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        rest.into_iter().partition(|r| r.overcount() > 0);
    let (under, rest): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        rest.into_iter().partition(|r| r.undercount() > 0);
    let (existence, fine): (Vec<&ReadBounds>, Vec<&ReadBounds>) = rest
        .into_iter()
        .partition(|r| r.misread().is_some() || r.leaves_64_bits());
    ReadGroups {
        fine: thin(&fine).copied().collect(),
        under,
        over,
        resurrected,
        existence,
    }
}

/// The counter chart: each read of `key` kept for it (every one out of bounds, a sample of
/// the others; `all` of them were checked) against the range the history allows it.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    key: &str,
    (reads, all): (&[&ReadBounds], u64),
    faults: &Nemesis,
) -> Drawn {
    let title = format!("Reads of {key} against the values the history allows");
    let labels = Labels {
        title: &title,
        x: "read completion time since start (s)",
        y: "counter value",
    };
    let end = reads.iter().map(|r| r.time).max().unwrap_or(0);
    let (x, y) = (time_axis(end), counter_axis(reads));
    let mut chart = chart(root, &labels, x.clone(), y.clone())?;
    shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    let groups = group_reads(reads);
    draw_reads(&mut chart, &groups.fine, (BAND_COLOUR, VALUE_COLOUR, 2))?;
    draw_reads(&mut chart, &groups.under, (UNDER_COLOUR, UNDER_COLOUR, 4))?;
    draw_reads(&mut chart, &groups.over, (OVER_COLOUR, OVER_COLOUR, 4))?;
    let resurrected = &groups.resurrected;
    draw_reads(
        &mut chart,
        resurrected,
        (RESURRECTION_COLOUR, RESURRECTION_COLOUR, 5),
    )?;
    draw_reads(
        &mut chart,
        &groups.existence,
        (EXISTENCE_COLOUR, EXISTENCE_COLOUR, 4),
    )?;
    let (over, under) = (groups.over.len(), groups.under.len());
    let existence = groups.existence.len();
    let range = "allowed range [lower, upper]".to_string();
    entry(&mut chart, range, |(x, y)| {
        PathElement::new(
            vec![(x + 10, y - 6), (x + 10, y + 6)],
            BAND_COLOUR.stroke_width(3),
        )
    })?;
    let value = format!(
        "read within bounds ({})",
        all.saturating_sub((over + under + resurrected.len() + existence) as u64)
    );
    entry(&mut chart, value, dot(VALUE_COLOUR))?;
    entry(&mut chart, format!("overcount ({over})"), dot(OVER_COLOUR))?;
    entry(
        &mut chart,
        format!("undercount ({under})"),
        dot(UNDER_COLOUR),
    )?;
    let resurrections = format!("resurrection ({})", resurrected.len());
    entry(&mut chart, resurrections, dot(RESURRECTION_COLOUR))?;
    let misread = format!("0 for absent, null for 0, or past 64 bits ({existence})");
    entry(&mut chart, misread, dot(EXISTENCE_COLOUR))?;
    legend(&mut chart)
}
