//! From a history to the search's input: invokes paired with completions, grouped by partition.

use super::model::{Model, ModelError};
use crate::op::{Op, OpType, Process};
use std::collections::{BTreeMap, HashMap};

/// One operation as the search sees it.
#[derive(Debug, Clone)]
pub struct LinOp<I> {
    /// The model's view of it.
    pub input: I,
    /// History index of its invoke.
    pub call: u64,
    /// History index of its ok completion; `None` when the outcome is unknown (info, or
    /// never completed): it may take effect any time after its call.
    pub ret: Option<u64>,
    /// Who performed it.
    pub process: Process,
}

/// The ops of one independent object, in call order.
#[derive(Debug, Clone)]
pub struct Partition<I> {
    /// The key, or `None` for a single-object model.
    pub key: Option<String>,
    /// Its ops.
    pub ops: Vec<LinOp<I>>,
}

/// Pairs every client invoke with its completion and groups the ops by partition; failed
/// ops are left out (they did not happen).
pub fn partitions<M: Model>(
    model: &M,
    history: &[Op],
) -> Result<Vec<Partition<M::Input>>, ModelError> {
    let mut open: HashMap<&Process, &Op> = HashMap::new();
    let mut groups: BTreeMap<Option<String>, Vec<LinOp<M::Input>>> = BTreeMap::new();
    let mut add = |call: &Op, ret: Option<&Op>| -> Result<(), ModelError> {
        if let Some(input) = model.input(call, ret)? {
            groups
                .entry(model.partition(call))
                .or_default()
                .push(LinOp {
                    input,
                    call: call.index,
                    ret: ret.map(|r| r.index),
                    process: call.process.clone(),
                });
        }
        Ok(())
    };
    for op in history.iter().filter(|op| op.process.is_client()) {
        if op.kind == OpType::Invoke {
            if let Some(previous) = open.insert(&op.process, op) {
                return Err(ModelError {
                    index: op.index,
                    message: format!(
                        "process {} invoked again before its op at index {} completed",
                        op.process, previous.index
                    ),
                });
            }
            continue;
        }
        let Some(call) = open.remove(&op.process) else {
            continue;
        };
        match op.kind {
            OpType::Ok => add(call, Some(op))?,
            OpType::Info => add(call, None)?,
            OpType::Fail | OpType::Invoke => {}
        }
    }
    let mut pending: Vec<&Op> = open.into_values().collect();
    pending.sort_by_key(|op| op.index);
    for call in pending {
        add(call, None)?;
    }
    Ok(groups
        .into_iter()
        .map(|(key, mut ops)| {
            ops.sort_by_key(|op| op.call);
            Partition { key, ops }
        })
        .collect())
}
