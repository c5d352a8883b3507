//! The results document: every checker run over one history, combined into one verdict.

use crate::convergence::{ConvergenceChecker, ConvergenceResult};
use crate::counter::{CounterChecker, CounterResult};
use crate::history::HistoryError;
use crate::ideal::Reading;
use crate::linear::{LinOptions, LinResult, ModelKind, Spill};
use crate::op::Op;
use crate::oracle::{self, OracleResult};
use crate::resurrection::ResurrectionResult;
use crate::stats::{StatsChecker, StatsResult};
use crate::tombstones::{Thresholds, TombstoneChecker, TombstonesResult};
use crate::unknown_adds::UnknownAdds;
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};

/// What the caller knows about the run that the history itself does not say.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The workload's name, from run.json.
    pub workload: Option<String>,
    /// The run's seed, from run.json.
    pub seed: Option<u64>,
    /// Keep reads' bounds in the counter result for charts: every read out of bounds and a
    /// thinned sample of the others.
    pub keep_reads: bool,
    /// Also check linearizability against the ideal counter, within these limits.
    pub linearizable: Option<LinOptions>,
    /// The tombstone thresholds the run's nodes used.
    pub tombstones: Thresholds,
    /// The nodes' own final state, to cross-check the counter checker against.
    pub oracle: Option<Truth>,
    /// How reads are compared with the ideal counter (`absent_is_zero`), by every checker.
    pub reading: Reading,
    /// Where the linearizability checker spills the history while it streams by (the
    /// system's temporary folder when `None`).
    pub scratch: Option<PathBuf>,
    /// Checkers that do not apply to the system tested, by results.json's key, with why.
    pub not_applicable: BTreeMap<String, String>,
}

/// What the nodes held when the run ended: counter → node → value.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    /// Nodes whose dumps were read.
    pub nodes: u64,
    /// Each counter's value on each node that holds it.
    pub values: BTreeMap<String, BTreeMap<String, Option<i64>>>,
}

/// Every checker's result, keyed as in results.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkers {
    /// Under- and overcount bounds for every read.
    pub counter: CounterResult,
    /// Reads that brought back counts from before a delete.
    #[serde(default)]
    pub resurrection: ResurrectionResult,
    /// Outcome counts.
    pub stats: StatsResult,
    /// Tombstones reads went over.
    #[serde(default)]
    pub tombstones: TombstonesResult,
    /// Linearizability against the ideal counter, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linearizable: Option<LinResult>,
    /// Whether the final reads agree, when the history has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<ConvergenceResult>,
    /// The nodes' true final values against the counter checker, when they were dumped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<OracleResult>,
}

impl Checkers {
    /// Any invalid checker wins, then any unknown.
    pub fn verdict(&self) -> Validity {
        [
            Some(self.counter.valid),
            Some(self.resurrection.valid),
            Some(self.stats.valid),
            Some(self.tombstones.valid),
            self.linearizable.as_ref().map(|c| c.valid),
            self.convergence.as_ref().map(|c| c.valid),
            self.oracle.as_ref().map(|c| c.valid),
        ]
        .into_iter()
        .flatten()
        .fold(Validity::Valid, Validity::combine)
    }
}

/// The document written to results.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The combined verdict: any invalid wins, then unknown.
    pub valid: Validity,
    /// The workload's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// The run's seed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Events in the history.
    pub ops: u64,
    /// Every checker read `null` and `0` as the same value (the target cannot tell them
    /// apart).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent_is_zero: bool,
    /// Each checker's result.
    pub checkers: Checkers,
    /// What the reader tolerated, such as a truncated last line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Checkers that do not apply to the system tested (key as in `checkers`), with why;
    /// the summary and the report say so instead of their figures.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_applicable: BTreeMap<String, String>,
}

/// Ops handed to the counter checker's thread at a time.
const BATCH: usize = 1024;

/// Runs every checker over a history in one pass: the counter checker on a thread of its
/// own, the others beside it on the ops in the same order.
pub fn check(
    ops: impl IntoIterator<Item = Result<Op, HistoryError>>,
    options: &CheckOptions,
) -> Result<Results, HistoryError> {
    let mut ops = ops.into_iter();
    let (mut failed, mut ended) = (None, false);
    let batches = std::iter::from_fn(|| {
        if let Some(e) = failed.take() {
            return Some(Err(e));
        }
        let mut batch = Vec::with_capacity(BATCH);
        while !ended && batch.len() < BATCH {
            match ops.next() {
                Some(Ok(op)) => batch.push(op),
                // The history ends at its first error.
                Some(Err(e)) => (failed, ended) = (Some(e), true),
                None => ended = true,
            }
        }
        match batch.is_empty() {
            true => failed.take().map(Err),
            false => Some(Ok(batch)),
        }
    });
    check_batches(batches, options)
}

