//! Charts of a run, each as a PNG for viewing and an SVG for the report: operation latency
//! and its quantiles, throughput, unknown outcomes, each counter's reads against their
//! bounds, how far reads missed, tombstones scanned, and the soak's trend.

mod counter;
mod errors;
mod frame;
mod latency;
mod quantiles;
mod shading;
mod sketch;
mod spans;
mod tally;
mod throughput;
mod tombstones;
pub mod trend;
mod unknown;

pub use frame::PlotError;
pub use tally::Tally;

use checkers::counter::{KeyFigures, ReadBounds};
use checkers::stats::FaultWindow;
use checkers::tombstones::Thresholds;
use frame::{failed, register_font, write_png, Drawn, SIZE};
use plotters::coord::Shift;
use plotters::prelude::*;
use shading::Nemesis;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Draws the soak's trend chart into `dir` as `trend.png` and `trend.svg`.
pub fn render_trend(points: &[trend::TrendPoint], dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_font()?;
    Ok(write_chart(dir, "trend", &Trend(points))?.to_vec())
}

/// The soak's trend chart.
struct Trend<'a>(&'a [trend::TrendPoint]);

impl Drawing for Trend<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        trend::draw(root, self.0)
    }
}

/// What the charts are drawn from.
pub struct Charts<'a> {
    /// What the time charts draw, tallied from the history.
    pub tally: &'a Tally,
    /// The reads kept for charts: every read out of bounds, a thinned sample of the others.
    pub reads: &'a [ReadBounds],
    /// Each counter's figures, with how many of its reads were checked.
    pub keys: &'a BTreeMap<String, KeyFigures>,
    /// The nemesis's fault windows, shaded on every time chart.
    pub faults: &'a [FaultWindow],
    /// The thresholds drawn on the tombstones chart.
    pub tombstones: Thresholds,
    /// The rate the workload asked for, ops/s, drawn on the throughput chart beside the
    /// achieved one.
    pub rate: Option<f64>,
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
    let reads = input.reads;
    let tally = input.tally;
    let marks = shading::marks(&tally.nemesis);
    let faults = &Nemesis {
        windows: input.faults,
        marks: &marks,
    };
    let mut written = Vec::new();
    written.extend(write_chart(dir, "latency", &Latency(tally, faults))?);
    written.extend(write_chart(
        dir,
        "latency-quantiles",
        &Quantiles(tally, faults),
    )?);
    written.extend(write_chart(
        dir,
        "throughput",
        &ThroughputChart(
            tally,
            faults,
            throughput::Rates {
                configured: input.rate,
                achieved: tally.invokes.achieved(),
            },
        ),
    )?);
    written.extend(write_chart(
        dir,
        "unknown-outcomes",
        &Unknown(tally, faults),
    )?);
    let hot = counter::hot_key(input.keys);
    let worst = worst_keys(reads).into_iter().filter(|k| Some(*k) != hot);
    let keys: Vec<&str> = hot.into_iter().chain(worst.take(WORST_COUNTERS)).collect();
    for (i, key) in keys.iter().enumerate() {
        let of_key: Vec<&ReadBounds> = reads.iter().filter(|read| read.key == *key).collect();
        let all = input
            .keys
            .get(*key)
            .map_or(of_key.len() as u64, |k| k.reads);
        let name = if i == 0 {
            "counter".to_string()
        } else {
            format!("counter-{}", i + 1)
        };
        written.extend(write_chart(
            dir,
            &name,
            &CounterChart(key, (&of_key, all), faults),
        )?);
    }
    if !reads.is_empty() {
        let all = input.keys.values().map(|k| k.reads).sum();
        written.extend(write_chart(dir, "errors", &Errors(reads, all))?);
    }
    if !tally.scanned.is_empty() {
        let chart = Tombstones(&tally.scanned, input.tombstones, faults);
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
struct Quantiles<'a>(&'a Tally, &'a Nemesis<'a>);

impl Drawing for Quantiles<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        quantiles::draw(root, self.0, self.1)
    }
}

/// The unknown-outcomes chart.
struct Unknown<'a>(&'a Tally, &'a Nemesis<'a>);

impl Drawing for Unknown<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        unknown::draw(root, self.0, self.1)
    }
}

/// The error histogram.
struct Errors<'a>(&'a [ReadBounds], u64);

impl Drawing for Errors<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        errors::draw(root, self.0, self.1)
    }
}

/// The tombstones chart.
struct Tombstones<'a>(&'a tombstones::Scanned, Thresholds, &'a Nemesis<'a>);

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
struct Latency<'a>(&'a Tally, &'a Nemesis<'a>);

impl Drawing for Latency<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        latency::draw(root, self.0, self.1)
    }
}

/// The throughput chart of these spans.
struct ThroughputChart<'a>(&'a Tally, &'a Nemesis<'a>, throughput::Rates);

impl Drawing for ThroughputChart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        throughput::draw(root, self.0, self.1, self.2)
    }
}

/// The counter chart of one key's reads.
struct CounterChart<'a>(&'a str, (&'a [&'a ReadBounds], u64), &'a Nemesis<'a>);

impl Drawing for CounterChart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        counter::draw(root, self.0, self.1, self.2)
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

#[cfg(test)]
mod tests;
