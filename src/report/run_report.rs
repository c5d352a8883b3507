//! Everything a run folder shows of a checked history: the charts, report.html and, when a
//! key is not linearizable, the page that explains why.

use super::excerpt::{Excerpt, Wanted};
use super::linear_page;
use super::page::{self, Report};
use super::plots::{self, Tally};
use crate::store::folder::LIN_PAGE;
use crate::store::{RunFolder, RunRecord};
use anyhow::Context;
use checkers::Results;
use std::path::Path;

/// What the report of a checked history is drawn from: its results and its ops tallied.
pub struct Checked<'a> {
    /// The checkers' results.
    pub results: &'a Results,
    /// The history, tallied for the charts.
    pub tally: &'a Tally,
}

/// The ops of the history the report of `checked` shows beside its charts: around the
/// page's findings and the failing partition's window. `None`: it shows none.
pub fn wanted<'a>(folder: &RunFolder, checked: &Checked<'a>) -> Option<Wanted<'a>> {
    let record = RunRecord::read(folder).ok();
    let empty = Excerpt::default();
    let lin_page = failure(checked.results).is_some().then_some(LIN_PAGE);
    let plots = folder.plots();
    let focus = page::focus(&report(&plots, checked, record.as_ref(), &empty, lin_page));
    let failing = failure(checked.results);
    (!focus.is_empty() || failing.is_some()).then_some(Wanted { focus, failing })
}

/// Draws a checked run into its folder: the charts from its tally, the pages with the ops
/// `excerpt` holds (those [`wanted`] asked for).
pub fn render(folder: &RunFolder, checked: &Checked, excerpt: &Excerpt) -> anyhow::Result<()> {
    let results = checked.results;
    let lin_page = write_lin_page(folder, excerpt, results)?;
    let plots_dir = folder.plots();
    let tombstones = &results.checkers.tombstones;
    let record = RunRecord::read(folder).ok();
    let counter = &results.checkers.counter;
    let charts = plots::Charts {
        tally: checked.tally,
        reads: &counter.read_bounds,
        keys: &counter.keys,
        faults: &results.checkers.stats.faults,
        tombstones: checkers::tombstones::Thresholds {
            warn: tombstones.warn_threshold,
            fail: tombstones.fail_threshold,
            started_empty: false,
        },
        rate: record.as_ref().map(|r| r.workload.rate),
    };
    plots::render_all(&charts, &plots_dir).context("rendering the charts")?;
    let html = page::render(&report(
        &plots_dir,
        checked,
        record.as_ref(),
        excerpt,
        lin_page.then_some(LIN_PAGE),
    ));
    let path = folder.report();
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))
}

/// The page's input.
fn report<'a>(
    plots: &'a Path,
    checked: &'a Checked,
    run: Option<&'a RunRecord>,
    excerpt: &'a Excerpt,
    lin_page: Option<&'a str>,
) -> Report<'a> {
    Report {
        results: checked.results,
        run,
        excerpt,
        achieved: checked.tally.invokes.achieved(),
        plots,
        lin_page,
    }
}

/// The failing partition the linearizability page explains: the first.
fn failure(results: &Results) -> Option<&checkers::linear::PartitionFailure> {
    results.checkers.linearizable.as_ref()?.failures.first()
}

/// When a key is not linearizable, writes the page that explains the first such key into
/// the folder from `history` (whole, or an excerpt that holds its window); returns whether
/// it did.
pub fn write_lin_page(
    folder: &RunFolder,
    history: &Excerpt,
    results: &Results,
) -> anyhow::Result<bool> {
    let (Some(lin), Some(failure)) = (&results.checkers.linearizable, failure(results)) else {
        return Ok(false);
    };
    let path = folder.lin_page();
    let page = linear_page::render(&history.ops, history.last, lin, failure);
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}
