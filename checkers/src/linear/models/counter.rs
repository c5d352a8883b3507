//! The ideal counter (docs/how-the-checkers-work.md): `add(d)` sets it to `(current or 0) + d`, `delete` makes
//! it absent, `read` returns it (`null` when absent).

use crate::linear::model::{unknown_f, Model, ModelError};
use crate::op::{Op, F};

/// One counter operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CounterInput {
    /// Add a delta.
    Add(i64),
    /// Make the counter absent.
    Delete,
    /// Read, with what it returned (`None`: the counter was absent).
    Read(Option<i64>),
}

/// The ideal counter, starting from `init` (`None`: absent; Jepsen's counter starts at 0).
#[derive(Debug, Clone, Default)]
pub struct CounterModel {
    /// The value before any operation.
    pub init: Option<i64>,
}

impl Model for CounterModel {
    type State = Option<i64>;
    type Input = CounterInput;

    fn init(&self) -> Option<i64> {
        self.init
    }

    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<CounterInput>, ModelError> {
        let bad = |message: String| ModelError {
            index: call.index,
            message,
        };
        Ok(match call.f {
            F::Add => Some(CounterInput::Add(call.delta().ok_or_else(|| {
                bad(format!("an add needs an integer delta, got {}", call.value))
            })?)),
            F::Delete if call.key.as_deref().is_some_and(|k| !k.contains('/')) => {
                return Err(bad(format!(
                    "a delete of the whole partition `{}` spans counters, which this per-key model cannot check",
                    call.key.as_deref().unwrap_or_default()
                )))
            }
            F::Delete => Some(CounterInput::Delete),
            // A scan reads many counters at once; leaving it out only loosens the check.
            F::Scan => None,
            F::Read => match ret {
                None => None,
                Some(ret) => Some(CounterInput::Read(ret.read_value().ok_or_else(|| {
                    bad(format!(
                        "a read must return an integer or null, got {}",
                        ret.value
                    ))
                })?)),
            },
            _ => return Err(unknown_f(call, "counter", "add, delete, read, scan")),
        })
    }

    fn step(&self, state: &Option<i64>, input: &CounterInput) -> Option<Option<i64>> {
        match input {
            CounterInput::Add(d) => Some(Some(state.unwrap_or(0).wrapping_add(*d))),
            CounterInput::Delete => Some(None),
            CounterInput::Read(v) => (v == state).then_some(*state),
        }
    }

    fn is_read_only(&self, input: &Self::Input) -> bool {
        matches!(input, CounterInput::Read(_))
    }

    fn describe(&self, state: &Option<i64>) -> String {
        state.map_or("absent".to_string(), |n| n.to_string())
    }
}
