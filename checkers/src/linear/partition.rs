//! The search's input: one partition's ops, each with its model input, call and return.

/// One operation as the search sees it.
#[derive(Debug, Clone)]
pub struct LinOp<I> {
    /// The model's view of it.
    pub input: I,
    /// History index of its invoke.
    pub call: u64,
    /// History index of its ok completion; `None` when the outcome is unknown (info, or
    /// never completed): it may take effect any time after its call.
    pub ret: Option<u64>,
    /// For an op of unknown outcome, history index of its last info completion: where a
    /// service that answered late most likely applied it. A hint for a search, not a deadline.
    pub hint: Option<u64>,
}

/// The ops of one independent object, in call order.
#[derive(Debug, Clone)]
pub struct Partition<I> {
    /// The key, or `None` for a single-object model.
    pub key: Option<String>,
    /// Its ops.
    pub ops: Vec<LinOp<I>>,
}
