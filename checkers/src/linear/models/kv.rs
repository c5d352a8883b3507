//! Porcupine's key-value store: `get`, `put` and `append` on string values, per key.

use crate::linear::model::{unknown_f, Model, ModelError};
use crate::linear::partition::LinOp;
use crate::op::Op;
use aho_corasick::AhoCorasick;
use std::sync::Arc;

/// One key-value operation on the op's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvInput {
    /// Read the value, with what it returned.
    Get(Arc<str>),
    /// Replace the value.
    Put(Arc<str>),
    /// Append to the value.
    Append(Arc<str>),
    /// A put or an append whose text no get of the partition returned (`KvModel::prepare`).
    Hidden,
}

/// A map of string keys to string values, every key starting as the empty string.
#[derive(Debug, Clone, Default)]
pub struct KvModel {
    /// Every value a get of the partition returned, sorted: known once the model is made
    /// for one partition (`for_partition`).
    returned: Option<Arc<[Arc<str>]>>,
}

/// A key's value, as the search needs to know it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvState {
    /// This value.
    Value(Arc<str>),
    /// A value no get of the partition returned, nor one that starts with it.
    Unseen,
    /// Some value that ends with this text: the initial value left open (`any_state`),
    /// followed by the appends since.
    EndsWith(Arc<str>),
}

impl KvModel {
    /// The state for `value`: `None` when no get of the partition returned it or a value
    /// that starts with it, so no get can see it until the next put.
    ///
    /// Proof that this changes no verdict: appends only lengthen the value, so every value
    /// until the next put starts with `value`, and no get returns one of them. All such
    /// values behave alike (every get fails, appends keep them so, a put ends them): they
    /// are one state, and the orders of appends that led to them need be tried only once.
    fn state(&self, value: Arc<str>) -> KvState {
        let Some(returned) = &self.returned else {
            return KvState::Value(value);
        };
        let at = returned.partition_point(|g| **g < *value);
        if returned.get(at).is_some_and(|g| g.starts_with(&*value)) {
            KvState::Value(value)
        } else {
            KvState::Unseen
        }
    }
}

fn text(op: &Op) -> Result<Arc<str>, ModelError> {
    match &op.value {
        serde_json::Value::String(s) => Ok(s.as_str().into()),
        serde_json::Value::Null => Ok("".into()),
        v => Err(ModelError {
            index: op.index,
            message: format!("kv values are strings, got {v}"),
        }),
    }
}

impl Model for KvModel {
    type State = KvState;
    type Input = KvInput;

    fn init(&self, _partition: Option<&str>) -> KvState {
        KvState::Value("".into())
    }

    fn any_state(&self) -> Option<KvState> {
        Some(KvState::EndsWith("".into()))
    }

    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<KvInput>, ModelError> {
        Ok(match call.f.as_str() {
            "get" => ret.map(text).transpose()?.map(KvInput::Get),
            "put" => Some(KvInput::Put(text(call)?)),
            "append" => Some(KvInput::Append(text(call)?)),
            _ => return Err(unknown_f(call, "kv", "get, put, append")),
        })
    }

    /// Hides the writes no get can have seen: an append whose text is in no get's value, a
    /// put whose value starts no get's value.
    ///
    /// Proof that this changes no verdict: a value only grows by appends until the next put,
    /// so once it holds such a write's text (at the start, for a put), every value until the
    /// next put holds it too, and no get of the partition returns one of them. All those
    /// values behave alike (every get fails, appends keep them so, a put ends them), so they
    /// are one state, `None`. And two hidden writes then take any state to `None` alike, so
    /// they are interchangeable (`symmetry`), which is what turns k unseen concurrent writes
    /// from k! orders into one.
    fn for_partition(&self, ops: &mut [LinOp<KvInput>]) -> Self {
        let mut gets: Vec<&str> = ops
            .iter()
            .filter_map(|op| match &op.input {
                KvInput::Get(v) => Some(&**v),
                _ => None,
            })
            .collect();
        let writes: Vec<(usize, &str, bool)> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match &op.input {
                KvInput::Put(v) => Some((i, &**v, true)),
                KvInput::Append(v) if !v.is_empty() => Some((i, &**v, false)),
                _ => None,
            })
            .collect();
        gets.sort_unstable();
        gets.dedup();
        let returned = Some(gets.iter().map(|&g| Arc::from(g)).collect());
        let Ok(finder) = AhoCorasick::new(writes.iter().map(|w| w.1)) else {
            return KvModel { returned };
        };
        let mut seen = vec![false; writes.len()];
        for get in &gets {
            for found in finder.find_overlapping_iter(*get) {
                let w = found.pattern().as_usize();
                seen[w] |= !writes[w].2 || found.start() == 0;
            }
        }
        let hidden: Vec<usize> = (0..writes.len())
            .filter(|&w| !seen[w])
            .map(|w| writes[w].0)
            .collect();
        for i in hidden {
            ops[i].input = KvInput::Hidden;
        }
        KvModel { returned }
    }

    /// A hidden write leaves `Unseen` whatever the value was: its text is in no get.
    fn step(&self, state: &KvState, input: &KvInput) -> Option<KvState> {
        match (input, state) {
            (KvInput::Get(v), KvState::Value(s)) => (s == v).then(|| state.clone()),
            (KvInput::Get(_), KvState::Unseen) => None,
            (KvInput::Get(v), KvState::EndsWith(s)) => {
                v.ends_with(&**s).then(|| KvState::Value(v.clone()))
            }
            (KvInput::Put(v), _) => Some(self.state(v.clone())),
            (KvInput::Append(v), KvState::Value(s)) => Some(self.state(format!("{s}{v}").into())),
            (KvInput::Append(_), KvState::Unseen) => Some(KvState::Unseen),
            (KvInput::Append(v), KvState::EndsWith(s)) => {
                Some(KvState::EndsWith(format!("{s}{v}").into()))
            }
            (KvInput::Hidden, _) => Some(KvState::Unseen),
        }
    }

    fn is_read_only(&self, input: &Self::Input) -> bool {
        matches!(input, KvInput::Get(_))
    }

    /// Appends only lengthen the value and a put starts it again, so a get can still see `v`
    /// after `state` only if `v` starts with `state`, or with the value of a put that may
    /// come first.
    fn may_still_read(&self, state: &KvState, read: &KvInput, before: &[&KvInput]) -> bool {
        let KvInput::Get(v) = read else {
            return true;
        };
        let follows = match state {
            KvState::Value(s) => v.starts_with(&**s),
            KvState::Unseen => false,
            KvState::EndsWith(s) => v.contains(&**s),
        };
        follows
            || before
                .iter()
                .any(|i| matches!(i, KvInput::Put(w) if v.starts_with(&**w)))
    }

    fn describe(&self, state: &KvState) -> String {
        match state {
            KvState::Value(s) => format!("{s:?}"),
            KvState::Unseen => "a value no get returned".to_string(),
            KvState::EndsWith(s) if s.is_empty() => "any value".to_string(),
            KvState::EndsWith(s) => format!("any value ending in {s:?}"),
        }
    }
}
