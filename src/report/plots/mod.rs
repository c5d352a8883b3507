//! PNG charts of a run: operation latency, throughput, and the hot counter's reads against their bounds.

use super::fault_shading;
use checkers::counter::{Direction, ReadBounds};
use checkers::stats::FaultWindow;
use checkers::tombstones::Thresholds;
use checkers::{Op, OpType, Process, F};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The font every chart's text is set in, embedded so that no system font is needed.
const FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
/// The family the embedded font is registered under.
const FONT: &str = "sans-serif";
/// Width and height of every chart, in pixels.
const SIZE: (u32, u32) = (1200, 600);
/// Above this many points a series is thinned to every k-th point.
const MAX_POINTS: usize = 10_000;
/// The throughput chart uses at most about this many buckets.
const MAX_BUCKETS: u64 = 200;
/// The lower share of the plot height that data may use; the legend sits above it.
const DATA_SHARE: f64 = 0.7;
/// The smallest latency drawn on the log axis, in ms.
const MIN_LATENCY_MS: f64 = 0.001;
/// Nanoseconds per second.
const NS_PER_S: u64 = 1_000_000_000;

/// Colour of an operation that took effect.
const OK_COLOUR: RGBColor = RGBColor(44, 160, 44);
/// Colour of an operation whose outcome is unknown.
const INFO_COLOUR: RGBColor = RGBColor(255, 127, 14);
/// Colour of an operation that certainly failed.
const FAIL_COLOUR: RGBColor = RGBColor(214, 39, 40);
/// Colour of a read above its upper bound.
const OVER_COLOUR: RGBColor = RGBColor(214, 39, 40);
/// Colour of a read below its lower bound.
const UNDER_COLOUR: RGBColor = RGBColor(31, 119, 180);
/// Reads that brought back deleted counts.
const RESURRECTION_COLOUR: RGBColor = RGBColor(148, 0, 211);
/// Colour of a read's allowed range.
const BAND_COLOUR: RGBColor = RGBColor(200, 200, 200);
/// Colour of a read within its bounds.
const VALUE_COLOUR: RGBColor = RGBColor(70, 70, 70);
/// The completions, in the order they are drawn (rarest on top).
const OUTCOMES: [OpType; 3] = [OpType::Ok, OpType::Info, OpType::Fail];

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

/// One completed client operation: when it was called, how long it took, how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// What the operation did.
    pub f: F,
    /// How it ended: ok, fail or info.
    pub kind: OpType,
    /// When it was invoked, ns since the run began.
    pub start: u64,
    /// From invoke to completion, ns.
    pub latency: u64,
}

impl Span {
    /// When it completed, ns since the run began.
    fn end(&self) -> u64 {
        self.start.saturating_add(self.latency)
    }
}

/// Pairs each client invoke with its completion (by process); ops never completed are left out.
pub fn spans(history: &[Op]) -> Vec<Span> {
    let mut open: HashMap<&Process, &Op> = HashMap::new();
    let mut spans = Vec::new();
    for op in history.iter().filter(|op| op.process.is_client()) {
        if op.kind == OpType::Invoke {
            open.insert(&op.process, op);
        } else if let Some(invoke) = open.remove(&op.process) {
            spans.push(Span {
                f: invoke.f.clone(),
                kind: op.kind,
                start: invoke.time,
                latency: op.time.saturating_sub(invoke.time),
            });
        }
    }
    spans
}

mod errors;
mod quantiles;
mod tombstones;
mod trend;
mod unknown;

/// Draws the soak's trend chart into `dir` as `trend.png` and `trend.svg`.
pub fn render_trend(
    points: &[crate::soak::summary::TrendPoint],
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    register_font()?;
    Ok(write_chart(dir, "trend", &Trend(points))?.to_vec())
}

/// The soak's trend chart.
struct Trend<'a>(&'a [crate::soak::summary::TrendPoint]);

impl Drawing for Trend<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        trend::draw(root, self.0)
    }
}

/// What the charts are drawn from.
pub struct Charts<'a> {
    /// The history.
    pub history: &'a [Op],
    /// Every checked read's bounds.
    pub reads: &'a [ReadBounds],
    /// The nemesis's fault windows, shaded on every time chart.
    pub faults: &'a [FaultWindow],
    /// The thresholds drawn on the tombstones chart.
    pub tombstones: Thresholds,
}

/// How many counters beside the hot one get a chart of their own: those with the most reads
/// out of bounds.
const WORST_COUNTERS: usize = 2;

