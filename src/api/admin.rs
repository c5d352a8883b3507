//! The JSON bodies of the admin plane: health, peers, the start-up line and the faults.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

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
pub struct PeerList {
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

/// The answer to `POST /admin/flush`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flushed {
    /// Whether the memtable held anything to flush.
    pub flushed: bool,
}

/// The answer to `POST /admin/compact`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Compacted {
    /// Tombstones the compaction purged.
    pub purged_tombstones: usize,
}

/// The answer to `POST /admin/repair`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repaired {
    /// Peers the node repaired with.
    pub repaired_with: usize,
}

/// The faults in force on one node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Peers this node neither sends to nor accepts from.
    pub cut: BTreeSet<String>,
    /// Peers this node's messages to are lost, its answers to them too, while theirs still
    /// arrive and are acted on (a one-way partition).
    pub cut_to: BTreeSet<String>,
    /// Extra latency before each message to a peer, ms.
    pub delay_ms: BTreeMap<String, u64>,
    /// This node's clock offset, ms (positive: ahead).
    pub clock_offset_ms: i64,
    /// Whether request processing is paused.
    pub paused: bool,
}

/// A partial change to the faults: the fields given replace the current ones.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultsUpdate {
    /// Replaces the cut peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<BTreeSet<String>>,
    /// Replaces the peers cut one way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_to: Option<BTreeSet<String>>,
    /// Replaces the per-peer delays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<BTreeMap<String, u64>>,
    /// Replaces the clock offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<i64>,
    /// Pauses or resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

impl Faults {
    /// Applies a partial change.
    pub fn update(&mut self, update: FaultsUpdate) {
        if let Some(cut) = update.cut {
            self.cut = cut;
        }
        if let Some(cut_to) = update.cut_to {
            self.cut_to = cut_to;
        }
        if let Some(delay) = update.delay_ms {
            self.delay_ms = delay;
        }
        if let Some(offset) = update.clock_offset_ms {
            self.clock_offset_ms = offset;
        }
        if let Some(paused) = update.paused {
            self.paused = paused;
        }
    }

    /// Whether this node's messages to `peer` are lost (cut both ways or one way).
    pub fn sends_nothing_to(&self, peer: &str) -> bool {
        self.cut.contains(peer) || self.cut_to.contains(peer)
    }

    /// The latency to add before a message to `peer`.
    pub fn delay_to(&self, peer: &str) -> Duration {
        Duration::from_millis(self.delay_ms.get(peer).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_replaces_only_what_it_names_and_leaves_out_what_it_does_not() {
        let mut f = Faults::default();
        f.update(FaultsUpdate {
            cut: Some(["n2".to_string()].into()),
            clock_offset_ms: Some(60_000),
            ..FaultsUpdate::default()
        });
        f.update(FaultsUpdate {
            paused: Some(true),
            ..FaultsUpdate::default()
        });
        assert!(f.cut.contains("n2") && f.paused && f.clock_offset_ms == 60_000);
        assert!(f.sends_nothing_to("n2") && !f.sends_nothing_to("n3"));
        f.update(FaultsUpdate {
            cut_to: Some(["n3".to_string()].into()),
            ..FaultsUpdate::default()
        });
        assert!(f.sends_nothing_to("n3") && f.cut.contains("n2"));
        let body = serde_json::to_value(FaultsUpdate {
            paused: Some(false),
            ..FaultsUpdate::default()
        })
        .expect("serializes");
        assert_eq!(body, serde_json::json!({"paused": false}));
    }
}
