//! What a model is to the linearizability search: plain data with a step function.

use super::partition::LinOp;
use crate::op::Op;
use serde_json::Value;
use std::hash::Hash;
use std::sync::Arc;

/// A value held by a register or returned by a read: small, hashable, cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    /// Nothing: an empty register, `nil`, `null`.
    Nil,
    /// An integer.
    Int(i64),
    /// Anything else, by its JSON text (strings included, quoted).
    Text(Arc<str>),
}

impl Val {
    /// Converts a history value.
    pub fn from_json(value: &Value) -> Val {
        match value {
            Value::Null => Val::Nil,
            v => v
                .as_i64()
                .map_or_else(|| Val::Text(v.to_string().into()), Val::Int),
        }
    }
}

impl std::str::FromStr for Val {
    type Err = String;

    /// Parses a JSON or EDN scalar: `0`, `-3`, `nil`, `null`, `"text"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s == "nil" {
            return Ok(Val::Nil);
        }
        match serde_json::from_str::<Value>(s) {
            Ok(v @ (Value::Null | Value::Number(_) | Value::String(_) | Value::Bool(_))) => {
                Ok(Val::from_json(&v))
            }
            _ => Err(format!(
                "`{s}` is not a scalar: expected an integer, a string, nil or null"
            )),
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Nil => f.write_str("nil"),
            Val::Int(n) => write!(f, "{n}"),
            Val::Text(t) => f.write_str(t),
        }
    }
}

/// Why an op cannot be checked against a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("op at index {index}: {message}")]
pub struct ModelError {
    /// The history index of the op's invoke.
    pub index: u64,
    /// What is wrong with it.
    pub message: String,
}

/// A sequential specification the search checks a history against.
pub trait Model: Sync + Clone {
    /// The state of the object; the search caches (linearized set, state) pairs.
    type State: Clone + Eq + Hash + Send + Sync + std::fmt::Debug;
    /// One operation: its call and, when known, what it returned.
    type Input: Clone + Send + Sync + Eq + Hash + std::fmt::Debug;

    /// The state of partition `partition` (see `partition`) before any operation.
    fn init(&self, partition: Option<&str>) -> Self::State;

    /// Which independent object (partition) an op acts on; all ops of one partition are
    /// checked together, partitions separately (P-compositionality).
    fn partition(&self, call: &Op) -> Option<String> {
        call.key.clone()
    }

    /// A state that stands for every state the object could start in, if the model has
    /// one: a witness that holds from it does not depend on the initial value (`core`).
    fn any_state(&self) -> Option<Self::State> {
        None
    }

    /// Builds an op from its invoke and its ok completion (`None` when the outcome is
    /// unknown). `Ok(None)` means the op constrains nothing and is left out.
    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<Self::Input>, ModelError>;

    /// The model for one partition, once all of its ops are known: it may learn from them
    /// and rewrite their inputs, keeping every verdict (each model proves its rewrite). The
    /// default is the model itself, the inputs unchanged.
    fn for_partition(&self, _ops: &mut [LinOp<Self::Input>]) -> Self {
        self.clone()
    }

    /// The state after `input` when it can take effect in `state`, or `None` if it cannot.
    fn step(&self, state: &Self::State, input: &Self::Input) -> Option<Self::State>;

    /// The state `input` was stepped from to reach `after`, where the model can work it out
    /// (`None`: it cannot). The search keeps no copy of a state that `undo` gave back equal
    /// when the op was linearized, and calls `undo` again on backtracking: it must be a pure
    /// function of its arguments that respects `==` (as `step` must, for the cache).
    fn undo(&self, _after: &Self::State, _input: &Self::Input) -> Option<Self::State> {
        None
    }

    /// Whether the op never changes the state (a read): such an op, once it can be
    /// linearized, is linearized at once.
    fn is_read_only(&self, _input: &Self::Input) -> bool {
        false
    }

    /// Whether the read-only op `read` can still succeed after `state` when only the ops in
    /// `before` may take effect first, in some order. `false` lets the search drop the state
    /// (see `search::Search::dead_end`). The default never drops one; a model that overrides
    /// it must answer `false` only when no order of any subset of `before` reaches a state
    /// in which `read` succeeds.
    fn may_still_read(
        &self,
        _state: &Self::State,
        _read: &Self::Input,
        _before: &[&Self::Input],
    ) -> bool {
        true
    }

    /// The position of an op that no order of `ops` from `init` can explain, found by a
    /// check cheaper than the search (a necessary condition), if any. The default finds none.
    fn refute(&self, _init: &Self::State, _ops: &[LinOp<Self::Input>]) -> Option<usize> {
        None
    }

    /// The model's own decision procedure for one partition, if it has one that applies to
    /// `ops`: `None` leaves them to the generic search. `stop` says when to give up. A
    /// model that answers must answer exactly.
    fn decide(
        &self,
        _init: &Self::State,
        _ops: &[LinOp<Self::Input>],
        _stop: &dyn Fn() -> bool,
    ) -> Option<Decision> {
        None
    }

    /// A state in words, for explanations.
    fn describe(&self, state: &Self::State) -> String {
        format!("{state:?}")
    }
}

/// What a model's own decision procedure answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Some order explains every result.
    Linearizable,
    /// None does; `failing` is the op (by position) at whose return the last order ran out.
    NotLinearizable {
        /// The op's position in the partition.
        failing: usize,
    },
    /// It was told to stop first.
    Stopped,
}

/// The error for an op whose `f` the model does not know.
pub fn unknown_f(call: &Op, model: &str, known: &str) -> ModelError {
    ModelError {
        index: call.index,
        message: format!(
            "the {model} model has no `{}` operation (it knows {known})",
            call.f
        ),
    }
}
