//! The stats checker: how many ops of each kind took effect, failed, or left their outcome unknown.

use crate::op::{Op, OpType, Process};
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// How the ops of one `f` ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    /// Completed ok.
    pub ok: u64,
    /// Completed fail.
    pub fail: u64,
    /// Completed info (a timeout).
    pub info: u64,
    /// Invoked and never completed.
    pub pending: u64,
}

/// The stats checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsResult {
    /// Invalid when some kind of client op never once succeeded (as Jepsen's stats checker).
    pub valid: Validity,
    /// Client ops invoked.
    pub invocations: u64,
    /// Client ops whose outcome is unknown: info, or never completed.
    pub unknown_outcomes: u64,
    /// Client ops that retry an earlier one.
    pub retries: u64,
    /// Nemesis (and other non-client) events.
    pub nemesis_events: u64,
    /// Outcomes per `f`.
    pub by_f: BTreeMap<String, Outcomes>,
}

/// Streams a history and counts outcomes.
#[derive(Default)]
pub struct StatsChecker {
    open: HashMap<Process, String>,
    result: StatsResult,
}

impl StatsChecker {
    /// A checker with nothing counted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if !op.process.is_client() {
            self.result.nemesis_events += 1;
            return;
        }
        let f = op.f.as_str().to_string();
        if op.kind == OpType::Invoke {
            self.result.invocations += 1;
            self.result.retries += u64::from(op.retry_of.is_some());
            self.result.by_f.entry(f.clone()).or_default();
            self.open.insert(op.process.clone(), f);
            return;
        }
        let Some(f) = self.open.remove(&op.process) else {
            return;
        };
        let outcomes = self.result.by_f.entry(f).or_default();
        match op.kind {
            OpType::Ok => outcomes.ok += 1,
            OpType::Fail => outcomes.fail += 1,
            OpType::Info => outcomes.info += 1,
            OpType::Invoke => unreachable!("handled above"),
        }
    }

    /// Ends the history.
    pub fn finish(mut self) -> StatsResult {
        for (_, f) in self.open.drain() {
            self.result.by_f.entry(f).or_default().pending += 1;
        }
        let result = &mut self.result;
        result.unknown_outcomes = result.by_f.values().map(|o| o.info + o.pending).sum();
        let some_f_never_succeeded = result.by_f.values().any(|o| o.ok == 0);
        result.valid = if some_f_never_succeeded {
            Validity::Invalid
        } else {
            Validity::Valid
        };
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HistoryBuilder;

    #[test]
    fn counts_outcomes_and_unknowns() {
        // add ok, add info, add never completed, read fail, read ok:
        // unknown outcomes = 1 info + 1 pending = 2.
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        h.add(2, 1);
        h.added(2, 1, OpType::Info);
        h.retry(3, 1, 2);
        h.read(4);
        h.push(4, OpType::Fail, crate::F::Read, serde_json::Value::Null);
        h.read(5);
        h.read_ok(5, 1);
        let mut checker = StatsChecker::new();
        h.ops().iter().for_each(|op| checker.observe(op));
        let result = checker.finish();
        assert_eq!(result.invocations, 5);
        assert_eq!(result.unknown_outcomes, 2);
        assert_eq!(result.retries, 1);
        let add = result.by_f["add"];
        assert_eq!((add.ok, add.fail, add.info, add.pending), (1, 0, 1, 1));
        let read = result.by_f["read"];
        assert_eq!((read.ok, read.fail), (1, 1));
        assert_eq!(result.valid, Validity::Valid);
    }

    #[test]
    fn an_f_that_never_succeeds_is_invalid() {
        let mut h = HistoryBuilder::on("c/x");
        h.read(1);
        h.push(1, OpType::Fail, crate::F::Read, serde_json::Value::Null);
        let mut checker = StatsChecker::new();
        h.ops().iter().for_each(|op| checker.observe(op));
        assert_eq!(checker.finish().valid, Validity::Invalid);
    }
}
