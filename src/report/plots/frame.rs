//! What every chart shares: the embedded font, the size, the colours, writing PNG and SVG,
//! the frame (title, axes, grid), the legend, and the time axis with its buckets.

use checkers::OpType;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::fmt::Display;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The font every chart's text is set in, embedded so that no system font is needed.
pub(super) const FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family the embedded font is registered under.
pub(super) const FONT: &str = "sans-serif";

/// Width and height of every chart, in pixels.
pub(super) const SIZE: (u32, u32) = (1200, 600);

/// Above this many points a series is thinned to every k-th point.
pub(super) const MAX_POINTS: usize = 10_000;

/// The throughput chart uses at most about this many buckets.
pub(super) const MAX_BUCKETS: u64 = 200;

/// The lower share of the plot height that data may use; the legend sits above it.
pub(super) const DATA_SHARE: f64 = 0.7;

/// Nanoseconds per second.
pub(super) const NS_PER_S: u64 = 1_000_000_000;

/// Colour of an operation that took effect.
pub(super) const OK_COLOUR: RGBColor = RGBColor(44, 160, 44);

/// Colour of an operation whose outcome is unknown.
pub(super) const INFO_COLOUR: RGBColor = RGBColor(255, 127, 14);

/// Colour of an operation that certainly failed.
pub(super) const FAIL_COLOUR: RGBColor = RGBColor(214, 39, 40);

/// Colour of a read above its upper bound.
pub(super) const OVER_COLOUR: RGBColor = RGBColor(214, 39, 40);

/// Colour of a read below its lower bound.
pub(super) const UNDER_COLOUR: RGBColor = RGBColor(31, 119, 180);

/// Reads that brought back deleted counts.
pub(super) const RESURRECTION_COLOUR: RGBColor = RGBColor(148, 0, 211);

/// Reads wrong only about whether the counter exists (`0` for absent, `null` for 0).
pub(super) const EXISTENCE_COLOUR: RGBColor = RGBColor(23, 190, 207);

/// Colour of a read's allowed range.
pub(super) const BAND_COLOUR: RGBColor = RGBColor(200, 200, 200);

/// Colour of a read within its bounds.
pub(super) const VALUE_COLOUR: RGBColor = RGBColor(70, 70, 70);

/// The completions, in the order they are drawn (rarest on top).
pub(super) const OUTCOMES: [OpType; 3] = [OpType::Ok, OpType::Info, OpType::Fail];

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The embedded font could not be loaded.
    #[error("cannot load the embedded chart font")]
    Font,
    /// The chart folder could not be created.
    #[error("cannot create the chart folder {path}")]
    Dir {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// Plotters failed to draw or save a chart.
    #[error("cannot draw {path}: {message}")]
    Draw {
        /// The chart file.
        path: PathBuf,
        /// Plotters' error.
        message: String,
    },
}

/// A point on the canvas, in pixels.
pub(super) type Px = (i32, i32);

/// What drawing one chart gives: nothing, or plotters' error as text.
pub(super) type Drawn = Result<(), String>;

/// Plotters' error as text.
pub(super) fn failed(error: impl Display) -> String {
    error.to_string()
}

/// Registers the embedded font as the sans-serif family, once per process.
pub(super) fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    ok.then_some(()).ok_or(PlotError::Font)
}

/// Draws one chart into a PNG file at `path` and returns the path.
pub(super) fn write_png(
    path: PathBuf,
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Drawn,
) -> Result<PathBuf, PlotError> {
    let result = {
        let root = BitMapBackend::new(&path, SIZE).into_drawing_area();
        draw(&root).and_then(|()| root.present().map_err(failed))
    };
    match result {
        Ok(()) => Ok(path),
        Err(message) => Err(PlotError::Draw { path, message }),
    }
}

/// A chart whose axes are built from the ranges `X` and `Y`.
pub(super) type Chart<'a, DB, X, Y> = ChartContext<
    'a,
    DB,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// A chart with two linear axes.
pub(super) type LinearChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart's title and axis descriptions.
pub(super) struct Labels<'t> {
    pub(super) title: &'t str,
    pub(super) x: &'t str,
    pub(super) y: &'t str,
}

