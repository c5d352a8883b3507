//! The results document: every checker run over one history, combined into one verdict.

use crate::counter::{CounterChecker, CounterResult};
use crate::history::HistoryError;
use crate::linear::{self, LinOptions, LinResult, ModelKind};
use crate::op::Op;
use crate::stats::{StatsChecker, StatsResult};
use crate::tombstones::{Thresholds, TombstoneChecker, TombstonesResult};
use crate::validity::Validity;
use serde::{Deserialize, Serialize};

/// What the caller knows about the run that the history itself does not say.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The workload's name, from run.json.
    pub workload: Option<String>,
    /// The run's seed, from run.json.
    pub seed: Option<u64>,
    /// Keep every read's bounds in the counter result (for charts).
    pub keep_reads: bool,
    /// Also check linearizability against the ideal counter, within these limits.
    pub linearizable: Option<LinOptions>,
    /// The tombstone thresholds the run's nodes used.
    pub tombstones: Thresholds,
}

/// Every checker's result, keyed as in results.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkers {
    /// Under- and overcount bounds for every read.
    pub counter: CounterResult,
    /// Outcome counts.
    pub stats: StatsResult,
    /// Tombstones reads went over.
    #[serde(default)]
    pub tombstones: TombstonesResult,
    /// Linearizability against the ideal counter, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linearizable: Option<LinResult>,
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
    /// Each checker's result.
    pub checkers: Checkers,
    /// What the reader tolerated, such as a truncated last line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Runs every checker over a history in one pass.
pub fn check(
    ops: impl IntoIterator<Item = Result<Op, HistoryError>>,
    options: &CheckOptions,
) -> Result<Results, HistoryError> {
    let mut counter = if options.keep_reads {
        CounterChecker::keeping_reads()
    } else {
        CounterChecker::new()
    };
    let mut stats = StatsChecker::new();
    let mut tombstones = TombstoneChecker::new(options.tombstones);
    let mut kept = Vec::new();
    let mut count = 0;
    for op in ops {
        let op = op?;
        counter.observe(&op);
        stats.observe(&op);
        tombstones.observe(&op);
        if options.linearizable.is_some() {
            kept.push(op);
        }
        count += 1;
    }
    let linearizable = options.linearizable.as_ref().map(|lin| {
        linear::check(ModelKind::Counter, &kept, lin).unwrap_or_else(|e| LinResult {
            valid: Validity::Unknown,
            model: ModelKind::Counter.as_str().to_string(),
            reason: Some(e.to_string()),
            ..LinResult::default()
        })
    });
    let checkers = Checkers {
        counter: counter.finish(),
        stats: stats.finish(),
        tombstones: tombstones.finish(),
        linearizable,
    };
    let lin_valid = checkers
        .linearizable
        .as_ref()
        .map_or(Validity::Valid, |l| l.valid);
    Ok(Results {
        valid: checkers
            .counter
            .valid
            .combine(checkers.stats.valid)
            .combine(lin_valid),
        workload: options.workload.clone(),
        seed: options.seed,
        ops: count,
        checkers,
        warnings: Vec::new(),
    })
}
