//! Tombstones each read and scan went over, against the warn and failure thresholds.

use super::frame::{
    chart, dot, failed, headroom, legend, seconds, Drawn, Labels, FAIL_COLOUR, INFO_COLOUR,
    MAX_POINTS, VALUE_COLOUR,
};
use super::shading::{self, Nemesis};
use checkers::thinned::Thinned;
use checkers::tombstones::Thresholds;
use checkers::{Op, OpType};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// The tombstones each client read went over, as they go by: a thinned series of
/// (completion time in s, tombstones) and exact figures.
#[derive(Debug)]
pub struct Scanned {
    points: Thinned<(f64, u64)>,
    /// How many reads went over each number of tombstones.
    counts: BTreeMap<u64, u64>,
    /// When the last read completed, s.
    end: f64,
}

impl Default for Scanned {
    fn default() -> Self {
        Scanned {
            points: Thinned::new(MAX_POINTS),
            counts: BTreeMap::new(),
            end: 0.0,
        }
    }
}

impl Scanned {
    /// Takes the next op of the history: a client's ok completion saying what it scanned.
    pub fn observe(&mut self, op: &Op) {
        if !op.process.is_client() || op.kind != OpType::Ok {
            return;
        }
        let Some(n) = op.tombstones else { return };
        let t = seconds(op.time);
        self.end = self.end.max(t);
        *self.counts.entry(n).or_default() += 1;
        self.points.push((t, n));
    }

    /// Whether no read said what it scanned.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// How many reads went over more than `n` tombstones.
    fn over(&self, n: u64) -> u64 {
        self.counts
            .range(n.saturating_add(1)..)
            .map(|(_, c)| c)
            .sum()
    }
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    scanned: &Scanned,
    thresholds: Thresholds,
    faults: &Nemesis,
) -> Drawn {
    let labels = Labels {
        title: "Tombstones each read went over",
        x: "read completion time since start (s)",
        y: "tombstones scanned",
    };
    let end = scanned.end;
    let x = 0.0..(end * 1.02).max(1.0);
    // The failure threshold is drawn only when it is near the data; far above, it would
    // flatten every point to the axis, and its legend entry says so instead.
    let data_top = (scanned.counts.keys().next_back().copied())
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
    let dots = scanned.points.kept().iter().map(|&(t, n)| {
        let colour = if over(n) { INFO_COLOUR } else { VALUE_COLOUR };
        Circle::new((t, n as f64), 2, colour.filled())
    });
    chart
        .draw_series(dots)
        .map_err(failed)?
        .label(format!(
            "reads ({}, {} over the warn threshold)",
            scanned.points.seen(),
            scanned.over(thresholds.warn)
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
