//! The nemesis's faults on time charts: each fault window shaded in its kind's colour, with
//! a legend entry per kind.

use checkers::stats::FaultWindow;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;

/// The colour a kind of fault is shaded in.
pub fn colour(kind: &str) -> RGBColor {
    match kind {
        "partition" => RGBColor(148, 103, 189),
        "kill" => RGBColor(140, 86, 75),
        "power-loss" => RGBColor(214, 39, 40),
        "pause" => RGBColor(31, 119, 180),
        "clock-offset" | "clock" => RGBColor(188, 189, 34),
        "slow" => RGBColor(23, 190, 207),
        _ => RGBColor(127, 127, 127),
    }
}

/// Shades every fault window from its start to its stop (or `end_s`) over the whole height
/// `y`, behind whatever is drawn next, and adds one legend entry per kind.
pub fn shade<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    faults: &[FaultWindow],
    end_s: f64,
    y: (f64, f64),
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let seconds = |ns: u64| ns as f64 / 1e9;
    let boxes = faults.iter().map(|f| {
        let end = f.end_time.map_or(end_s, seconds).max(seconds(f.start_time));
        Rectangle::new(
            [(seconds(f.start_time), y.0), (end, y.1)],
            colour(&f.fault).mix(0.15).filled(),
        )
    });
    chart.draw_series(boxes).map_err(|e| e.to_string())?;
    let mut kinds: Vec<&str> = faults.iter().map(|f| f.fault.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let shade = colour(kind).mix(0.35).filled();
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(|e| e.to_string())?
            .label(format!("{kind} (nemesis)"))
            .legend(move |(x, y)| Rectangle::new([(x + 3, y - 5), (x + 17, y + 5)], shade));
    }
    Ok(())
}
