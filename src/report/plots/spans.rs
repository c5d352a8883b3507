//! Client operations as spans: when each was called, how long it took, how it ended.

use checkers::{Op, OpType, Process, F};
use std::collections::HashMap;

/// One completed client operation: when it was called, how long it took, how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// What the operation did.
    pub f: F,
    /// How it ended: ok, fail or info.
    pub kind: OpType,
    /// When it was invoked, ns since the run began.
    pub start: u64,
    /// From invoke to completion, ns.
    pub latency: u64,
}

impl Span {
    /// When it completed, ns since the run began.
    pub(super) fn end(&self) -> u64 {
        self.start.saturating_add(self.latency)
    }
}

/// Pairs each client invoke with its completion (by process); ops never completed are left out.
pub fn spans(history: &[Op]) -> Vec<Span> {
    let mut open: HashMap<&Process, &Op> = HashMap::new();
    let mut spans = Vec::new();
    let load = |op: &&Op| op.process.is_client() && !op.process.is_baseline();
    for op in history.iter().filter(load) {
        if op.kind == OpType::Invoke {
            open.insert(&op.process, op);
        } else if let Some(invoke) = open.remove(&op.process) {
            spans.push(Span {
                f: invoke.f.clone(),
                kind: op.kind,
                start: invoke.time,
                latency: op.time.saturating_sub(invoke.time),
            });
        }
    }
    spans
}