/// Draws every chart into `dir` (created if missing), each as a PNG for viewing and an SVG
/// for the report, and returns the files written.
pub fn render_all(input: &Charts, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let (reads, faults) = (input.reads, input.faults);
    let spans = spans(input.history);
    let mut written = Vec::new();
    written.extend(write_chart(dir, "latency", &Latency(&spans, faults))?);
    written.extend(write_chart(
        dir,
        "latency-quantiles",
        &Quantiles(&spans, faults),
    )?);
    written.extend(write_chart(
        dir,
        "throughput",
        &ThroughputChart(&spans, faults),
    )?);
    written.extend(write_chart(
        dir,
        "unknown-outcomes",
        &Unknown(&spans, faults),
    )?);
    let hot = hot_key(reads);
    let worst = worst_keys(reads).into_iter().filter(|k| Some(*k) != hot);
    let keys: Vec<&str> = hot.into_iter().chain(worst.take(WORST_COUNTERS)).collect();
    for (i, key) in keys.iter().enumerate() {
        let of_key: Vec<&ReadBounds> = reads.iter().filter(|read| read.key == *key).collect();
        let name = if i == 0 {
            "counter".to_string()
        } else {
            format!("counter-{}", i + 1)
        };
        written.extend(write_chart(
            dir,
            &name,
            &CounterChart(key, &of_key, faults),
        )?);
    }
    if !reads.is_empty() {
        written.extend(write_chart(dir, "errors", &Errors(reads))?);
    }
    let scanned = tombstones::scanned(input.history);
    if !scanned.is_empty() {
        let chart = Tombstones(&scanned, input.tombstones, faults);
        written.extend(write_chart(dir, "tombstones", &chart)?);
    }
    Ok(written)
}

/// Keys with reads out of bounds, the most such reads first.
fn worst_keys(reads: &[ReadBounds]) -> Vec<&str> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for read in reads.iter().filter(|r| r.error().is_some()) {
        *counts.entry(read.key.as_str()).or_default() += 1;
    }
    let mut keys: Vec<(&str, usize)> = counts.into_iter().collect();
    keys.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    keys.into_iter().map(|(key, _)| key).collect()
}

/// The latency quantiles chart.
struct Quantiles<'a>(&'a [Span], &'a [FaultWindow]);

impl Drawing for Quantiles<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        quantiles::draw(root, self.0, self.1)
    }
}

/// The unknown-outcomes chart.
struct Unknown<'a>(&'a [Span], &'a [FaultWindow]);

impl Drawing for Unknown<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        unknown::draw(root, self.0, self.1)
    }
}

/// The error histogram.
struct Errors<'a>(&'a [ReadBounds]);

impl Drawing for Errors<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        errors::draw(root, self.0)
    }
}

/// The tombstones chart.
struct Tombstones<'a>(&'a [(f64, u64)], Thresholds, &'a [FaultWindow]);

impl Drawing for Tombstones<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        tombstones::draw(root, self.0, self.1, self.2)
    }
}

/// A chart that can be drawn on any plotters backend (bitmap or SVG).
trait Drawing {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn;
}

/// The latency chart of these spans.
struct Latency<'a>(&'a [Span], &'a [FaultWindow]);

impl Drawing for Latency<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        draw_latency(root, self.0, self.1)
    }
}

/// The throughput chart of these spans.
struct ThroughputChart<'a>(&'a [Span], &'a [FaultWindow]);

impl Drawing for ThroughputChart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        draw_throughput(root, self.0, self.1)
    }
}

/// The counter chart of one key's reads.
struct CounterChart<'a>(&'a str, &'a [&'a ReadBounds], &'a [FaultWindow]);

impl Drawing for CounterChart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        draw_counter(root, self.0, self.1, self.2)
    }
}

/// Draws `chart` as `dir/<name>.png` and `dir/<name>.svg`; returns both paths.
fn write_chart(dir: &Path, name: &str, chart: &impl Drawing) -> Result<[PathBuf; 2], PlotError> {
    let png = write_png(dir.join(format!("{name}.png")), |root| chart.draw(root))?;
    let svg = dir.join(format!("{name}.svg"));
    let result = {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        chart
            .draw(&root)
            .and_then(|()| root.present().map_err(failed))
    };
    match result {
        Ok(()) => Ok([png, svg]),
        Err(message) => Err(PlotError::Draw { path: svg, message }),
    }
}

/// A point on the canvas, in pixels.
type Px = (i32, i32);

/// What drawing one chart gives: nothing, or plotters' error as text.
type Drawn = Result<(), String>;

/// Plotters' error as text.
fn failed(error: impl Display) -> String {
    error.to_string()
}

/// Registers the embedded font as the sans-serif family, once per process.
fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    ok.then_some(()).ok_or(PlotError::Font)
}

/// Draws one chart into a PNG file at `path` and returns the path.
fn write_png(
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
type Chart<'a, DB, X, Y> = ChartContext<
    'a,
    DB,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// A chart with two linear axes.
type LinearChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart's title and axis descriptions.
struct Labels<'t> {
    title: &'t str,
    x: &'t str,
    y: &'t str,
}

