//! Everything a run folder shows of a checked history: the charts, report.html and, when a
//! key is not linearizable, the page that explains why.

use super::linear_page;
use super::page::{self, Report};
use super::plots;
use crate::store::folder::LIN_PAGE;
use crate::store::{RunFolder, RunRecord};
use anyhow::Context;
use checkers::{Op, Results};

/// Draws a checked run into its folder from its history `ops` and `results`.
pub fn render(folder: &RunFolder, ops: &[Op], results: &Results) -> anyhow::Result<()> {
    let lin_page = write_lin_page(folder, ops, results)?;
    let plots_dir = folder.plots();
    let tombstones = &results.checkers.tombstones;
    let record = RunRecord::read(folder).ok();
    let charts = plots::Charts {
        history: ops,
        reads: &results.checkers.counter.read_bounds,
        faults: &results.checkers.stats.faults,
        tombstones: checkers::tombstones::Thresholds {
            warn: tombstones.warn_threshold,
            fail: tombstones.fail_threshold,
            started_empty: false,
        },
        rate: record.as_ref().map(|r| r.workload.rate),
    };
    plots::render_all(&charts, &plots_dir).context("rendering the charts")?;
    let html = page::render(&Report {
        results,
        run: record.as_ref(),
        history: ops,
        plots: &plots_dir,
        lin_page: lin_page.then_some(LIN_PAGE),
    });
    let path = folder.report();
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))
}

/// When a key is not linearizable, writes the page that explains the first such key into
/// the folder; returns whether it did.
pub fn write_lin_page(folder: &RunFolder, ops: &[Op], results: &Results) -> anyhow::Result<bool> {
    let Some(lin) = &results.checkers.linearizable else {
        return Ok(false);
    };
    let Some(failure) = lin.failures.first() else {
        return Ok(false);
    };
    let path = folder.lin_page();
    std::fs::write(&path, linear_page::render(ops, lin, failure))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}
