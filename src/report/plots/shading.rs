//! The nemesis on time charts: each fault window shaded in its kind's colour, each instant
//! action (flush, compact, repair, heal) a dashed line, with a legend entry per kind.

use checkers::stats::FaultWindow;
use checkers::{Op, Process};
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;

/// What the nemesis did, as the time charts show it.
pub struct Nemesis<'a> {
    /// The faults it held, from start to stop.
    pub windows: &'a [FaultWindow],
    /// Its instant actions.
    pub marks: &'a [Mark],
}

#[cfg(test)]
impl Nemesis<'_> {
    /// No fault and no action.
    pub const NONE: Nemesis<'static> = Nemesis {
        windows: &[],
        marks: &[],
    };
}

/// One instant action of the nemesis (not a `start-`/`stop-` pair): when, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Seconds from the start of the run, as the history's times count.
    pub at_s: f64,
    /// The action, as the history names it (`flush`, `compact`, `repair`, `heal`).
    pub action: String,
}

/// The nemesis's instant actions in `history`: its ops that neither start nor stop a fault,
/// the final reads apart (they come after every chart's data). The nemesis records an
/// action as it begins and again as it is done, the same op twice in a row: one mark.
pub fn marks(history: &[Op]) -> Vec<Mark> {
    let mut marks = Vec::new();
    let mut previous: Option<&Op> = None;
    for op in history.iter().filter(|op| op.process == Process::nemesis()) {
        let again = previous.is_some_and(|p| p.f == op.f && p.value == op.value);
        previous = Some(op);
        let action = op.f.to_string();
        let instant = !action.starts_with("start") && !action.starts_with("stop");
        if instant && !again && action != "final-reads" && op.kind != checkers::OpType::Invoke {
            marks.push(Mark {
                at_s: op.time as f64 / 1e9,
                action,
            });
        }
    }
    marks
}

/// The colour a kind of fault is shaded in.
pub fn colour(kind: &str) -> RGBColor {
    match kind {
        "partition" => RGBColor(148, 103, 189),
        "kill" => RGBColor(140, 86, 75),
        "power-loss" => RGBColor(214, 39, 40),
        "pause" => RGBColor(31, 119, 180),
        "clock-offset" | "clock" => RGBColor(188, 189, 34),
        "slow" => RGBColor(23, 190, 207),
        // Instant actions: none in the outcomes' green, orange or red.
        "flush" => RGBColor(128, 0, 128),
        "compact" => RGBColor(227, 119, 194),
        "repair" => RGBColor(0, 0, 128),
        "heal" => RGBColor(0, 0, 0),
        // Done by the system itself (Redis's sentinels), seen by the run.
        "failover" => RGBColor(0, 128, 128),
        _ => RGBColor(127, 127, 127),
    }
}

/// Shades every fault window from its start to its stop (or `end_s`) over the whole height
/// `y`, behind whatever is drawn next, draws a dashed line at each instant action, and adds
/// one legend entry per kind.
pub fn shade<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    nemesis: &Nemesis,
    end_s: f64,
    y: (f64, f64),
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let faults = nemesis.windows;
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
    let mut actions: Vec<&str> = nemesis.marks.iter().map(|m| m.action.as_str()).collect();
    actions.sort_unstable();
    actions.dedup();
    for action in actions {
        let style = colour(action).stroke_width(2);
        let at = (nemesis.marks.iter())
            .filter(|m| m.action == action && m.at_s <= end_s)
            .map(|m| m.at_s);
        for (i, x) in at.enumerate() {
            let line = DashedLineSeries::new([(x, y.0), (x, y.1)], 6, 4, style);
            let drawn = chart.draw_series(line).map_err(|e| e.to_string())?;
            if i == 0 {
                let by = match action {
                    "failover" => "system",
                    _ => "nemesis",
                };
                drawn
                    .label(format!("{action} ({by})"))
                    .legend(move |(x, y)| PathElement::new(vec![(x + 3, y), (x + 17, y)], style));
            }
        }
    }
    Ok(())
}
