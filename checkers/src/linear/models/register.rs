//! Registers: `read` / `write`, and with `cas` the compare-and-set register of Knossos.

use crate::linear::model::{unknown_f, Model, ModelError, Val};
use crate::op::{Op, F};

/// One register operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegisterInput {
    /// Set the value.
    Write(Val),
    /// Read, with what it returned.
    Read(Val),
    /// Set to `to` if the value is `from`; `known` is false when the outcome is unknown
    /// (then it either took effect or failed harmlessly).
    Cas {
        /// The expected value.
        from: Val,
        /// The new value.
        to: Val,
        /// Whether it is known to have succeeded.
        known: bool,
    },
}

/// A single register starting at `init`; `cas` allowed when `cas` is true.
///
/// A register that starts with a value can never be empty again, so there a read that
/// returned nil says only that the value was not seen (Knossos' convention: such reads are
/// unconstrained). A register that starts empty reads nil while it is empty.
#[derive(Debug, Clone)]
pub struct RegisterModel {
    /// The value before any operation.
    pub init: Val,
    /// Whether this is a cas-register.
    pub cas: bool,
}

impl Model for RegisterModel {
    /// The value held; `None`: any value, not yet seen (`any_state`).
    type State = Option<Val>;
    type Input = RegisterInput;

    fn init(&self, _partition: Option<&str>) -> Option<Val> {
        Some(self.init.clone())
    }

    fn any_state(&self) -> Option<Option<Val>> {
        Some(None)
    }

    fn partition(&self, _call: &Op) -> Option<String> {
        None
    }

    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<RegisterInput>, ModelError> {
        let known = if self.cas {
            "read, write, cas"
        } else {
            "read, write"
        };
        Ok(match &call.f {
            F::Other(f) if f == "write" => Some(RegisterInput::Write(Val::from_json(&call.value))),
            F::Read => ret
                .map(|r| Val::from_json(&r.value))
                .filter(|v| *v != Val::Nil || self.init == Val::Nil)
                .map(RegisterInput::Read),
            F::Other(f) if f == "cas" && self.cas => {
                let pair = call
                    .value
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .ok_or_else(|| ModelError {
                        index: call.index,
                        message: format!("a cas needs [from to], got {}", call.value),
                    })?;
                Some(RegisterInput::Cas {
                    from: Val::from_json(&pair[0]),
                    to: Val::from_json(&pair[1]),
                    known: ret.is_some(),
                })
            }
            _ => {
                return Err(unknown_f(
                    call,
                    if self.cas { "cas-register" } else { "register" },
                    known,
                ))
            }
        })
    }

    fn step(&self, state: &Option<Val>, input: &RegisterInput) -> Option<Option<Val>> {
        let Some(state) = state else {
            // Any value: the first read or cas says which it was. A cas whose outcome is
            // unknown may have failed, and then the value is still any but `from`: kept as
            // any, which lets through more orders, never fewer.
            return Some(match input {
                RegisterInput::Write(v) | RegisterInput::Read(v) => Some(v.clone()),
                RegisterInput::Cas {
                    to, known: true, ..
                } => Some(to.clone()),
                RegisterInput::Cas { known: false, .. } => None,
            });
        };
        let state = match input {
            RegisterInput::Write(v) => Some(v.clone()),
            RegisterInput::Read(v) => (v == state).then(|| state.clone()),
            RegisterInput::Cas { from, to, known } => {
                // An unknown outcome: it took effect, or it failed and changed nothing.
                if from == state {
                    Some(to.clone())
                } else if *known {
                    None
                } else {
                    Some(state.clone())
                }
            }
        };
        state.map(Some)
    }

    fn is_read_only(&self, input: &Self::Input) -> bool {
        matches!(input, RegisterInput::Read(_))
    }

    /// Only a write or a compare-and-set of `v` makes the register hold `v`.
    fn may_still_read(
        &self,
        state: &Option<Val>,
        read: &RegisterInput,
        before: &[&RegisterInput],
    ) -> bool {
        let (RegisterInput::Read(v), Some(state)) = (read, state) else {
            return true;
        };
        v == state
            || before.iter().any(|i| match i {
                RegisterInput::Write(w) => w == v,
                RegisterInput::Cas { to, .. } => to == v,
                RegisterInput::Read(_) => false,
            })
    }

    fn describe(&self, state: &Option<Val>) -> String {
        state
            .as_ref()
            .map_or_else(|| "any value".to_string(), Val::to_string)
    }
}
