//! The check: read a history once, run every checker over it, and write results.json in a
//! run folder. What the checkers need beyond the history comes from the run folder (run.json
//! and the nodes' oracle dumps).

use crate::error::BadInput;
use crate::store::folder::{is_run, RunFolder, HISTORY};
use crate::store::oracle::read_truth;
use crate::store::{write_json, RunRecord};
use crate::workload::system::System;
use checkers::history::{
    detect_file, read_history, Format, HistoryError, JsonlReader, ReadOptions,
};
use checkers::ideal::Reading;
use checkers::linear::{LinOptions, LinResult, Spill};
use checkers::results::{check, check_batches, CheckOptions, Results};
use checkers::tombstones::Thresholds;
use checkers::Op;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Duration;

/// What `checker check` was pointed at.
pub struct Target {
    /// The history file.
    pub history: PathBuf,
    /// The run folder, when a folder was given.
    pub folder: Option<RunFolder>,
    /// Check `null` and `0` as the same, whatever run.json says.
    pub absent_is_zero: bool,
    /// What the reader accepts.
    pub read: ReadOptions,
}

impl Target {
    /// A run folder's history, checked as its run.json says.
    pub fn folder(folder: RunFolder) -> Self {
        Target {
            history: folder.history(),
            folder: Some(folder),
            absent_is_zero: false,
            read: ReadOptions::default(),
        }
    }

    /// A bare history file.
    pub fn file(path: &Path) -> Self {
        Target {
            history: path.to_path_buf(),
            folder: None,
            absent_is_zero: false,
            read: ReadOptions::default(),
        }
    }

    /// A run folder (its `history.jsonl`) or a bare history file.
    pub fn resolve(path: &Path) -> Result<Self, BadInput> {
        if path.is_dir() {
            if !is_run(path) {
                return Err(BadInput::Usage(format!(
                    "{} is a folder without a {HISTORY}: not a run folder",
                    path.display()
                )));
            }
            Ok(Target::folder(RunFolder::open(path)))
        } else if path.is_file() {
            Ok(Target::file(path))
        } else {
            Err(BadInput::Usage(format!(
                "{}: no such file or folder",
                path.display()
            )))
        }
    }
}

/// The linearizability search's limits in runs and checks: past them the answer is unknown.
/// Every partition is searched, so that reports and budgets count every illegal key.
pub fn run_lin_options() -> LinOptions {
    LinOptions {
        time_limit: Some(Duration::from_secs(60)),
        all_partitions: true,
        ..LinOptions::default()
    }
}

/// Every checker over the target's history, streamed when it is our JSONL (nothing kept);
/// in a run folder, results.json is rewritten.
pub fn check_streamed(target: &Target) -> anyhow::Result<Results> {
    check_observed(target, false, |_| {})
}

/// Every checker over the target's history in one pass, streamed when it is our JSONL,
/// each op handed to `observe` as it is read, and the reads' bounds kept for charts when
/// `keep_reads` (every read out of bounds, a thinned sample of the others); in a run
/// folder, results.json is rewritten.
pub fn check_observed(
    target: &Target,
    keep_reads: bool,
    mut observe: impl FnMut(&Op) + Send,
) -> anyhow::Result<Results> {
    let format = detect_file(&target.history).map_err(BadInput::from)?;
    if !matches!(format, None | Some(Format::Jsonl)) {
        let (ops, warnings) = read(target)?;
        ops.iter().for_each(&mut observe);
        return check_ops(target, &ops, warnings, keep_reads);
    }
    let options = check_options(target, keep_reads)?;
    let reader = JsonlReader::open(&target.history)
        .map_err(BadInput::from)?
        .with_options(target.read);
    let (results, warnings) = check_beside_parsing(reader, &options, observe);
    let mut results = results.map_err(BadInput::from)?;
    results.warnings = warnings;
    write_results(target, &results)?;
    Ok(results)
}

/// Ops parsed and sent to the checkers in batches of this many.
const BATCH: usize = 1024;

/// Every checker over the reader's ops, parsed on a thread of their own (which hands each
/// op to `observe`) so that parsing and checking run side by side; with what the reader
/// tolerated.
fn check_beside_parsing<R: std::io::BufRead + Send>(
    mut reader: JsonlReader<R>,
    options: &CheckOptions,
    mut observe: impl FnMut(&Op) + Send,
) -> (Result<Results, HistoryError>, Vec<String>) {
    std::thread::scope(|scope| {
        let (batches, received) = sync_channel::<Result<Vec<Op>, HistoryError>>(8);
        let parser = scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            for op in reader.by_ref() {
                let op = match op {
                    Ok(op) => op,
                    Err(e) => {
                        // The history ends at its first error, after the ops before it.
                        let _ = batches.send(Ok(std::mem::take(&mut batch)));
                        let _ = batches.send(Err(e));
                        return reader.warnings().to_vec();
                    }
                };
                observe(&op);
                batch.push(op);
                // The checkers hang up only once done.
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if batches.send(Ok(full)).is_err() {
                        return reader.warnings().to_vec();
                    }
                }
            }
            let _ = batches.send(Ok(batch));
            reader.warnings().to_vec()
        });
        let results = check_batches(received, options);
        // A parser that panicked must not pass for a history that ended.
        let warnings = parser
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (results, warnings)
    })
}

