//! Why a partition is not linearizable: its longest linearizable prefix, the op that cannot
//! follow it, the window of ops around that op, and a minimal core of ops that cannot be
//! ordered, said in a sentence.

use super::core::{self, Core};
use super::model::Model;
use super::partition::{LinOp, Partition};
use super::search::longest_prefix;
use std::time::{Duration, Instant};

/// The most time spent on the longest prefix of one failing set of ops: less where the
/// model refuted an op at once, since the failure is known then.
const EXPLAIN_BUDGET: Duration = Duration::from_secs(1);
const EXPLAIN_REFUTED_BUDGET: Duration = Duration::from_millis(100);

/// The most time spent looking for the core of one failing partition, within the limit.
const CORE_BUDGET: Duration = Duration::from_secs(10);

/// What the search found about a partition that is not linearizable.
pub struct Found<'a> {
    /// The longest linearizable prefix it found (maybe empty).
    pub longest: &'a [usize],
    /// The op that could not be linearized, where it knows it.
    pub failing: Option<usize>,
}

/// Explains a partition the search found not linearizable from `init`, with its core,
/// before `deadline` if any.
pub fn failure<M: Model>(
    model: &M,
    part: &Partition<M::Input>,
    init: M::State,
    found: Found,
    deadline: Option<Instant>,
    memory_limit: usize,
    describe: &dyn Fn(u64) -> String,
) -> PartitionFailure {
    let within = |budget: Duration| {
        let until = Instant::now() + budget;
        deadline.map_or(until, |d| d.min(until))
    };
    let refuted = model.refute(&init, &part.ops);
    // The search drops dead states, which cuts its longest prefix short; the prefix searched
    // to the end explains the failure better, when it comes. A refuted op is the failure.
    let budget = match refuted {
        Some(_) => EXPLAIN_REFUTED_BUDGET,
        None => EXPLAIN_BUDGET,
    };
    let (longest, failing) = match longest_prefix(model, init.clone(), &part.ops, within(budget)) {
        Some(longest) => (longest, refuted),
        None => (found.longest.to_vec(), refuted.or(found.failing)),
    };
    let mut failure = explain(model, part, init.clone(), &longest, failing);
    let core = core::core(model, init, &part.ops, within(CORE_BUDGET), memory_limit);
    add_core(&mut failure, model, part, &core, describe);
    failure
}
use crate::op::{Op, OpType, Process, F};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// A smallest set of the partition's ops that is not linearizable on its own, as the
    /// history indices of their invokes: removing any one of them makes it linearizable.
    #[serde(default)]
    pub core: Vec<u64>,
    /// Whether the core is known to be minimal; `false` when its budget ran out first.
    #[serde(default)]
    pub core_minimal: bool,
    /// Why the core's ops cannot be ordered, in a sentence.
    #[serde(default)]
    pub because: String,
}

