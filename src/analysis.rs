//! Checking a history offline: read it, run every checker, and write results.json.

use crate::oracle_dumps::read_truth;
use crate::report::linear_page;
use crate::workload::WorkloadError;
use checkers::history::{detect_file, read_history, Format, HistoryError, JsonlReader};
use checkers::linear::LinOptions;
use checkers::results::{check, CheckOptions, Results};
use checkers::tombstones::Thresholds;
use checkers::Op;
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bad arguments or unreadable input: the run or check exits 254.
#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    /// A workload that does not exist or does not parse.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A history that cannot be read.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Anything else the user gave that cannot be used.
    #[error("{0}")]
    Usage(String),
}

/// What `checker check` was pointed at.
pub struct Target {
    /// The history file.
    pub history: PathBuf,
    /// The run folder, when a folder was given.
    pub run_dir: Option<PathBuf>,
}

impl Target {
    /// A run folder (its `history.jsonl`) or a bare history file.
    pub fn resolve(path: &Path) -> Result<Self, BadInput> {
        if path.is_dir() {
            let history = path.join("history.jsonl");
            if !history.is_file() {
                return Err(BadInput::Usage(format!(
                    "{} is a folder without a history.jsonl: not a run folder",
                    path.display()
                )));
            }
            Ok(Target {
                history,
                run_dir: Some(path.to_path_buf()),
            })
        } else if path.is_file() {
            Ok(Target {
                history: path.to_path_buf(),
                run_dir: None,
            })
        } else {
            Err(BadInput::Usage(format!(
                "{}: no such file or folder",
                path.display()
            )))
        }
    }
}

/// The parts of run.json the checkers need.
#[derive(Debug, Default, Deserialize)]
struct RunFacts {
    #[serde(default)]
    workload: Option<WorkloadFacts>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    cluster_started_empty: bool,
}

#[derive(Debug, Deserialize)]
struct WorkloadFacts {
    name: String,
    #[serde(default)]
    cluster: Option<ClusterFacts>,
}

#[derive(Debug, Deserialize)]
struct ClusterFacts {
    tombstone_warn_threshold: u64,
    tombstone_failure_threshold: u64,
}

/// Reads what run.json says about the run; a missing or unreadable run.json says nothing.
fn run_facts(run_dir: &Path) -> RunFacts {
    std::fs::read_to_string(run_dir.join("run.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The linearizability search's limits in runs and checks: past them the answer is unknown.
pub fn run_lin_options() -> LinOptions {
    LinOptions {
        time_limit: Some(Duration::from_secs(60)),
        memory_limit: 2 << 30,
        ..LinOptions::default()
    }
}

/// The file, in a run folder, that explains why the history is not linearizable.
pub const LIN_PAGE: &str = "linearizability.html";

/// Runs every checker over the target's history, streamed when it is our JSONL; in a run
/// folder, rewrites results.json and, when the history is not linearizable, the page that
/// explains why.
pub fn analyse(target: &Target, keep_reads: bool) -> anyhow::Result<Results> {
    let options = check_options(target, keep_reads)?;
    // Our own JSONL is streamed; other tools' formats (Jepsen EDN, logs) are read whole.
    let format = detect_file(&target.history).map_err(BadInput::from)?;
    if matches!(format, None | Some(Format::Jsonl)) {
        let mut reader = JsonlReader::open(&target.history).map_err(BadInput::from)?;
        let mut results = check(reader.by_ref(), &options).map_err(BadInput::from)?;
        results.warnings = reader.warnings().to_vec();
        write_outputs(target, &results, || {
            read_history(&target.history, format).map(|(ops, _)| Cow::Owned(ops))
        })?;
        Ok(results)
    } else {
        let (ops, warnings) = read_history(&target.history, format).map_err(BadInput::from)?;
        analyse_ops(target, &ops, warnings, keep_reads)
    }
}

/// The same as [`analyse`], on a history already read (with the reader's warnings).
pub fn analyse_ops(
    target: &Target,
    ops: &[Op],
    warnings: Vec<String>,
    keep_reads: bool,
) -> anyhow::Result<Results> {
    let options = check_options(target, keep_reads)?;
    let mut results = check(ops.iter().cloned().map(Ok), &options).map_err(BadInput::from)?;
    results.warnings = warnings;
    write_outputs(target, &results, || Ok(Cow::Borrowed(ops)))?;
    Ok(results)
}

/// What the checkers need to know beyond the history: from run.json and the nodes' dumps
/// in a run folder.
fn check_options(target: &Target, keep_reads: bool) -> anyhow::Result<CheckOptions> {
    let facts = target.run_dir.as_deref().map(run_facts).unwrap_or_default();
    let cluster = facts.workload.as_ref().and_then(|w| w.cluster.as_ref());
    let defaults = Thresholds::default();
    let tombstones = Thresholds {
        warn: cluster.map_or(defaults.warn, |c| c.tombstone_warn_threshold),
        fail: cluster.map_or(defaults.fail, |c| c.tombstone_failure_threshold),
        started_empty: facts.cluster_started_empty,
    };
    Ok(CheckOptions {
        workload: facts.workload.map(|w| w.name),
        seed: facts.seed,
        keep_reads,
        linearizable: Some(run_lin_options()),
        tombstones,
        oracle: match &target.run_dir {
            Some(dir) => read_truth(dir).map_err(|e| BadInput::Usage(format!("{e:#}")))?,
            None => None,
        },
    })
}

/// In a run folder: results.json and, when a key is not linearizable, the page explaining
/// it, drawn from the history `ops` gives (asked for only then).
fn write_outputs<'a>(
    target: &Target,
    results: &Results,
    ops: impl FnOnce() -> Result<Cow<'a, [Op]>, HistoryError>,
) -> anyhow::Result<()> {
    let Some(dir) = &target.run_dir else {
        return Ok(());
    };
    write_json(&dir.join("results.json"), results)?;
    let failure = results
        .checkers
        .linearizable
        .as_ref()
        .and_then(|l| l.failures.first().map(|f| (l, f)));
    if let Some((lin, failure)) = failure {
        let ops = ops().map_err(BadInput::from)?;
        let page = dir.join(LIN_PAGE);
        std::fs::write(&page, linear_page::render(&ops, lin, failure))
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", page.display()))?;
    }
    Ok(())
}

/// Writes a JSON document, pretty-printed, replacing the file atomically.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    use anyhow::Context;
    let text = serde_json::to_string_pretty(value).context("serializing")?;
    let temp = path.with_extension("json.tmp");
    std::fs::write(&temp, text + "\n").with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("writing {}", path.display()))
}
