//! The JSON bodies of the data plane: what clients send and what nodes answer.

use super::consistency::ConsistencyLevel;
use super::scope::DeleteScope;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `POST /v1/counters/{partition}/{cell}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddRequest {
    /// What to add; may be negative.
    pub delta: i64,
    /// Consistency level; QUORUM when left out.
    #[serde(default)]
    pub cl: Option<ConsistencyLevel>,
}

/// The answer to an applied add or delete.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddResponse {
    /// The coordinator that answered.
    pub node: String,
}

/// `?cl=...` on reads and deletes, `&scope=row|column` on cell deletes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClQuery {
    /// Consistency level; the cluster's default when left out.
    #[serde(default)]
    pub cl: Option<ConsistencyLevel>,
    /// `row` (default) or `column`, for cell deletes.
    #[serde(default)]
    pub scope: Option<DeleteScope>,
    /// One cell of the partition, on internal reads.
    #[serde(default)]
    pub cell: Option<String>,
}

/// The answer to a read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadResponse {
    /// The count, or null when the counter does not exist.
    pub value: Option<i64>,
    /// Tombstones the read scanned (the most any contacted replica went over).
    pub tombstones: u64,
    /// The coordinator that answered.
    pub node: String,
    /// Warnings, such as going over the tombstone warn threshold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The answer to a partition scan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanResponse {
    /// Each live counter of the partition by cell name.
    pub cells: BTreeMap<String, i64>,
    /// Tombstones the scan went over.
    pub tombstones: u64,
    /// The coordinator that answered.
    pub node: String,
    /// Warnings, such as going over the tombstone warn threshold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// A stable code: `write_timeout`, `unavailable`, `bad_request`, ...
    pub error: String,
    /// What happened, for people.
    pub message: String,
    /// Replicas that acknowledged, for timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<usize>,
    /// Replicas the consistency level needed, for timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_for: Option<usize>,
}

/// An empty acknowledgement.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ack {}