/// Explains a failed search from the longest linearization it found.
pub fn explain<M: Model>(
    model: &M,
    part: &Partition<M::Input>,
    from: M::State,
    longest: &[usize],
    failing: Option<usize>,
) -> PartitionFailure {
    let ops = &part.ops;
    let state = longest
        .iter()
        .try_fold(from, |state, &i| model.step(&state, &ops[i].input))
        .map_or_else(|| "(not reachable)".to_string(), |s| model.describe(&s));
    let mut in_longest = vec![false; ops.len()];
    for &i in longest {
        in_longest[i] = true;
    }
    let failing = failing.or_else(|| {
        (0..ops.len())
            .filter(|&i| !in_longest[i])
            .filter_map(|i| ops[i].ret().map(|r| (r, i)))
            .min()
            .map(|(_, i)| i)
    });
    let mut window = Vec::new();
    if let Some(f) = failing {
        let (call, ret) = (ops[f].call, ops[f].ret().unwrap_or(u64::MAX));
        let before = longest
            .iter()
            .filter(|&&i| ops[i].ret().is_some_and(|r| r < call))
            .max_by_key(|&&i| ops[i].ret());
        window.extend(before.map(|&i| ops[i].call));
        // Ops of unknown outcome count while they were in flight (up to an info completion).
        window.extend(
            ops.iter()
                .filter(|op| op.call <= ret && op.ret().or(op.hint()).is_none_or(|r| r >= call))
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
        core: Vec::new(),
        core_minimal: false,
        because: String::new(),
    }
}

/// Adds the core to a failure, with the sentence that says why its ops cannot be ordered.
pub fn add_core<M: Model>(
    failure: &mut PartitionFailure,
    model: &M,
    part: &Partition<M::Input>,
    core: &Core<M::State>,
    describe: &dyn Fn(u64) -> String,
) {
    let ops: Vec<LinOp<M::Input>> = core.ops.iter().map(|&i| part.ops[i].clone()).collect();
    failure.core = ops.iter().map(|op| op.call).collect();
    failure.core_minimal = core.minimal;
    // A core is a handful of ops: its search is immediate.
    let until = Instant::now() + EXPLAIN_BUDGET;
    let Some(longest) = longest_prefix(model, core.from.clone(), &ops, until) else {
        return;
    };
    let core_part = Partition {
        key: part.key.clone(),
        ops,
    };
    let start = model.describe(&core.from);
    let why = explain(model, &core_part, core.from.clone(), &longest, None);
    let said = |calls: &[u64]| {
        calls
            .iter()
            .map(|&c| describe(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let n = failure.core.len();
    failure.because = match (&why.failing_op, why.linearized.is_empty()) {
        (Some(f), true) if n == 1 => format!(
            "This op cannot take effect on its own: starting from {start}, {} cannot.",
            describe(*f)
        ),
        (stuck, _) => {
            let ordered = if why.linearized.is_empty() {
                format!("starting from {start}, not one of them can take effect first")
            } else {
                format!(
                    "starting from {start}, at most {} of them can take effect in order ({}), \
                     leaving {}",
                    why.linearized.len(),
                    said(&why.linearized),
                    why.state
                )
            };
            let stuck = stuck.map_or(String::new(), |f| {
                format!(", and then {} cannot", describe(f))
            });
            format!(
                "These {n} ops cannot be ordered, each taking effect between its call and its \
                 return: {ordered}{stuck}; no other order gets further."
            )
        }
    };
}

/// The op of `history` whose invoke has index `call`, in words (`said`).
pub fn describe_op(history: &[Op], call: u64) -> String {
    let Some(invoke) = find(history, call) else {
        return format!("[{call}]");
    };
    let done = history[position(history, call).unwrap_or(0)..]
        .iter()
        .skip(1)
        .find(|op| op.process == invoke.process);
    let returned = done.filter(|d| d.kind == OpType::Ok).map(|d| &d.value);
    said(call, &invoke.process, &invoke.f, &invoke.value, returned)
}

/// An op in words: its index, process, call and result (`None`: its outcome is unknown),
/// e.g. `[12] p3 read → 5`.
pub fn said(
    call: u64,
    process: &Process,
    f: &F,
    value: &Value,
    returned: Option<&Value>,
) -> String {
    let mut text = format!("[{call}] p{process} {}", f.as_str());
    if !value.is_null() {
        text.push_str(&format!(" {value}"));
    }
    match returned {
        Some(r) if r != value => text.push_str(&format!(" → {r}")),
        Some(_) => {}
        None => text.push_str(" (outcome unknown)"),
    }
    text
}

/// The op with history index `index`.
fn find(history: &[Op], index: u64) -> Option<&Op> {
    position(history, index).map(|p| &history[p])
}

fn position(history: &[Op], index: u64) -> Option<usize> {
    match history.get(index as usize) {
        Some(op) if op.index == index => Some(index as usize),
        _ => history.iter().position(|op| op.index == index),
    }
}