/// Whether a history file is our JSONL, by `format` or, when `None`, by its content.
pub fn is_jsonl(path: &Path, format: Option<Format>) -> anyhow::Result<bool> {
    let format = match format {
        Some(f) => Some(f),
        None => detect_file(path).map_err(BadInput::from)?,
    };
    Ok(format == Some(Format::Jsonl))
}

/// Linearizability against the counter model of a JSONL history, streamed through the
/// spill (nothing kept), with what the reader tolerated; the search's options are taken
/// once the history has been read.
pub fn lin_streamed(
    path: &Path,
    read: ReadOptions,
    options: impl FnOnce() -> LinOptions,
) -> anyhow::Result<(LinResult, Vec<String>)> {
    let mut reader = JsonlReader::open(path)
        .map_err(BadInput::from)?
        .with_options(read);
    let mut spill = Spill::new(path.parent());
    for op in reader.by_ref() {
        spill.observe(&op.map_err(BadInput::from)?);
    }
    let result = spill
        .finish(&options())
        .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?;
    Ok((result, reader.warnings().to_vec()))
}

/// The target's history op by op: streamed when it is our JSONL, else read whole first.
pub fn ops(target: &Target) -> anyhow::Result<Box<dyn Iterator<Item = Result<Op, HistoryError>>>> {
    let format = detect_file(&target.history).map_err(BadInput::from)?;
    if !matches!(format, None | Some(Format::Jsonl)) {
        let (ops, _) = read(target)?;
        return Ok(Box::new(ops.into_iter().map(Ok)));
    }
    let reader = JsonlReader::open(&target.history)
        .map_err(BadInput::from)?
        .with_options(target.read);
    Ok(Box::new(reader))
}

/// The target's history, whole, with what the reader tolerated.
pub fn read(target: &Target) -> anyhow::Result<(Vec<Op>, Vec<String>)> {
    Ok(read_history(&target.history, None, target.read).map_err(BadInput::from)?)
}

/// Every checker over a history already read (with the reader's warnings), keeping reads'
/// bounds for the charts when `keep_reads`; in a run folder, results.json is rewritten.
pub fn check_ops(
    target: &Target,
    ops: &[Op],
    warnings: Vec<String>,
    keep_reads: bool,
) -> anyhow::Result<Results> {
    let options = check_options(target, keep_reads)?;
    let mut results = check(ops.iter().cloned().map(Ok), &options).map_err(BadInput::from)?;
    results.warnings = warnings;
    write_results(target, &results)?;
    Ok(results)
}

/// What the checkers need to know beyond the history: from run.json and the nodes' dumps
/// in a run folder.
fn check_options(target: &Target, keep_reads: bool) -> anyhow::Result<CheckOptions> {
    // A missing run.json says nothing: the history is checked on its own. One that is
    // there but cannot be read is reported, not ignored.
    let record = match &target.folder {
        Some(folder) if folder.record().exists() => Some(RunRecord::read(folder).map_err(|e| {
            BadInput::Usage(format!(
                "{e:#}; fix or remove it to check the history without the run's settings"
            ))
        })?),
        _ => None,
    };
    let defaults = Thresholds::default();
    let tombstones = match &record {
        Some(r) => Thresholds {
            warn: r.workload.cluster.tombstone_warn_threshold,
            fail: r.workload.cluster.tombstone_failure_threshold,
            started_empty: r.cluster_started_empty,
        },
        None => defaults,
    };
    let oracle = match &target.folder {
        Some(folder) => read_truth(folder).map_err(|e| BadInput::Usage(format!("{e:#}")))?,
        None => None,
    };
    let absent_is_zero =
        target.absent_is_zero || record.as_ref().is_some_and(|r| r.workload.absent_is_zero);
    let system = record
        .as_ref()
        .map_or(System::Bundled, |r| r.workload.system);
    Ok(CheckOptions {
        reading: Reading { absent_is_zero },
        workload: record.as_ref().map(|r| r.workload.name.clone()),
        seed: record.as_ref().map(|r| r.seed),
        keep_reads,
        linearizable: Some(run_lin_options()),
        tombstones,
        oracle,
        // The linearizability checker's spill goes beside the history it checks.
        scratch: target.history.parent().map(Path::to_path_buf),
        not_applicable: not_applicable(system),
    })
}

/// The checkers that mean nothing for `system`, with why: tombstone thresholds and the
/// nodes' true state are the bundled nodes' own.
fn not_applicable(system: System) -> BTreeMap<String, String> {
    if system == System::Bundled {
        return BTreeMap::new();
    }
    BTreeMap::from([
        (
            "tombstones".to_string(),
            format!("not applicable to {system}: it has no tombstone thresholds"),
        ),
        (
            "oracle".to_string(),
            format!("not applicable to {system}: the run has no dump of its true state"),
        ),
    ])
}

/// In a run folder, results.json.
fn write_results(target: &Target, results: &Results) -> anyhow::Result<()> {
    match &target.folder {
        Some(folder) => write_json(&folder.results(), results),
        None => Ok(()),
    }
}