/// Clears `root` and draws the common frame: title, axes with their descriptions, grid.
fn chart<'a, DB, X, Y>(
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
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
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
fn entry<'a, DB, CT, E, G>(chart: &mut ChartContext<'a, DB, CT>, label: String, glyph: G) -> Drawn
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
fn dot(colour: RGBColor) -> impl Fn(Px) -> Circle<Px, i32> {
    move |(x, y)| Circle::new((x + 10, y), 4, colour.filled())
}

/// Every k-th item, with k chosen so that at most about [`MAX_POINTS`] remain.
fn thin<T>(items: &[T]) -> impl Iterator<Item = &T> {
    items
        .iter()
        .step_by(items.len().div_ceil(MAX_POINTS).max(1))
}

/// Nanoseconds as seconds.
fn seconds(ns: u64) -> f64 {
    ns as f64 / NS_PER_S as f64
}

/// A time axis from the start of the run to a little past `end_ns` (0..1 s when nothing happened).
fn time_axis(end_ns: u64) -> Range<f64> {
    0.0..if end_ns == 0 {
        1.0
    } else {
        seconds(end_ns) * 1.02
    }
}

/// The top of an axis whose data spans `lo..hi`, leaving the upper part free for the legend.
fn headroom(lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) / DATA_SHARE
}

/// The colour an outcome is drawn in.
fn outcome_colour(kind: OpType) -> RGBColor {
    match kind {
        OpType::Ok => OK_COLOUR,
        OpType::Info => INFO_COLOUR,
        OpType::Fail | OpType::Invoke => FAIL_COLOUR,
    }
}

/// A span's latency in ms, at least [`MIN_LATENCY_MS`] so that the log axis can show it.
fn latency_ms(span: &Span) -> f64 {
    (span.latency as f64 / 1e6).max(MIN_LATENCY_MS)
}

/// A log axis from a power of ten below every latency to above them all (from 0.1 ms when there are none).
fn latency_axis(spans: &[Span]) -> Range<f64> {
    let (lo, hi) = spans
        .iter()
        .map(latency_ms)
        .fold((100.0, 0.1), |(lo, hi), ms| (ms.min(lo), ms.max(hi)));
    let lo = (lo / 1.5).log10().floor();
    let hi = (hi * 1.5).log10().ceil().max(lo + 1.0);
    10f64.powf(lo)..10f64.powf(headroom(lo, hi))
}

/// The outline of an op's marker, in pixels around its centre: a circle (octagon) for an add,
/// a triangle for a read, a diamond otherwise.
fn outline(f: &F) -> Vec<Px> {
    match f {
        F::Add => vec![
            (-2, -4),
            (2, -4),
            (4, -2),
            (4, 2),
            (2, 4),
            (-2, 4),
            (-4, 2),
            (-4, -2),
        ],
        F::Read => vec![(0, -5), (5, 4), (-5, 4)],
        _ => vec![(0, -5), (5, 0), (0, 5), (-5, 0)],
    }
}

/// The latency chart: one marker per completed client op, coloured by outcome, shaped by f.
fn draw_latency<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spans: &[Span],
    faults: &[FaultWindow],
) -> Drawn {
    let labels = Labels {
        title: "Latency of client operations",
        x: "time since start (s)",
        y: "latency (ms, log scale)",
    };
    let end = spans.iter().map(Span::end).max().unwrap_or(0);
    let (x, y) = (time_axis(end), latency_axis(spans));
    let mut chart = chart(root, &labels, x.clone(), y.clone().log_scale())?;
    fault_shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    for kind in OUTCOMES {
        let outcome: Vec<&Span> = spans.iter().filter(|span| span.kind == kind).collect();
        let colour = outcome_colour(kind);
        chart
            .draw_series(thin(&outcome).map(|span| {
                let at = (seconds(span.start), latency_ms(span));
                EmptyElement::at(at) + Polygon::new(outline(&span.f), colour.filled())
            }))
            .map_err(failed)?
            .label(format!("{} ({})", kind.as_str(), outcome.len()))
            .legend(dot(colour));
    }
    for (f, label) in [(F::Add, "add"), (F::Read, "read"), (F::Delete, "other f")] {
        entry(&mut chart, label.to_string(), move |(x, y)| {
            EmptyElement::at((x + 10, y)) + Polygon::new(outline(&f), BLACK.filled())
        })?;
    }
    legend(&mut chart)
}

/// One line of the throughput chart: an f and an outcome, and its rate per bucket.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    f: F,
    kind: OpType,
    /// (bucket start in s, completions per second in that bucket).
    points: Vec<(f64, f64)>,
}

/// The bucket width in seconds for a run of `duration` ns: 1 s, or more to keep about [`MAX_BUCKETS`].
fn bucket_seconds(duration: u64) -> u64 {
    duration.div_ceil(NS_PER_S).div_ceil(MAX_BUCKETS).max(1)
}

