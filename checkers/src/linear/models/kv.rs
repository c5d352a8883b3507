//! Porcupine's key-value store: `get`, `put` and `append` on string values, per key.

use crate::linear::model::{unknown_f, Model, ModelError};
use crate::op::Op;
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
}

/// A map of string keys to string values, every key starting as the empty string.
#[derive(Debug, Clone, Default)]
pub struct KvModel;

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
    type State = Arc<str>;
    type Input = KvInput;

    fn init(&self, _partition: Option<&str>) -> Arc<str> {
        "".into()
    }

    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<KvInput>, ModelError> {
        Ok(match call.f.as_str() {
            "get" => ret.map(text).transpose()?.map(KvInput::Get),
            "put" => Some(KvInput::Put(text(call)?)),
            "append" => Some(KvInput::Append(text(call)?)),
            _ => return Err(unknown_f(call, "kv", "get, put, append")),
        })
    }

    fn step(&self, state: &Arc<str>, input: &KvInput) -> Option<Arc<str>> {
        match input {
            KvInput::Get(v) => (v == state).then(|| state.clone()),
            KvInput::Put(v) => Some(v.clone()),
            KvInput::Append(v) => Some(format!("{state}{v}").into()),
        }
    }

    fn is_read_only(&self, input: &Self::Input) -> bool {
        matches!(input, KvInput::Get(_))
    }

    fn describe(&self, state: &Arc<str>) -> String {
        format!("{state:?}")
    }
}