/// [`check`] over a history that comes in batches of ops (an error ends it), each handed
/// whole to the counter checker's thread.
pub fn check_batches(
    history: impl IntoIterator<Item = Result<Vec<Op>, HistoryError>>,
    options: &CheckOptions,
) -> Result<Results, HistoryError> {
    std::thread::scope(|scope| {
        let (batches, received) = sync_channel::<Vec<Op>>(8);
        let counter = scope.spawn(move || {
            let counter = if options.keep_reads {
                CounterChecker::keeping_reads()
            } else {
                CounterChecker::new()
            };
            let mut counter = counter.reading(options.reading);
            for batch in received {
                batch.iter().for_each(|op| counter.observe(op));
            }
            counter.finish()
        });
        let others = check_beside(history, options, batches);
        // A counter checker that panicked must not pass for one that found nothing.
        let counter = counter
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        others.map(|others| others.results(counter, options))
    })
}

/// What every checker but the counter checker found, with the ops counted.
struct Others {
    count: u64,
    stats: StatsChecker,
    convergence: ConvergenceChecker,
    tombstones: TombstoneChecker,
    linearizable: Option<LinResult>,
    unknown_adds: Option<UnknownAdds>,
}

/// Every checker but the counter checker over the batches of ops, which go on to
/// `to_counter`; the linearizability search runs once the history has ended.
fn check_beside(
    batches: impl IntoIterator<Item = Result<Vec<Op>, HistoryError>>,
    options: &CheckOptions,
    to_counter: SyncSender<Vec<Op>>,
) -> Result<Others, HistoryError> {
    let mut stats = StatsChecker::new();
    let mut convergence = ConvergenceChecker::new();
    let mut tombstones = TombstoneChecker::new(options.tombstones);
    let mut spill = options
        .linearizable
        .as_ref()
        .map(|_| Spill::new(options.scratch.as_deref()));
    let mut unknown_adds = options.oracle.as_ref().map(|_| UnknownAdds::new());
    let mut count = 0;
    for batch in batches {
        let batch = batch?;
        for op in &batch {
            if let Some(tally) = &mut unknown_adds {
                tally.observe(op);
            }
            stats.observe(op);
            tombstones.observe(op);
            convergence.observe(op);
            if let Some(spill) = &mut spill {
                spill.observe(op);
            }
        }
        count += batch.len() as u64;
        // The counter checker only hangs up by panicking, which `check` passes on.
        let _ = to_counter.send(batch);
    }
    drop(to_counter);
    // The search runs while the counter checker catches up.
    let linearizable = options
        .linearizable
        .as_ref()
        .zip(spill)
        .map(|(lin, spill)| {
            let lin = LinOptions {
                reading: options.reading,
                ..lin.clone()
            };
            spill.finish(&lin).unwrap_or_else(|e| LinResult {
                valid: Validity::Unknown,
                model: ModelKind::Counter.as_str().to_string(),
                reason: Some(e.to_string()),
                ..LinResult::default()
            })
        });
    Ok(Others {
        count,
        stats,
        convergence,
        tombstones,
        linearizable,
        unknown_adds,
    })
}

impl Others {
    /// The results document, with the counter checker's finished result.
    fn results(self, mut counter: CounterResult, options: &CheckOptions) -> Results {
        let resurrection = std::mem::take(&mut counter.resurrection);
        let final_read = self.convergence.keys();
        let dumps = options.oracle.as_ref().map(|truth| &truth.values);
        let convergence = self
            .convergence
            .finish(&counter.final_values, options.reading, dumps);
        let oracle = options.oracle.as_ref().map(|truth| {
            let reading = options.reading;
            let mut result =
                oracle::cross_check(&truth.values, truth.nodes, &counter, &final_read, reading);
            result.unknown_adds = self
                .unknown_adds
                .unwrap_or_default()
                .finish(&truth.values, options.reading);
            result
        });
        let checkers = Checkers {
            counter,
            resurrection,
            stats: self.stats.finish(),
            tombstones: self.tombstones.finish(),
            linearizable: self.linearizable,
            convergence,
            oracle,
        };
        Results {
            valid: checkers.verdict(),
            workload: options.workload.clone(),
            seed: options.seed,
            ops: self.count,
            absent_is_zero: options.reading.absent_is_zero,
            checkers,
            warnings: Vec::new(),
            not_applicable: options.not_applicable.clone(),
        }
    }
}
