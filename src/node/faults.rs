//! The node's fault plane: traffic cut to and from named peers, latency per peer, a clock
//! offset, and a pause of request processing, all changeable at run time.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The faults in force on one node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Peers this node neither sends to nor accepts from.
    pub cut: BTreeSet<String>,
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
    pub cut: Option<BTreeSet<String>>,
    /// Replaces the per-peer delays.
    pub delay_ms: Option<BTreeMap<String, u64>>,
    /// Replaces the clock offset.
    pub clock_offset_ms: Option<i64>,
    /// Pauses or resumes.
    pub paused: Option<bool>,
}

impl Faults {
    /// Applies a partial change.
    pub fn update(&mut self, update: FaultsUpdate) {
        if let Some(cut) = update.cut {
            self.cut = cut;
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

    /// This node's time in µs since the epoch: the system clock plus the offset.
    pub fn now_micros(&self) -> u64 {
        let system = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        system
            .saturating_add(self.clock_offset_ms.saturating_mul(1_000))
            .max(0) as u64
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
    fn an_update_replaces_only_what_it_names_and_the_offset_moves_the_clock() {
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
        assert!(f.cut.contains("n2") && f.paused);
        let ahead = f.now_micros();
        f.clock_offset_ms = 0;
        let now = f.now_micros();
        assert!(ahead >= now + 59_000_000, "{ahead} vs {now}");
    }
}
