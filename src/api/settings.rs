//! The cluster's knobs: the workload file's `[cluster]` table, passed to every node. Each has
//! Cassandra's name (or RavenDB's) and default in docs/nodes.md.

use super::consistency::ConsistencyLevel;
use super::invalid::{unless, Invalid};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Which system the bundled nodes behave like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Cassandra counters: shards, a leader per increment, tombstones, consistency levels.
    #[default]
    Cassandra,
    /// RavenDB counters: per-node portions, asynchronous replication, increment wins.
    Ravendb,
}

/// When the commit log reaches the disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum CommitlogSync {
    /// Synced before every write is acknowledged.
    Batch,
    /// Synced every so many ms: a process kill loses nothing acknowledged, a power loss the
    /// writes since the last sync.
    Periodic(u64),
    /// No commit log at all (nothing survives a restart but flushed segments).
    #[default]
    Off,
}

impl TryFrom<String> for CommitlogSync {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        match s.split_once(':') {
            None if s == "batch" => Ok(CommitlogSync::Batch),
            None if s == "off" => Ok(CommitlogSync::Off),
            Some(("periodic", ms)) => ms
                .parse()
                .ok()
                .filter(|ms| *ms > 0)
                .map(CommitlogSync::Periodic)
                .ok_or_else(|| format!("bad period in `{s}`: expected periodic:<ms>, ms > 0")),
            _ => Err(format!(
                "unknown commitlog_sync `{s}`: expected batch, periodic:<ms> or off"
            )),
        }
    }
}

impl From<CommitlogSync> for String {
    fn from(sync: CommitlogSync) -> Self {
        match sync {
            CommitlogSync::Batch => "batch".to_string(),
            CommitlogSync::Periodic(ms) => format!("periodic:{ms}"),
            CommitlogSync::Off => "off".to_string(),
        }
    }
}

/// Every node's settings; every field has the default shown in `Default`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSettings {
    /// Cassandra or RavenDB behaviour.
    pub mode: Mode,
    /// Replication factor (Cassandra's keyspace `replication_factor`).
    pub rf: usize,
    /// Consistency level of writes that name none.
    pub default_write_cl: ConsistencyLevel,
    /// Consistency level of reads that name none.
    pub default_read_cl: ConsistencyLevel,
    /// `counter_write_request_timeout`, ms: past it the coordinator answers 504.
    pub write_timeout_ms: u64,
    /// `read_request_timeout`, ms.
    pub read_timeout_ms: u64,
    /// The table's `speculative_retry`, ms: a read asks the remaining replicas when the first
    /// have not answered by then (Cassandra's default is the 99th percentile of read latency).
    pub speculative_retry_ms: u64,
    /// `gc_grace_seconds`.
    pub gc_grace_s: f64,
    /// Whether the counter cache is on (`counter_cache_size` > 0; on by default, as in Cassandra).
    pub counter_cache: bool,
    /// Counters the cache holds (Cassandra sizes it in MiB instead).
    pub counter_cache_capacity: usize,
    /// `tombstone_warn_threshold`.
    pub tombstone_warn_threshold: u64,
    /// `tombstone_failure_threshold`.
    pub tombstone_failure_threshold: u64,
    /// `commitlog_sync`: `batch`, `periodic:<ms>` or `off`.
    pub commitlog_sync: CommitlogSync,
    /// `commitlog_total_space`, MiB: a write that takes the commit log past it flushes the
    /// memtable (which empties the log), so the log never grows without bound.
    pub commitlog_total_space_mb: u64,
    /// Flush the memtable every so many seconds (0: only on request).
    pub flush_interval_s: f64,
    /// Compact every so many seconds (0: only on request).
    pub compaction_interval_s: f64,
    /// Run anti-entropy repair every so many seconds (0: only on request).
    pub repair_interval_s: f64,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            mode: Mode::Cassandra,
            rf: 3,
            default_write_cl: ConsistencyLevel::Quorum,
            default_read_cl: ConsistencyLevel::Quorum,
            write_timeout_ms: 5_000,
            read_timeout_ms: 5_000,
            speculative_retry_ms: 50,
            gc_grace_s: 864_000.0,
            counter_cache: true,
            counter_cache_capacity: 100_000,
            tombstone_warn_threshold: 1_000,
            tombstone_failure_threshold: 100_000,
            commitlog_sync: CommitlogSync::Periodic(10_000),
            commitlog_total_space_mb: 8_192,
            flush_interval_s: 0.0,
            compaction_interval_s: 0.0,
            repair_interval_s: 0.0,
        }
    }
}

impl ClusterSettings {
    /// Checks values that parse but make no sense, naming the field.
    pub fn validate(&self, nodes: usize) -> Result<(), Invalid> {
        let seconds = |s: f64| !(s.is_finite() && s >= 0.0);
        unless(
            self.rf == 0 || self.rf > nodes,
            "cluster.rf",
            format!("must be between 1 and the number of nodes ({nodes})"),
        )?;
        unless(
            self.commitlog_total_space_mb == 0,
            "cluster.commitlog_total_space_mb",
            "must be at least 1",
        )?;
        unless(
            self.write_timeout_ms == 0,
            "cluster.write_timeout_ms",
            "must be at least 1",
        )?;
        unless(
            self.read_timeout_ms == 0,
            "cluster.read_timeout_ms",
            "must be at least 1",
        )?;
        let zero_or_more = "must be 0 or more seconds";
        unless(seconds(self.gc_grace_s), "cluster.gc_grace_s", zero_or_more)?;
        unless(
            seconds(self.flush_interval_s),
            "cluster.flush_interval_s",
            zero_or_more,
        )?;
        unless(
            seconds(self.compaction_interval_s),
            "cluster.compaction_interval_s",
            zero_or_more,
        )?;
        unless(
            seconds(self.repair_interval_s),
            "cluster.repair_interval_s",
            zero_or_more,
        )?;
        unless(
            self.tombstone_warn_threshold > self.tombstone_failure_threshold,
            "cluster.tombstone_warn_threshold",
            "must not exceed the failure threshold",
        )
    }

    /// The write timeout.
    pub fn write_timeout(&self) -> Duration {
        Duration::from_millis(self.write_timeout_ms)
    }

    /// The read timeout.
    pub fn read_timeout(&self) -> Duration {
        Duration::from_millis(self.read_timeout_ms)
    }
}
