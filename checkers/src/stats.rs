//! The stats checker: how many ops of each kind took effect, failed, or left their outcome unknown.

use crate::op::{Op, OpType, Process};
use crate::validity::Validity;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// Client ops that completed in a stretch of time, and the share that succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Availability {
    /// Completed ok.
    pub ok: u64,
    /// Completed fail.
    pub fail: u64,
    /// Completed info.
    pub info: u64,
    /// ok / (ok + fail + info); 1.0 when nothing completed.
    pub share_ok: f64,
}

impl Availability {
    fn count(&mut self, kind: OpType) {
        match kind {
            OpType::Ok => self.ok += 1,
            OpType::Fail => self.fail += 1,
            OpType::Info => self.info += 1,
            OpType::Invoke => {}
        }
        let done = self.ok + self.fail + self.info;
        self.share_ok = self.ok as f64 / done as f64;
    }
}

/// One fault the nemesis held, from its start to its stop, and how clients fared meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// The fault's kind (`partition`, `kill`, `pause`, ...).
    pub fault: String,
    /// What the nemesis recorded about it (nodes, offsets, ...).
    pub value: serde_json::Value,
    /// When it started, ns.
    pub start_time: u64,
    /// When it stopped, ns; none if it never did.
    pub end_time: Option<u64>,
    /// Client ops that completed while it held.
    pub clients: Availability,
}

/// The stats checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Client ops completed while no fault held.
    #[serde(default)]
    pub availability_healthy: Availability,
    /// Each fault the nemesis held, in the order they started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultWindow>,
}

/// Streams a history and counts outcomes.
#[derive(Default)]
pub struct StatsChecker {
    open: FxHashMap<Process, String>,
    /// Indices into `result.faults` of the faults holding now.
    holding: Vec<usize>,
    result: StatsResult,
}

impl StatsChecker {
    /// A checker with nothing counted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        // A run's baseline is what the counters held before it, not load.
        if op.process.is_baseline() {
            return;
        }
        if !op.process.is_client() {
            self.result.nemesis_events += 1;
            self.nemesis(op);
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
        for &at in &self.holding {
            self.result.faults[at].clients.count(op.kind);
        }
        if self.holding.is_empty() {
            self.result.availability_healthy.count(op.kind);
        }
        let outcomes = self.result.by_f.entry(f).or_default();
        match op.kind {
            OpType::Ok => outcomes.ok += 1,
            OpType::Fail => outcomes.fail += 1,
            OpType::Info => outcomes.info += 1,
            OpType::Invoke => unreachable!("handled above"),
        }
    }

    /// A `start-X` opens a fault window; the matching `stop-X` (same value, else the
    /// earliest of that kind) closes it. Jepsen's bare `start` / `stop` work the same way.
    fn nemesis(&mut self, op: &Op) {
        let f = op.f.as_str();
        if let Some(fault) = f.strip_prefix("start").map(|k| k.trim_start_matches('-')) {
            self.holding.push(self.result.faults.len());
            self.result.faults.push(FaultWindow {
                fault: fault.to_string(),
                value: op.value.clone(),
                start_time: op.time,
                end_time: None,
                clients: Availability::default(),
            });
        } else if let Some(fault) = f.strip_prefix("stop").map(|k| k.trim_start_matches('-')) {
            let faults = &self.result.faults;
            let same_kind = |at: &&usize| faults[**at].fault == fault;
            let matching = self
                .holding
                .iter()
                .filter(same_kind)
                .find(|at| faults[**at].value == op.value)
                .or_else(|| self.holding.iter().find(same_kind))
                .copied();
            if let Some(at) = matching {
                self.result.faults[at].end_time = Some(op.time);
                self.holding.retain(|h| *h != at);
            }
        }
    }

    /// Ends the history.
    pub fn finish(mut self) -> StatsResult {
        for (_, f) in self.open.drain() {
            self.result.by_f.entry(f).or_default().pending += 1;
        }
        let result = &mut self.result;
        for availability in std::iter::once(&mut result.availability_healthy)
            .chain(result.faults.iter_mut().map(|f| &mut f.clients))
        {
            if availability.ok + availability.fail + availability.info == 0 {
                availability.share_ok = 1.0;
            }
        }
        result.unknown_outcomes = result.by_f.values().map(|o| o.info + o.pending).sum();
        let some_f_never_succeeded = result.by_f.values().any(|o| o.ok == 0);
        result.valid = Validity::from_findings(some_f_never_succeeded, false);
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
    fn availability_is_counted_per_fault_window() {
        // An ok add before any fault; during a partition one ok and one info; after its stop
        // one fail: the partition saw 1 of 2 ok, the healthy time 1 of 2.
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        let mut ops = h.ops().to_vec();
        let nemesis = |f: &str| {
            let value = serde_json::json!({"isolated": ["n1"]});
            Op::new(
                Process::nemesis(),
                OpType::Info,
                crate::F::from(f.to_string()),
                None,
                value,
            )
        };
        ops.push(nemesis("start-partition"));
        let mut h = HistoryBuilder::on("c/x");
        h.add(2, 1);
        h.added(2, 1, OpType::Ok);
        h.add(3, 1);
        h.added(3, 1, OpType::Info);
        ops.extend(h.ops().iter().cloned());
        ops.push(nemesis("stop-partition"));
        let mut h = HistoryBuilder::on("c/x");
        h.add(4, 1);
        h.added(4, 1, OpType::Fail);
        ops.extend(h.ops().iter().cloned());
        let mut checker = StatsChecker::new();
        ops.iter().for_each(|op| checker.observe(op));
        let result = checker.finish();
        assert_eq!(result.faults.len(), 1);
        let partition = &result.faults[0];
        assert_eq!(partition.fault, "partition");
        assert!(partition.end_time.is_some());
        assert_eq!((partition.clients.ok, partition.clients.info), (1, 1));
        assert_eq!(partition.clients.share_ok, 0.5);
        let healthy = result.availability_healthy;
        assert_eq!((healthy.ok, healthy.fail, healthy.share_ok), (1, 1, 0.5));
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
