//! What the sweep reads: the ops of a counter's window and the settled past they follow.

use super::subsets::Subsets;
use super::values::Values;

/// How an op of the window has ended, so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Some attempt is still running.
    Open,
    /// It took effect by this event.
    At(u64),
    /// It timed out (last at this event): it may take effect any time after its invoke, or
    /// never.
    Never(u64),
}

impl End {
    /// The event by which it took effect, if one is known.
    pub fn at(self) -> Option<u64> {
        match self {
            End::At(b) => Some(b),
            End::Open | End::Never(_) => None,
        }
    }
}

/// An add or delete still in play, with all its attempts joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowOp {
    /// Index of its first invoke.
    pub id: u64,
    /// The delta of an add; none for a delete.
    pub delta: Option<i64>,
    /// Event of its first invoke.
    pub start: u64,
    /// How it ended.
    pub end: End,
    /// It may not have taken effect even if it ended ok (it floated before a retry).
    pub loose: bool,
}

/// What the sweep reads: the settled past and the ops in play.
pub struct Frame<'a> {
    /// The states the counter may be in at `floor` from the settled past, with no
    /// timed-out delete struck since an op in play began.
    pub base: &'a Values,
    /// The states it may be in at `floor` after a timed-out delete struck.
    pub struck: &'a Values,
    /// Points at or after which ops of the window may take effect (doubled indices).
    pub floor: u64,
    /// The sums of floating adds: any subset of them may have taken effect.
    pub floating: &'a Subsets,
    /// A delete timed out before `floor`: it may strike at any later point.
    pub floating_delete: bool,
    /// The ops in play.
    pub ops: &'a [WindowOp],
}
