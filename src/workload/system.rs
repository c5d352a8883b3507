//! Which system a run tests: the bundled counter nodes, or a real etcd or Redis cluster the
//! run starts from the binaries on PATH; and what each of them can be asked to do.

use super::nemesis::FaultKind;
use super::net::NetMode;
use crate::api::invalid::{unless, Invalid};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The system under test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    /// The bundled counter nodes (Cassandra or RavenDB counters).
    #[default]
    Bundled,
    /// An etcd cluster (Raft); counters by compare-and-swap transactions.
    Etcd,
    /// Redis with replicas and Sentinel; counters by `INCRBY`.
    Redis,
}

impl System {
    /// The name used in workload files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            System::Bundled => "bundled",
            System::Etcd => "etcd",
            System::Redis => "redis",
        }
    }

    /// The programs a run of this system starts, each with the Debian package holding it.
    pub fn programs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            System::Bundled => &[],
            System::Etcd => &[("etcd", "etcd-server")],
            System::Redis => &[
                ("redis-server", "redis-server"),
                ("redis-sentinel", "redis-sentinel"),
            ],
        }
    }

    /// Why this system cannot have `fault` on network `net`; none when it can.
    pub fn refuses(self, fault: FaultKind, net: NetMode) -> Option<String> {
        use FaultKind::*;
        let name = self.as_str();
        match (self, fault) {
            (System::Bundled, _) | (_, Kill | Pause) => None,
            (_, PartitionOne | PartitionHalves | Bridge | PartitionOneWay | Slow)
                if net == NetMode::Netns =>
            {
                None
            }
            (_, PartitionOne | PartitionHalves | Bridge | PartitionOneWay | Slow) => Some(format!(
                "{name} has no fault plane of ours: partitions and slow links need `--net netns` (as root)"
            )),
            (_, PowerLoss) => Some(format!(
                "{name} keeps its own files: the run cannot lose what it did not sync (use `kill`)"
            )),
            (_, ClockBump | ClockStrobe) => Some(format!(
                "{name} reads the machine's clock, which a run does not move"
            )),
            (_, Flush | Compact | Repair) => Some(format!(
                "flush, compact and repair are the bundled nodes' own; {name} has no such call"
            )),
        }
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for System {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bundled" => Ok(System::Bundled),
            "etcd" => Ok(System::Etcd),
            "redis" => Ok(System::Redis),
            _ => Err(format!(
                "unknown system `{s}`: expected `bundled`, `etcd` or `redis`"
            )),
        }
    }
}

/// How a run talks to etcd (the `[etcd]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EtcdSpec {
    /// Reads with `serializable=true`: answered by the member asked, from its own state,
    /// which may be stale; otherwise linearizable reads (etcd's default).
    pub serializable_reads: bool,
    /// How many times an increment retries its compare-and-swap after a conflict before it
    /// fails (certainly not applied).
    pub cas_retries: u32,
}

impl Default for EtcdSpec {
    fn default() -> Self {
        EtcdSpec {
            serializable_reads: false,
            cas_retries: 50,
        }
    }
}

/// How a run sets up Redis and Sentinel (the `[redis]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedisSpec {
    /// Sentinels watching the primary.
    pub sentinels: usize,
    /// Sentinel's `down-after-milliseconds`: how long the primary may be silent before a
    /// sentinel thinks it down.
    pub down_after_ms: u64,
    /// Sentinel's `failover-timeout`, ms.
    pub failover_timeout_ms: u64,
    /// After each write, `WAIT` for this many replicas to acknowledge it (0: no `WAIT`,
    /// Redis's default of asynchronous replication).
    pub wait_replicas: u32,
}

impl Default for RedisSpec {
    fn default() -> Self {
        RedisSpec {
            sentinels: 3,
            down_after_ms: 1_000,
            failover_timeout_ms: 5_000,
            wait_replicas: 0,
        }
    }
}

impl RedisSpec {
    /// Checks the numbers against a cluster of `nodes` Redis processes.
    pub fn validate(&self, nodes: usize) -> Result<(), Invalid> {
        unless(
            self.sentinels == 0 || self.sentinels > 9,
            "redis.sentinels",
            "must be between 1 and 9",
        )?;
        unless(
            self.down_after_ms < 100,
            "redis.down_after_ms",
            "must be at least 100",
        )?;
        unless(
            self.failover_timeout_ms < 100,
            "redis.failover_timeout_ms",
            "must be at least 100",
        )?;
        unless(
            self.wait_replicas as usize >= nodes.max(1),
            "redis.wait_replicas",
            "must be below the number of nodes (the replicas)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        for s in [System::Bundled, System::Etcd, System::Redis] {
            assert_eq!(s.as_str().parse::<System>(), Ok(s));
        }
        let err = "mysql".parse::<System>().expect_err("unknown");
        assert!(err.contains("mysql"), "{err}");
    }
}
