//! The search's input: one partition's ops, each with its model input, call and return.

/// One operation as the search sees it.
#[derive(Debug, Clone)]
pub struct LinOp<I> {
    /// The model's view of it.
    pub input: I,
    /// History index of its invoke.
    pub call: u64,
    /// [`LinOp::ret`]; for an op of unknown outcome, [`LinOp::hint`] with [`HINT`] set; or
    /// [`NO_INDEX`]. One index in 8 bytes, not two in 16: a long partition's search holds
    /// every op.
    end: u64,
}

/// Stands for no index in a [`LinOp`]; no history reaches it.
const NO_INDEX: u64 = u64::MAX;

/// Marks a [`LinOp`]'s end as the hint of an op of unknown outcome: no history's indices
/// reach 2^63 (they count its lines).
const HINT: u64 = 1 << 63;

impl<I> LinOp<I> {
    /// The op called at history index `call`, returned at `ret` (see [`LinOp::ret`]), with
    /// the `hint` of an op of unknown outcome (see [`LinOp::hint`]; ignored when `ret` is
    /// known).
    pub fn new(input: I, call: u64, ret: Option<u64>, hint: Option<u64>) -> Self {
        let end = match (ret, hint) {
            (Some(r), _) => r & !HINT,
            (None, Some(h)) => (h & !HINT) | HINT,
            (None, None) => NO_INDEX,
        };
        LinOp { input, call, end }
    }

    /// History index of its ok completion; `None` when the outcome is unknown (info, or
    /// never completed): it may take effect any time after its call.
    pub fn ret(&self) -> Option<u64> {
        (self.end & HINT == 0).then_some(self.end)
    }

    /// For an op of unknown outcome, history index of its last info completion: where a
    /// service that answered late most likely applied it. A hint for a search, not a deadline.
    pub fn hint(&self) -> Option<u64> {
        (self.end & HINT != 0 && self.end != NO_INDEX).then_some(self.end & !HINT)
    }
}

/// The ops of one independent object, in call order.
#[derive(Debug, Clone)]
pub struct Partition<I> {
    /// The key, or `None` for a single-object model.
    pub key: Option<String>,
    /// Its ops.
    pub ops: Vec<LinOp<I>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::models::CounterInput;

    #[test]
    fn an_op_keeps_its_return_or_its_hint_in_eight_bytes() {
        let known = LinOp::new(CounterInput::Add(0, 1), 3, Some(7), None);
        assert_eq!((known.call, known.ret(), known.hint()), (3, Some(7), None));
        let unknown = LinOp::new(CounterInput::Add(0, 1), 4, None, Some(9));
        assert_eq!((unknown.ret(), unknown.hint()), (None, Some(9)));
        let open = LinOp::new(CounterInput::Add(0, 1), 5, None, None);
        assert_eq!((open.ret(), open.hint()), (None, None));
        let zero = LinOp::new(CounterInput::Read(0, None), 0, Some(0), Some(0));
        assert_eq!((zero.ret(), zero.hint()), (Some(0), None), "0 is an index");
        let hinted = LinOp::new(CounterInput::Add(0, 1), 0, None, Some(0));
        assert_eq!(
            (hinted.ret(), hinted.hint()),
            (None, Some(0)),
            "0 is an index"
        );
        // The figure docs/how-the-checkers-work.md gives for a long partition's search.
        assert_eq!(std::mem::size_of::<LinOp<CounterInput>>(), 40);
    }
}
