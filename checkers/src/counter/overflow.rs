//! The overflow finding: a read some legal order gives a true sum outside `i64`, the range
//! a 64-bit counter such as Cassandra's holds (past it, the counter wraps). Such a read is
//! not judged as an over- or undercount: no 64-bit answer can be compared with that sum.

use super::values::Values;
use crate::ideal::Sum;
use serde::{Deserialize, Serialize};

/// How many overflowing reads results.json lists, earliest first.
pub const OVERFLOWS_KEPT: usize = 100;

/// An ok read (or scan cell) whose allowed states hold a count outside `i64`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overflow {
    /// The counter read.
    pub key: String,
    /// Index of the read's invoke.
    pub invoke_index: u64,
    /// Index of the read's ok completion.
    pub index: u64,
    /// Time of the completion, ns.
    pub time: u64,
    /// What the read returned (`None`: `null`).
    pub value: Option<i64>,
    /// The smallest true sum some legal order allows (absent counts as 0).
    #[serde(with = "super::wide")]
    pub lower: Sum,
    /// The largest true sum some legal order allows (absent counts as 0).
    #[serde(with = "super::wide")]
    pub upper: Sum,
    /// The states some legal order allows: absent, and the true sums.
    pub allowed: Values,
    /// The node that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl Overflow {
    /// The finding in words.
    pub fn finding(&self) -> String {
        let edge = match self.upper > Sum::from(i64::MAX) {
            true => format!("up to {}, past i64::MAX", self.upper),
            false => format!("down to {}, past i64::MIN", self.lower),
        };
        format!(
            "the true sum may reach {edge}: a 64-bit counter wraps (allowed {})",
            self.allowed
        )
    }
}

/// Adds `overflow` to those kept, trimming them now and then.
pub fn keep(overflows: &mut Vec<Overflow>, overflow: Overflow) {
    overflows.push(overflow);
    if overflows.len() >= 2 * OVERFLOWS_KEPT {
        trim(overflows);
    }
}

/// Keeps the earliest `OVERFLOWS_KEPT` overflows, earliest first.
pub fn trim(overflows: &mut Vec<Overflow>) {
    overflows.sort_by_key(|o| o.index);
    overflows.truncate(OVERFLOWS_KEPT);
}
