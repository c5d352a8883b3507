//! How far reads missed: a histogram of every read's error, undercounts below zero,
//! overcounts above, resurrections apart.

use super::frame::{
    chart, failed, headroom, legend, Drawn, Labels, OVER_COLOUR, RESURRECTION_COLOUR, UNDER_COLOUR,
};
use checkers::counter::{Direction, ReadBounds};
use plotters::coord::Shift;
use plotters::prelude::*;

/// At most this many bars.
const BINS: i64 = 40;

/// The bars: (bin low end, bin width, undercounts, overcounts, resurrections).
fn bins(reads: &[ReadBounds]) -> (i64, Vec<(i64, u64, u64, u64)>) {
    let errors: Vec<(i64, u8)> = reads
        .iter()
        .filter_map(|r| {
            let (by, direction, _) = r.error()?;
            Some(match direction {
                Direction::Under => (-by, 0),
                Direction::Over if r.resurrection => (by, 2),
                Direction::Over => (by, 1),
            })
        })
        .collect();
    let lo = errors.iter().map(|e| e.0).min().unwrap_or(0).min(0);
    let hi = errors.iter().map(|e| e.0).max().unwrap_or(0).max(0);
    let width = ((hi - lo + 1) + BINS - 1) / BINS;
    let width = width.max(1);
    let count = ((hi - lo) / width + 1) as usize;
    let mut bars: Vec<(i64, u64, u64, u64)> = (0..count)
        .map(|i| (lo + i as i64 * width, 0, 0, 0))
        .collect();
    for (error, kind) in errors {
        let bar = &mut bars[((error - lo) / width) as usize];
        match kind {
            0 => bar.1 += 1,
            1 => bar.2 += 1,
            _ => bar.3 += 1,
        }
    }
    (width, bars)
}

/// The chart.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    reads: &[ReadBounds],
    all: u64,
) -> Drawn {
    let (width, bars) = bins(reads);
    let wrong: u64 = bars.iter().map(|b| b.1 + b.2 + b.3).sum();
    let title = format!("Reads out of bounds by how much ({wrong} of {all} reads)");
    let labels = Labels {
        title: &title,
        x: "error (below 0: undercount, above: overcount)",
        y: "reads",
    };
    let top = bars
        .iter()
        .map(|b| b.1 + b.2 + b.3)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let lo = bars.first().map_or(0, |b| b.0) as f64;
    let hi = bars.last().map_or(1, |b| b.0 + width) as f64;
    let mut chart = chart(root, &labels, lo - 0.5..hi + 0.5, 0.0..headroom(0.0, top))?;
    let series = [
        ("undercount", UNDER_COLOUR),
        ("overcount", OVER_COLOUR),
        ("resurrection", RESURRECTION_COLOUR),
    ];
    for (i, (name, colour)) in series.into_iter().enumerate() {
        // Stacked: undercounts, then overcounts, then resurrections on top.
        let rects = bars.iter().filter_map(|b| {
            let counts = [b.1, b.2, b.3];
            let base: u64 = counts[..i].iter().sum();
            let n = counts[i];
            (n > 0).then(|| {
                let x0 = b.0 as f64 - 0.5;
                Rectangle::new(
                    [(x0, base as f64), (x0 + width as f64, (base + n) as f64)],
                    colour.filled(),
                )
            })
        });
        let total: u64 = bars.iter().map(|b| [b.1, b.2, b.3][i]).sum();
        chart
            .draw_series(rects)
            .map_err(failed)?
            .label(format!("{name} ({total})"))
            .legend(move |(x, y)| {
                Rectangle::new([(x + 3, y - 5), (x + 17, y + 5)], colour.filled())
            });
    }
    legend(&mut chart)
}
