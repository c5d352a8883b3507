//! Why a partition is not linearizable: its longest linearizable prefix, the op that cannot
//! follow it, and the window of ops around that op.

use super::model::Model;
use super::prepare::Partition;
use serde::{Deserialize, Serialize};

/// One partition that no order explains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionFailure {
    /// The key, for per-key models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Ops in the partition.
    pub ops: usize,
    /// The longest partial linearization found, as the history indices of the ops' invokes,
    /// in linearization order.
    pub linearized: Vec<u64>,
    /// The model's state after the longest partial linearization, in words.
    pub state: String,
    /// The invoke index of the op with the earliest return that cannot be added to it.
    pub failing_op: Option<u64>,
    /// The invoke indices of the ops to look at: the failing op, every op concurrent with it,
    /// and the last linearized op that returned before it was called.
    pub window: Vec<u64>,
}

/// Explains a failed search from the longest linearization it found.
pub fn explain<M: Model>(
    model: &M,
    part: &Partition<M::Input>,
    longest: &[usize],
) -> PartitionFailure {
    let ops = &part.ops;
    let state = longest
        .iter()
        .try_fold(model.init(part.key.as_deref()), |state, &i| {
            model.step(&state, &ops[i].input)
        })
        .map_or_else(|| "(not reachable)".to_string(), |s| model.describe(&s));
    let mut in_longest = vec![false; ops.len()];
    for &i in longest {
        in_longest[i] = true;
    }
    let failing = (0..ops.len())
        .filter(|&i| !in_longest[i])
        .filter_map(|i| ops[i].ret.map(|r| (r, i)))
        .min()
        .map(|(_, i)| i);
    let mut window = Vec::new();
    if let Some(f) = failing {
        let (call, ret) = (ops[f].call, ops[f].ret.unwrap_or(u64::MAX));
        let before = longest
            .iter()
            .filter(|&&i| ops[i].ret.is_some_and(|r| r < call))
            .max_by_key(|&&i| ops[i].ret);
        window.extend(before.map(|&i| ops[i].call));
        window.extend(
            ops.iter()
                .filter(|op| op.call <= ret && op.ret.is_none_or(|r| r >= call))
                .map(|op| op.call),
        );
        window.sort_unstable();
        window.dedup();
    }
    PartitionFailure {
        key: part.key.clone(),
        ops: ops.len(),
        linearized: longest.iter().map(|&i| ops[i].call).collect(),
        state,
        failing_op: failing.map(|f| ops[f].call),
        window,
    }
}