/// The throughput chart's data.
#[derive(Debug, Clone, PartialEq)]
struct Throughput {
    /// Bucket width, s.
    width: u64,
    /// One line per (f, outcome) that occurs, each with every bucket.
    lines: Vec<Line>,
}

/// The completion rate of each (f, outcome) that occurs, per bucket of completion time.
fn throughput(spans: &[Span]) -> Throughput {
    let end = spans.iter().map(Span::end).max().unwrap_or(0);
    let width = bucket_seconds(end);
    let bucket_ns = width.saturating_mul(NS_PER_S);
    let buckets = usize::try_from(end / bucket_ns).unwrap_or(0) + 1;
    let mut counts: BTreeMap<(F, usize), Vec<u64>> = BTreeMap::new();
    for span in spans {
        let Some(rank) = OUTCOMES.iter().position(|kind| *kind == span.kind) else {
            continue;
        };
        let bucket = usize::try_from(span.end() / bucket_ns).unwrap_or(0);
        let line = counts
            .entry((span.f.clone(), rank))
            .or_insert_with(|| vec![0; buckets]);
        if let Some(count) = line.get_mut(bucket) {
            *count += 1;
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

/// A bucketed line as steps: each bucket's rate held from its start to its end.
fn steps(points: &[(f64, f64)], width: f64) -> Vec<(f64, f64)> {
    points
        .iter()
        .flat_map(|&(x, rate)| [(x, rate), (x + width, rate)])
        .collect()
}

/// The throughput chart: completions per second over time, one line per (f, outcome).
fn draw_throughput<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spans: &[Span],
    faults: &[FaultWindow],
) -> Drawn {
    let Throughput { width, lines } = throughput(spans);
    let title = format!("Throughput of client operations ({width} s buckets)");
    let labels = Labels {
        title: &title,
        x: "time since start (s)",
        y: "completed operations (ops/s)",
    };
    let top = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|&(_, rate)| rate))
        .fold(0.0, f64::max);
    let buckets = lines.first().map_or(0, |line| line.points.len());
    let x = 0.0..(buckets as u64 * width).max(1) as f64;
    let y = 0.0..headroom(0.0, if top > 0.0 { top } else { 1.0 });
    let mut chart = chart(root, &labels, x.clone(), y.clone())?;
    fault_shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
    for line in &lines {
        draw_line(&mut chart, line, width as f64)?;
    }
    if lines.is_empty() {
        return Ok(());
    }
    legend(&mut chart)
}

/// The (dash, gap) lengths of an f's line, in pixels: solid for add, dashed for read, dotted otherwise.
fn dashes(f: &F) -> (u32, u32) {
    match f {
        F::Add => (20, 0),
        F::Read => (8, 5),
        _ => (2, 5),
    }
}

/// Draws one throughput line: coloured by outcome, dashed by f.
fn draw_line<'a, DB: DrawingBackend + 'a>(
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

/// The key with the most reads (the first in order on a tie), if there are reads.
fn hot_key(reads: &[ReadBounds]) -> Option<&str> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for read in reads {
        *counts.entry(read.key.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(key, _)| key)
}

/// The counter chart's value axis: every bound and value, with a margin.
fn counter_axis(reads: &[&ReadBounds]) -> Range<f64> {
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
fn draw_reads<DB: DrawingBackend>(
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
struct ReadGroups<'r> {
    fine: Vec<&'r ReadBounds>,
    under: Vec<&'r ReadBounds>,
    over: Vec<&'r ReadBounds>,
    resurrected: Vec<&'r ReadBounds>,
}

/// Splits reads by whether they are within bounds; only those within bounds are thinned.
fn group_reads<'r>(reads: &[&'r ReadBounds]) -> ReadGroups<'r> {
    let (resurrected, rest): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        reads.iter().partition(|r| r.resurrection);
    let (over, rest): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        rest.into_iter().partition(|r| r.overcount() > 0);
    let (under, fine): (Vec<&ReadBounds>, Vec<&ReadBounds>) =
        rest.into_iter().partition(|r| r.undercount() > 0);
    ReadGroups {
        fine: thin(&fine).copied().collect(),
        under,
        over,
        resurrected,
    }
}

