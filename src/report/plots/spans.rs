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

/// Pairs a history's client invokes with their completions as the ops go by.
#[derive(Debug, Default)]
pub struct Pairing {
    open: HashMap<Process, (F, u64)>,
}

impl Pairing {
    /// Takes the next op; returns the span it completes, if any. The baseline's reads and
    /// ops of other processes are left out, as are completions that pair with no invoke.
    pub fn observe(&mut self, op: &Op) -> Option<Span> {
        if !op.process.is_client() || op.process.is_baseline() {
            return None;
        }
        if op.kind == OpType::Invoke {
            self.open
                .insert(op.process.clone(), (op.f.clone(), op.time));
            return None;
        }
        let (f, start) = self.open.remove(&op.process)?;
        Some(Span {
            f,
            kind: op.kind,
            start,
            latency: op.time.saturating_sub(start),
        })
    }
}

/// Every completed client operation of `history`, in completion order.
#[cfg(test)]
pub fn spans(history: &[Op]) -> Vec<Span> {
    let mut pairing = Pairing::default();
    history
        .iter()
        .filter_map(|op| pairing.observe(op))
        .collect()
}
