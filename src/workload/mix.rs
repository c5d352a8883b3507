//! What the clients do: the op mix, how keys are picked, and the access patterns.

use crate::api::invalid::{unless, Invalid};
use serde::{Deserialize, Serialize};

/// Shares of each kind of op; they need not add up to 1 (they are normalised).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mix {
    /// Increments (and decrements).
    pub add: f64,
    /// Reads of one counter.
    pub read: f64,
    /// Deletes.
    pub delete: f64,
    /// Partition scans.
    pub scan: f64,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            add: 0.8,
            read: 0.2,
            delete: 0.0,
            scan: 0.0,
        }
    }
}

impl Mix {
    /// Each kind of op with its share.
    pub fn shares(&self) -> [(OpKind, f64); 4] {
        [
            (OpKind::Add, self.add),
            (OpKind::Read, self.read),
            (OpKind::Delete, self.delete),
            (OpKind::Scan, self.scan),
        ]
    }

    /// Checks the shares.
    pub fn validate(&self) -> Result<(), Invalid> {
        let shares = self.shares().map(|(_, share)| share);
        unless(
            shares.iter().any(|s| !(s.is_finite() && *s >= 0.0))
                || shares.iter().sum::<f64>() <= 0.0,
            "mix",
            "shares must be 0 or more and not all 0",
        )
    }
}

/// The kinds of client op a workload mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// An increment or decrement of one counter.
    Add,
    /// A read of one counter.
    Read,
    /// A delete (its scope is the workload's).
    Delete,
    /// A read of a whole partition.
    Scan,
}

/// How ops pick among the workload's keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyDistribution {
    /// Every key equally often.
    #[default]
    Uniform,
    /// The first key gets `hot_share` of the ops, the others share the rest.
    Hot,
    /// Key i is picked with weight 1 / (i + 1)^`zipf_exponent`.
    Zipf,
}

/// The shape of the keys an op touches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// The workload's keys, as listed.
    #[default]
    Counters,
    /// The queue anti-pattern: each client adds new cells to the first key's partition,
    /// deletes its oldest live cell, and scans the partition from the head.
    Queue,
    /// The safe alternative: the key's cell is the current time bucket (`bucket_s`), so no
    /// counter is ever deleted.
    TimeBuckets,
}

impl Pattern {
    /// The name workload files use.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Counters => "counters",
            Pattern::Queue => "queue",
            Pattern::TimeBuckets => "time-buckets",
        }
    }
}
