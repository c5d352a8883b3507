//! Where a run's nodes live and who plays its network faults: on 127.0.0.1 with the nodes'
//! own fault plane, or in network namespaces of the run's own with firewall rules.

use crate::api::invalid::unless;
use crate::api::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// How the bundled nodes are networked, and so who plays partitions and slow links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetMode {
    /// Every node on 127.0.0.1; each node drops or delays its own messages (`/admin/faults`).
    #[default]
    Loopback,
    /// Each node in a network namespace of its own on a bridge the run creates; partitions
    /// are nftables drop rules, slow links `tc` qdiscs. Needs root.
    Netns,
}

impl NetMode {
    /// The name used in workload files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            NetMode::Loopback => "loopback",
            NetMode::Netns => "netns",
        }
    }
}

impl fmt::Display for NetMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for NetMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "loopback" => Ok(NetMode::Loopback),
            "netns" => Ok(NetMode::Netns),
            _ => Err(format!(
                "unknown network mode `{s}`: expected `loopback` or `netns`"
            )),
        }
    }
}

/// The simulated network of `--sim` runs (the `[sim]` table): how long a message takes
/// each way, drawn uniformly, so that messages overtake one another; and how often a
/// message between nodes arrives twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimNetwork {
    /// The shortest one-way delay, ms.
    pub min_delay_ms: f64,
    /// The longest one-way delay, ms.
    pub max_delay_ms: f64,
    /// The share of node-to-node messages delivered a second time (0 to 1).
    pub duplicate: f64,
}

impl Default for SimNetwork {
    fn default() -> Self {
        SimNetwork {
            min_delay_ms: 0.1,
            max_delay_ms: 2.0,
            duplicate: 0.0,
        }
    }
}

impl SimNetwork {
    /// Checks the values, naming the field.
    pub fn validate(&self) -> Result<(), Invalid> {
        let delay = |ms: f64| (0.0..=10_000.0).contains(&ms);
        unless(
            !delay(self.min_delay_ms),
            "sim.min_delay_ms",
            "must be between 0 and 10000",
        )?;
        unless(
            !delay(self.max_delay_ms) || self.max_delay_ms < self.min_delay_ms,
            "sim.max_delay_ms",
            "must be between sim.min_delay_ms and 10000",
        )?;
        unless(
            !(0.0..=1.0).contains(&self.duplicate),
            "sim.duplicate",
            "must be between 0 and 1",
        )
    }
}

/// What run.json records of a `--net netns` run's network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// The names' common prefix: `ck<driver pid><two letters>`.
    pub tag: String,
    /// The bridge in the host's namespace.
    pub bridge: String,
    /// The bridge's subnet, such as `10.77.12.0/24`; the bridge holds `.1`.
    pub subnet: String,
    /// Each node's namespace and address, by node id.
    pub nodes: BTreeMap<String, NodePlace>,
    /// How slow links are played: `netem` delay or a `tbf` rate limit.
    pub slow_links: String,
}

/// Where one node of a `--net netns` run lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePlace {
    /// The network namespace.
    pub namespace: String,
    /// The node's address on the bridge.
    pub addr: Ipv4Addr,
    /// The host's end of the node's veth link.
    pub veth: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print_back_and_others_are_refused() {
        for mode in [NetMode::Loopback, NetMode::Netns] {
            assert_eq!(mode.as_str().parse::<NetMode>(), Ok(mode));
        }
        let err = "docker".parse::<NetMode>().expect_err("unknown");
        assert!(err.contains("docker") && err.contains("netns"), "{err}");
    }

    #[test]
    fn a_simulated_network_takes_sensible_delays_and_shares_only() {
        assert_eq!(SimNetwork::default().validate(), Ok(()));
        let bad = [
            (-1.0, 2.0, 0.0, "sim.min_delay_ms"),
            (3.0, 2.0, 0.0, "sim.max_delay_ms"),
            (0.0, f64::NAN, 0.0, "sim.max_delay_ms"),
            (0.0, 2.0, 1.5, "sim.duplicate"),
        ];
        for (min, max, duplicate, field) in bad {
            let sim = SimNetwork {
                min_delay_ms: min,
                max_delay_ms: max,
                duplicate,
            };
            assert_eq!(sim.validate().map_err(|e| e.field), Err(field));
        }
    }
}