/// Clears `root` and draws the common frame: title, axes with their descriptions, grid.
pub(super) fn chart<'a, DB, X, Y>(
    root: &'a DrawingArea<DB, Shift>,
    labels: &Labels<'_>,
    x: X,
    y: Y,
) -> Result<Chart<'a, DB, X, Y>, String>
where
    DB: DrawingBackend,
    X: AsRangedCoord,
    Y: AsRangedCoord,
    X::CoordDescType: ValueFormatter<X::Value>,
    Y::CoordDescType: ValueFormatter<Y::Value>,
{
    root.fill(&WHITE).map_err(failed)?;
    let mut chart = ChartBuilder::on(root)
        .caption(labels.title, (FONT, 26))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(failed)?;
    chart
        .configure_mesh()
        .x_desc(labels.x)
        .y_desc(labels.y)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 18))
        .light_line_style(BLACK.mix(0.04))
        .x_labels(12)
        .y_labels(10)
        .draw()
        .map_err(failed)?;
    Ok(chart)
}

/// Draws the legend of the series given a label, in the upper-right corner.
pub(super) fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Drawn {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(failed)
}

/// A legend entry drawn with `glyph`, for no data.
pub(super) fn entry<'a, DB, CT, E, G>(
    chart: &mut ChartContext<'a, DB, CT>,
    label: String,
    glyph: G,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
    E: IntoDynElement<'a, DB, Px>,
    G: Fn(Px) -> E + 'a,
{
    chart
        .draw_series(std::iter::empty::<EmptyElement<CT::From, DB>>())
        .map_err(failed)?
        .label(label)
        .legend(glyph);
    Ok(())
}

/// A legend glyph: a filled circle in `colour`.
pub(super) fn dot(colour: RGBColor) -> impl Fn(Px) -> Circle<Px, i32> {
    move |(x, y)| Circle::new((x + 10, y), 4, colour.filled())
}

/// Every k-th item, with k chosen so that at most about [`MAX_POINTS`] remain.
pub(super) fn thin<T>(items: &[T]) -> impl Iterator<Item = &T> {
    items
        .iter()
        .step_by(items.len().div_ceil(MAX_POINTS).max(1))
}

/// Nanoseconds as seconds.
pub(super) fn seconds(ns: u64) -> f64 {
    ns as f64 / NS_PER_S as f64
}

/// A time axis from the start of the run to a little past `end_ns` (0..1 s when nothing happened).
pub(super) fn time_axis(end_ns: u64) -> Range<f64> {
    0.0..if end_ns == 0 {
        1.0
    } else {
        seconds(end_ns) * 1.02
    }
}

/// The share of a time axis the data may use on charts whose legend sits beside the data
/// rather than above it (a log axis would need decades of headroom).
pub(super) const TIME_SHARE: f64 = 0.76;

/// A time axis whose right part is left free for the legend, `data_end` being where the
/// data ends (the end of [`time_axis`]).
pub(super) fn time_axis_beside_legend(end_ns: u64) -> (Range<f64>, f64) {
    let data_end = time_axis(end_ns).end;
    (0.0..data_end / TIME_SHARE, data_end)
}

/// The top of an axis whose data spans `lo..hi`, leaving the upper part free for the legend.
pub(super) fn headroom(lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) / DATA_SHARE
}

/// The colour an outcome is drawn in.
pub(super) fn outcome_colour(kind: OpType) -> RGBColor {
    match kind {
        OpType::Ok => OK_COLOUR,
        OpType::Info => INFO_COLOUR,
        OpType::Fail | OpType::Invoke => FAIL_COLOUR,
    }
}

/// The bucket width in seconds for a run of `duration` ns: 1 s, or more to keep about [`MAX_BUCKETS`].
pub(super) fn bucket_seconds(duration: u64) -> u64 {
    duration.div_ceil(NS_PER_S).div_ceil(MAX_BUCKETS).max(1)
}

/// A bucketed line as steps: each bucket's rate held from its start to its end.
pub(super) fn steps(points: &[(f64, f64)], width: f64) -> Vec<(f64, f64)> {
    points
        .iter()
        .flat_map(|&(x, rate)| [(x, rate), (x + width, rate)])
        .collect()
}
