//! What a delete removes, as in CQL: the one delete-scope type of the workload, the wire,
//! the history and the node's tombstones.

use serde::{Deserialize, Serialize};

/// What a delete removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeleteScope {
    /// `DELETE FROM t WHERE pk = ? AND ck = ?`: shadows counter cells not newer than it.
    #[default]
    Row,
    /// `DELETE views FROM t WHERE ...`: beats the counter cell whatever the timestamps.
    Column,
    /// `DELETE FROM t WHERE pk = ?`: every counter of the partition.
    Partition,
}

impl DeleteScope {
    /// The name used in workload files, URLs and histories.
    pub fn as_str(self) -> &'static str {
        match self {
            DeleteScope::Row => "row",
            DeleteScope::Column => "column",
            DeleteScope::Partition => "partition",
        }
    }
}