/// The counter chart: each read of `key` against the range the history allows it.
fn draw_counter<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    key: &str,
    reads: &[&ReadBounds],
    faults: &[FaultWindow],
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
    fault_shading::shade(&mut chart, faults, x.end, (y.start, y.end))?;
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
    let (over, under) = (groups.over.len(), groups.under.len());
    let range = "allowed range [lower, upper]".to_string();
    entry(&mut chart, range, |(x, y)| {
        PathElement::new(
            vec![(x + 10, y - 6), (x + 10, y + 6)],
            BAND_COLOUR.stroke_width(3),
        )
    })?;
    let value = format!(
        "read within bounds ({})",
        reads.len() - over - under - resurrected.len()
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
    legend(&mut chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::builder::HistoryBuilder;
    use checkers::counter::CounterChecker;
    use serde_json::Value;

    const MS: u64 = 1_000_000;

    /// The charts every history gets, in order.
    const LATENCY_AND_THROUGHPUT: [&str; 8] = [
        "latency.png",
        "latency.svg",
        "latency-quantiles.png",
        "latency-quantiles.svg",
        "throughput.png",
        "throughput.svg",
        "unknown-outcomes.png",
        "unknown-outcomes.svg",
    ];

    /// A small history: ok, info and fail adds, two reads of the hot key (one overcounting), one of another.
    fn history() -> Vec<Op> {
        let mut h = HistoryBuilder::on("views/home");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        h.read(2);
        h.read_ok(2, 1);
        h.add(3, 2);
        h.added(3, 2, OpType::Info);
        h.add(4, 5);
        h.added(4, 5, OpType::Fail);
        h.read(2);
        h.read_ok(2, 7);
        h.key("views/about");
        h.read(5);
        h.read_ok(5, 0);
        h.ops().to_vec()
    }

    /// Every ok read's bounds, as the counter checker computes them.
    fn read_bounds(history: &[Op]) -> Vec<ReadBounds> {
        let mut checker = CounterChecker::keeping_reads();
        for op in history {
            checker.observe(op);
        }
        checker.finish().read_bounds
    }

    /// A read of `key` completing at `time` that returned `value` and allows `lower..=upper`.
    fn bounds(key: &str, time: u64, value: i64, (lower, upper): (i64, i64)) -> ReadBounds {
        ReadBounds {
            key: key.to_string(),
            invoke_index: 0,
            index: 1,
            invoke_time: time,
            time,
            value: Some(value),
            lower,
            upper,
            ..ReadBounds::default()
        }
    }

    /// The charts' input without faults, at Cassandra's thresholds.
    fn charts<'a>(history: &'a [Op], reads: &'a [ReadBounds]) -> Charts<'a> {
        Charts {
            history,
            reads,
            faults: &[],
            tombstones: Thresholds::default(),
        }
    }

    /// A span, briefly.
    fn span(f: F, kind: OpType, start: u64, latency: u64) -> Span {
        Span {
            f,
            kind,
            start,
            latency,
        }
    }

    /// The file names of `paths`.
    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| {
                p.file_name()
                    .expect("a file name")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    /// Asserts that `path` is a PNG of the chart size, by its signature and IHDR chunk.
    fn assert_png_of_chart_size(path: &Path) {
        let bytes = std::fs::read(path).expect("the chart file");
        assert_eq!(
            &bytes[..8],
            b"\x89PNG\r\n\x1a\n",
            "{} is not a PNG",
            path.display()
        );
        assert_eq!(&bytes[12..16], b"IHDR");
        let width = u32::from_be_bytes(bytes[16..20].try_into().expect("4 bytes"));
        let height = u32::from_be_bytes(bytes[20..24].try_into().expect("4 bytes"));
        assert_eq!((width, height), SIZE, "{}", path.display());
    }

    /// Asserts that `path` is a PNG or an SVG of the chart size.
    fn assert_chart_of_chart_size(path: &Path) {
        if path.extension().is_some_and(|e| e == "svg") {
            let text = std::fs::read_to_string(path).expect("the chart file");
            let size = format!("width=\"{}\" height=\"{}\"", SIZE.0, SIZE.1);
            assert!(
                text.starts_with("<svg") && text.contains(&size),
                "{}",
                path.display()
            );
            assert!(text.contains("<text"), "{} has no text", path.display());
        } else {
            assert_png_of_chart_size(path);
        }
    }

    /// Draws into an in-memory RGB buffer of the chart size.
    fn render(draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Drawn) -> Vec<u8> {
        register_font().expect("the embedded font");
        let mut buf = vec![0; (SIZE.0 * SIZE.1 * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
            draw(&root).expect("drawn");
            root.present().expect("presented");
        }
        buf
    }

    /// How many pixels of `buf` are exactly `colour`.
    fn pixels(buf: &[u8], colour: RGBColor) -> usize {
        let RGBColor(r, g, b) = colour;
        buf.chunks_exact(3).filter(|px| px == &[r, g, b]).count()
    }

    #[test]
    fn spans_pair_each_invoke_with_its_process_completion() {
        let mut h = HistoryBuilder::on("views/home");
        h.add(1, 1);
        h.read(2);
        h.added(1, 1, OpType::Ok);
        h.add(3, 4);
        h.read_ok(2, 1);
        h.added(3, 4, OpType::Info);
        h.add(4, 2); // never completed
        h.read(5);
        h.push(5, OpType::Fail, F::Read, Value::Null);
        h.push(9, OpType::Ok, F::Read, Value::from(3)); // completes nothing
        let mut ops = h.ops().to_vec();
        for kind in [OpType::Invoke, OpType::Info] {
            let f = F::Other("kill".to_string());
            ops.push(Op::new(Process::nemesis(), kind, f, None, Value::Null));
        }
        assert_eq!(
            spans(&ops),
            vec![
                span(F::Add, OpType::Ok, 0, 2 * MS),
                span(F::Read, OpType::Ok, MS, 3 * MS),
                span(F::Add, OpType::Info, 3 * MS, 2 * MS),
                span(F::Read, OpType::Fail, 7 * MS, MS),
            ]
        );
    }

    #[test]
    fn render_all_writes_three_charts_of_1200_by_600_as_png_and_svg() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let out = dir.path().join("plots");
        let history = history();
        let written =
            render_all(&charts(&history, &read_bounds(&history)), &out).expect("rendered");
        assert_eq!(
            names(&written),
            [
                LATENCY_AND_THROUGHPUT.as_slice(),
                &["counter.png", "counter.svg", "errors.png", "errors.svg"]
            ]
            .concat()
        );
        for path in &written {
            assert!(path.starts_with(&out));
            assert_chart_of_chart_size(path);
        }
    }

    #[test]
    fn render_all_skips_the_counter_chart_without_reads() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let written = render_all(&charts(&history(), &[]), dir.path()).expect("rendered");
        assert_eq!(names(&written), LATENCY_AND_THROUGHPUT);
        assert!(!dir.path().join("counter.png").exists());
    }

    #[test]
    fn empty_and_nemesis_only_histories_render_blank_charts() {
        let nemesis = Op::new(
            Process::nemesis(),
            OpType::Invoke,
            F::Other("start-partition".to_string()),
            None,
            Value::Null,
        );
        for history in [vec![], vec![nemesis]] {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let written = render_all(&charts(&history, &[]), dir.path()).expect("rendered");
            assert_eq!(names(&written), LATENCY_AND_THROUGHPUT);
            written
                .iter()
                .for_each(|path| assert_chart_of_chart_size(path));
        }
    }

    #[test]
    fn the_embedded_font_renders_text() {
        register_font().expect("the embedded font");
        let mut buf = vec![255; 200 * 50 * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (200, 50)).into_drawing_area();
            root.draw_text("counter 42", &(FONT, 24).into_text_style(&root), (5, 5))
                .expect("drawn");
            root.present().expect("presented");
        }
        assert!(
            buf.chunks_exact(3)
                .filter(|px| px != &[255, 255, 255])
                .count()
                > 100
        );
    }

    #[test]
    fn text_in_an_unregistered_family_is_an_error_not_blank() {
        register_font().expect("the embedded font");
        let mut buf = vec![255; 200 * 50 * 3];
        let root = BitMapBackend::with_buffer(&mut buf, (200, 50)).into_drawing_area();
        let style = ("no-such-family", 24).into_text_style(&root);
        assert!(root.draw_text("counter", &style, (5, 5)).is_err());
    }

    #[test]
    fn the_latency_chart_colours_markers_by_outcome() {
        let ok = vec![span(F::Add, OpType::Ok, 0, 2 * MS)];
        let mut with_fail = ok.clone();
        with_fail.push(span(F::Read, OpType::Fail, MS, 5 * MS));
        let (ok, with_fail) = (
            render(|root| draw_latency(root, &ok, &[])),
            render(|root| draw_latency(root, &with_fail, &[])),
        );
        assert!(pixels(&with_fail, FAIL_COLOUR) > pixels(&ok, FAIL_COLOUR));
        assert!(pixels(&ok, OK_COLOUR) > 0);
    }

    #[test]
    fn the_counter_chart_marks_overcounts_red_and_undercounts_blue() {
        let fine = [bounds("k", MS, 5, (4, 6)), bounds("k", 2 * MS, 6, (5, 8))];
        let over = bounds("k", 3 * MS, 9, (5, 8));
        let under = bounds("k", 4 * MS, 2, (5, 8));
        let draw = |reads: Vec<&ReadBounds>| render(|root| draw_counter(root, "k", &reads, &[]));
        let baseline = draw(fine.iter().collect());
        let marked = draw(fine.iter().chain([&over, &under]).collect());
        assert!(pixels(&marked, OVER_COLOUR) > pixels(&baseline, OVER_COLOUR));
        assert!(pixels(&marked, UNDER_COLOUR) > pixels(&baseline, UNDER_COLOUR));
    }

    #[test]
    fn thinning_never_drops_a_bad_read() {
        let mut reads: Vec<ReadBounds> = (0..3 * MAX_POINTS as u64)
            .map(|i| bounds("k", i * MS, 5, (0, 10)))
            .collect();
        reads.insert(7_777, bounds("k", 77 * MS, 15, (0, 10)));
        reads.insert(8_888, bounds("k", 88 * MS, -1, (0, 10)));
        let all: Vec<&ReadBounds> = reads.iter().collect();
        let groups = group_reads(&all);
        assert_eq!(groups.fine.len(), MAX_POINTS);
        assert!(groups.fine.iter().all(|r| r.count() == 5));
        assert_eq!(
            groups.over.iter().map(|r| r.count()).collect::<Vec<_>>(),
            [15]
        );
        assert_eq!(
            groups.under.iter().map(|r| r.count()).collect::<Vec<_>>(),
            [-1]
        );
    }

    #[test]
    fn thin_keeps_every_kth_item_up_to_the_limit() {
        let few: Vec<usize> = (0..10).collect();
        assert_eq!(thin(&few).count(), 10);
        let many: Vec<usize> = (0..2 * MAX_POINTS + 1).collect();
        let kept: Vec<usize> = thin(&many).copied().collect();
        assert_eq!(kept.len(), (2 * MAX_POINTS + 1).div_ceil(3));
        assert_eq!(&kept[..3], [0, 3, 6]);
        assert_eq!(thin::<usize>(&[]).count(), 0);
    }

    #[test]
    fn throughput_counts_completions_per_second_per_f_and_outcome() {
        let s = NS_PER_S;
        let spans = [
            span(F::Add, OpType::Ok, 0, MS),
            span(F::Add, OpType::Ok, s / 2, s),
            span(F::Add, OpType::Ok, s, MS),
            span(F::Read, OpType::Info, 0, 2 * s + MS),
        ];
        let line = |f, kind, points: &[(f64, f64)]| Line {
            f,
            kind,
            points: points.to_vec(),
        };
        assert_eq!(
            throughput(&spans),
            Throughput {
                width: 1,
                lines: vec![
                    line(F::Add, OpType::Ok, &[(0.0, 1.0), (1.0, 2.0), (2.0, 0.0)]),
                    line(F::Read, OpType::Info, &[(0.0, 0.0), (1.0, 0.0), (2.0, 1.0)]),
                ]
            }
        );
        assert!(throughput(&[]).lines.is_empty());
        let stepped = steps(&[(0.0, 1.0), (2.0, 3.0)], 2.0);
        assert_eq!(stepped, [(0.0, 1.0), (2.0, 1.0), (2.0, 3.0), (4.0, 3.0)]);
    }

    #[test]
    fn long_runs_get_wider_buckets() {
        assert_eq!(bucket_seconds(0), 1);
        assert_eq!(bucket_seconds(200 * NS_PER_S), 1);
        assert_eq!(bucket_seconds(200 * NS_PER_S + 1), 2);
        assert_eq!(bucket_seconds(3_600 * NS_PER_S), 18);
        let spans = [span(F::Add, OpType::Ok, 0, 3_600 * NS_PER_S)];
        let buckets = throughput(&spans).lines[0].points.len();
        assert!((180..=201).contains(&buckets), "{buckets}");
    }

    #[test]
    fn the_hot_key_is_the_most_read_one() {
        let reads = [
            bounds("b", 0, 0, (0, 0)),
            bounds("a", 0, 0, (0, 0)),
            bounds("b", 0, 0, (0, 0)),
        ];
        assert_eq!(hot_key(&reads), Some("b"));
        assert_eq!(hot_key(&reads[1..]), Some("a"), "ties go to the first key");
        assert_eq!(hot_key(&[]), None);
    }

    #[test]
    fn latencies_are_clamped_for_the_log_axis() {
        let zero = span(F::Add, OpType::Ok, 0, 0);
        assert_eq!(latency_ms(&zero), MIN_LATENCY_MS);
        assert_eq!(latency_ms(&span(F::Add, OpType::Ok, 0, 2 * MS)), 2.0);
        let axis = latency_axis(&[zero]);
        assert!(axis.start > 0.0 && axis.start < MIN_LATENCY_MS && axis.end > MIN_LATENCY_MS);
        assert!(latency_axis(&[]).start > 0.0);
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let mut late = Op::new(
            Process::Client(1),
            OpType::Invoke,
            F::Add,
            None,
            Value::Null,
        );
        late.time = u64::MAX;
        let mut early = late.clone();
        early.kind = OpType::Ok;
        early.time = 0;
        let reads = [bounds("k", u64::MAX, -5, (-1_000_000, 1_000_000))];
        let dir = tempfile::tempdir().expect("a temporary folder");
        let written = render_all(&charts(&[late, early], &reads), dir.path()).expect("rendered");
        assert_eq!(written.len(), 12, "{written:?}");
    }

    #[test]
    fn fault_windows_are_shaded_in_their_kind_colour() {
        // Ops from 0 to 10 s; a partition from 2 s to 4 s: the pixels of its shade (its colour
        // at 15% over white) cover a band of the chart; without it there are none.
        let spans: Vec<Span> = (0..=10)
            .map(|s| span(F::Add, OpType::Ok, s * 1_000 * MS, MS))
            .collect();
        let window = FaultWindow {
            fault: "partition".to_string(),
            value: Value::Null,
            start_time: 2_000 * MS,
            end_time: Some(4_000 * MS),
            clients: Default::default(),
        };
        let shade = |buf: &[u8]| {
            let c = fault_shading::colour("partition");
            let tint = |v: u8| (255.0 - (255.0 - f64::from(v)) * 0.15).round() as i32;
            let (r, g, b) = (tint(c.0), tint(c.1), tint(c.2));
            buf.chunks(3)
                .filter(|p| {
                    (i32::from(p[0]) - r).abs() <= 2
                        && (i32::from(p[1]) - g).abs() <= 2
                        && (i32::from(p[2]) - b).abs() <= 2
                })
                .count()
        };
        let with = render(|root| draw_latency(root, &spans, std::slice::from_ref(&window)));
        let without = render(|root| draw_latency(root, &spans, &[]));
        assert!(shade(&with) > 20_000, "{} shaded pixels", shade(&with));
        assert_eq!(shade(&without), 0);
    }

    /// Non-white pixels of a rendered chart.
    fn inked(buf: &[u8]) -> usize {
        buf.chunks(3).filter(|p| p != &[255, 255, 255]).count()
    }

    #[test]
    fn every_chart_has_ink_where_its_data_is() {
        // Each chart drawn from data and from nothing: the data adds ink (points, lines,
        // bars, shading) beyond the frame, title and legend both share.
        let mut h = HistoryBuilder::on("q/a");
        for i in 0..40 {
            h.add(1, 1);
            h.added(1, 1, if i % 7 == 0 { OpType::Info } else { OpType::Ok });
            h.read(2);
            // Spread: some under, some within, some over.
            h.read_ok(2, i + 4 * (i % 3) - 4);
            h.last_mut().expect("read").tombstones = Some(i as u64 * 50);
        }
        let mut history = h.ops().to_vec();
        for (i, op) in history.iter_mut().enumerate() {
            op.time = i as u64 * 50 * MS;
        }
        let reads = read_bounds(&history);
        assert!(reads.iter().filter(|r| r.error().is_some()).count() > 20);
        let spans = spans(&history);
        let window = FaultWindow {
            fault: "kill".to_string(),
            value: Value::Null,
            start_time: 500 * MS,
            end_time: Some(1_500 * MS),
            clients: Default::default(),
        };
        let faults = std::slice::from_ref(&window);
        let scanned = tombstones::scanned(&history);
        let thresholds = Thresholds {
            warn: 500,
            fail: 1_500,
            started_empty: false,
        };
        let hot: Vec<&ReadBounds> = reads.iter().collect();
        let pairs: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
            (
                "latency",
                render(|r| Latency(&spans, faults).draw(r)),
                render(|r| Latency(&[], &[]).draw(r)),
            ),
            (
                "quantiles",
                render(|r| Quantiles(&spans, faults).draw(r)),
                render(|r| Quantiles(&[], &[]).draw(r)),
            ),
            (
                "throughput",
                render(|r| ThroughputChart(&spans, faults).draw(r)),
                render(|r| ThroughputChart(&[], &[]).draw(r)),
            ),
            (
                "unknown",
                render(|r| Unknown(&spans, faults).draw(r)),
                render(|r| Unknown(&[], &[]).draw(r)),
            ),
            (
                "counter",
                render(|r| CounterChart("q/a", &hot, faults).draw(r)),
                render(|r| CounterChart("q/a", &[], &[]).draw(r)),
            ),
            (
                "errors",
                render(|r| Errors(&reads).draw(r)),
                render(|r| Errors(&[]).draw(r)),
            ),
            (
                "tombstones",
                render(|r| Tombstones(&scanned, thresholds, faults).draw(r)),
                render(|r| Tombstones(&[], thresholds, &[]).draw(r)),
            ),
        ];
        let trend: Vec<crate::soak::summary::TrendPoint> = (0..6)
            .map(|i| crate::soak::summary::TrendPoint {
                workload: ["a", "b"][i as usize % 2].to_string(),
                overcount_pct: f64::from(i),
                undercount_pct: 1.0,
                resurrections: f64::from(i % 2),
                unknown_pct: 2.0,
            })
            .collect();
        // The trend's axes change with its data, so its lines are counted by colour.
        let (with, without) = (
            render(|r| Trend(&trend).draw(r)),
            render(|r| Trend(&[]).draw(r)),
        );
        assert!(
            pixels(&with, OVER_COLOUR) > pixels(&without, OVER_COLOUR) + 300,
            "trend"
        );
        assert!(pixels(&with, RESURRECTION_COLOUR) > pixels(&without, RESURRECTION_COLOUR) + 100);
        for (name, with, without) in pairs {
            assert!(
                inked(&with) > inked(&without) + 300,
                "{name}: {} vs {}",
                inked(&with),
                inked(&without)
            );
        }
    }
}
