//! Everything a run folder shows besides the history: results.json, the charts, report.html.

use super::page::{self, Report};
use super::plots;
use crate::analysis::{analyse_ops, BadInput, Target, LIN_PAGE};
use anyhow::Context;
use checkers::Results;
use std::path::{Path, PathBuf};

/// The report page in a run folder.
pub const REPORT_PAGE: &str = "report.html";

/// Checks the folder's history (rewriting results.json), draws its charts and writes its
/// report page.
pub fn render(dir: &Path) -> anyhow::Result<Results> {
    let history = dir.join("history.jsonl");
    let target = Target {
        history: history.clone(),
        run_dir: Some(dir.to_path_buf()),
    };
    let (ops, warnings) = checkers::history::read_jsonl(&history).map_err(BadInput::from)?;
    let results = analyse_ops(&target, &ops, warnings, true)?;
    let plots_dir = dir.join("plots");
    let tombstones = &results.checkers.tombstones;
    let charts = plots::Charts {
        history: &ops,
        reads: &results.checkers.counter.read_bounds,
        faults: &results.checkers.stats.faults,
        tombstones: checkers::tombstones::Thresholds {
            warn: tombstones.warn_threshold,
            fail: tombstones.fail_threshold,
            started_empty: false,
        },
    };
    plots::render_all(&charts, &plots_dir).context("rendering the charts")?;
    let run: Option<serde_json::Value> = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let lin_page = dir.join(LIN_PAGE).is_file().then_some(LIN_PAGE);
    let html = page::render(&Report {
        results: &results,
        run: run.as_ref(),
        history: &ops,
        plots: &plots_dir,
        lin_page,
    });
    let path: PathBuf = dir.join(REPORT_PAGE);
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
    Ok(results)
}
