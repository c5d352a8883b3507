//! The node-to-node messages of the internal plane.

use crate::api::ConsistencyLevel;
use crate::node::core::cells::Partition;
use crate::node::core::raven::RavenCounter;
use serde::{Deserialize, Serialize};

/// The path of leading an increment ([`LeadRequest`]).
pub const LEAD: &str = "/internal/lead";
/// The path of applying a replicated write (a `Table` fragment).
pub const APPLY: &str = "/internal/apply";

/// `POST /internal/lead`: a coordinator asks a replica to lead an increment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeadRequest {
    /// The partition.
    pub partition: String,
    /// The cell.
    pub cell: String,
    /// What to add.
    pub delta: i64,
    /// The consistency level the leader waits for.
    pub cl: ConsistencyLevel,
    /// The coordinator's timestamp of the write, µs: the cell's timestamp, which decides it
    /// against row and partition deletions.
    pub timestamp: u64,
}

/// `GET /internal/read/{partition}`: one replica's version of a partition (or of one cell).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicaRead {
    /// The replica's merged view, purgeable tombstones left out.
    pub partition: Partition,
    /// Tombstones it went over.
    pub tombstones: u64,
}

/// A RavenDB counter's whole state, replicated (`POST /internal/raven` takes a list).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RavenWrite {
    /// `partition/cell`.
    pub key: String,
    /// The sender's state of it.
    pub counter: RavenCounter,
}
