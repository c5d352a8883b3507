//! What a counter's sweep does with each op: read, add, or add of unknown outcome (held open
//! to its info completion, or in the reserve from its call), and the reserve's delta classes.

use crate::linear::models::counter::pool::MAX_CLASSES;
use crate::linear::models::counter::CounterInput;
use crate::linear::partition::LinOp;

/// What the sweep does with an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A read that returned: open from its call to its return.
    Read,
    /// An add that returned: open from its call, in effect by its return.
    Add,
    /// An add of unknown outcome with an info completion: open from its call to that
    /// completion, maybe in effect; from then on one more add of its class in the reserve.
    Hinted(u8),
    /// An add of unknown outcome never completed: in the reserve of its class from its call.
    Reserve(u8),
}

/// Each op's role and the deltas of the reserve's classes, or `None` when the sweep does not
/// apply (deletes, too many distinct unknown deltas).
pub(super) fn roles(ops: &[LinOp<CounterInput>]) -> Option<(Vec<Role>, Vec<i64>)> {
    let mut deltas = Vec::new();
    for op in ops {
        match op.input {
            CounterInput::Delete(_) => return None,
            CounterInput::Add(_, d) if op.ret().is_none() && !deltas.contains(&d) => deltas.push(d),
            _ => {}
        }
    }
    if deltas.len() > MAX_CLASSES {
        return None;
    }
    deltas.sort_unstable();
    let roles = ops
        .iter()
        .map(|op| match (&op.input, op.ret()) {
            (CounterInput::Add(_, d), None) => {
                let class = deltas.binary_search(d).unwrap_or(0) as u8;
                match op.hint() {
                    Some(_) => Role::Hinted(class),
                    None => Role::Reserve(class),
                }
            }
            (CounterInput::Add(..), Some(_)) => Role::Add,
            _ => Role::Read,
        })
        .collect();
    Some((roles, deltas))
}
