//! One way the ops so far can have been linearized, in 32 bytes: the sweep holds millions.

use super::uses::Uses;
use crate::ideal::{State, Sum};

/// The most a sum the sweep follows may reach either way: a key whose deltas could go
/// further is left to the generic search, so a `Value` never overflows.
pub(super) const MOST: Sum = 1 << 62;

/// A counter's state in 64 bits: absent, or a sum within `MOST` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Value(i64);

impl Value {
    /// No counter.
    pub const ABSENT: Value = Value(i64::MIN);

    /// The value of `state`, a sum within `MOST`.
    pub fn of(state: State) -> Value {
        debug_assert!(state.is_none_or(|s| s.abs() < MOST));
        state.map_or(Value::ABSENT, |s| Value(s as i64))
    }

    /// The state this value stands for.
    pub fn state(self) -> State {
        match self.is_absent() {
            true => None,
            false => Some(Sum::from(self.0)),
        }
    }

    /// Whether there is no counter.
    pub fn is_absent(self) -> bool {
        self == Value::ABSENT
    }

    /// The sum, an absent counter counting as 0.
    pub fn sum(self) -> Sum {
        self.state().unwrap_or(0)
    }

    /// The value after adding `delta` (an absent counter starts at 0).
    pub fn add(self, delta: i64) -> Value {
        Value(self.sum() as i64 + delta)
    }
}

/// One way the ops so far can have been linearized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Config {
    /// The counter's state.
    pub value: Value,
    /// Open adds (by slot) that have taken effect.
    pub applied: u64,
    /// Open reads (by slot) that are done.
    pub done: u64,
    /// Adds of unknown outcome used, per delta class: a number in the sweep's `Uses`.
    pub used: u32,
    /// Adds taken from the reserve: guesses, when the reserve is inexact.
    pub taken: u32,
}

impl Config {
    /// Whether every future of `other` is one of `self` too.
    pub fn beats(&self, other: &Config, uses: &Uses) -> bool {
        self.value == other.value
            && self.applied == other.applied
            && self.done & other.done == other.done
            && uses.no_more_than(self.used, other.used)
    }
}

const _: () = assert!(std::mem::size_of::<Config>() == 32);
