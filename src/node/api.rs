//! The JSON bodies of the node HTTP API, shared by the node and the clients that call it.

use super::cells::Partition;
use super::consistency::ConsistencyLevel;
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

/// The scope a client may name on a cell delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeleteScope {
    /// A row delete.
    Row,
    /// A column delete.
    Column,
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
}

/// `GET /internal/read/{partition}`: one replica's version of a partition (or of one cell).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicaRead {
    /// The replica's merged view, purgeable tombstones left out.
    pub partition: Partition,
    /// Tombstones it went over.
    pub tombstones: u64,
}

/// An empty acknowledgement.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ack {}

/// `GET /admin/health`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Health {
    /// The node's id.
    pub id: String,
    /// The peers it knows.
    pub peers: BTreeMap<String, String>,
}

/// `PUT /admin/peers`: the other replicas, by id, as `host:port`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peers {
    /// Peer addresses by node id.
    pub peers: BTreeMap<String, String>,
}

/// The line a node prints on stdout once it listens, so its starter learns the port.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Listening {
    /// The node's id.
    pub id: String,
    /// The address it bound, `127.0.0.1:PORT`.
    pub addr: String,
}

/// A counter's key: a partition and a cell, written `partition/cell` in histories.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CounterKey {
    /// The partition (a CQL partition key).
    pub partition: String,
    /// The cell within it (a CQL clustering key).
    pub cell: String,
}

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad counter key `{key}`: {reason}")]
pub struct KeyError {
    /// The key as given.
    pub key: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl CounterKey {
    /// Checks a partition and a cell taken from a request path.
    pub fn new(partition: &str, cell: &str) -> Result<Self, KeyError> {
        let key = format!("{partition}/{cell}");
        let reason = if partition.is_empty() || cell.is_empty() {
            Some("partition and cell must not be empty")
        } else if partition.contains('/') || cell.contains('/') {
            Some("partition and cell must not contain `/`")
        } else if key.len() > 512 {
            Some("longer than 512 bytes")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(KeyError { key, reason }),
            None => Ok(CounterKey {
                partition: partition.to_string(),
                cell: cell.to_string(),
            }),
        }
    }

    /// The URL of this counter under `prefix` (such as `["v1", "counters"]`) on `addr`.
    pub fn url(&self, addr: &str, prefix: &[&str]) -> reqwest::Url {
        let mut url = reqwest::Url::parse(&format!("http://{addr}/"))
            .unwrap_or_else(|_| reqwest::Url::parse("http://127.0.0.1/").expect("static URL"));
        if let Ok(mut segments) = url.path_segments_mut() {
            segments
                .pop_if_empty()
                .extend(prefix)
                .push(&self.partition)
                .push(&self.cell);
        }
        url
    }
}

impl std::str::FromStr for CounterKey {
    type Err = KeyError;

    fn from_str(key: &str) -> Result<Self, Self::Err> {
        match key.split_once('/') {
            Some((partition, cell)) => CounterKey::new(partition, cell),
            None => Err(KeyError {
                key: key.to_string(),
                reason: "expected `partition/cell`",
            }),
        }
    }
}

impl std::fmt::Display for CounterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.partition, self.cell)
    }
}
