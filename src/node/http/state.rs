//! A running node's state, shared by its request handlers: settings, the store, the commit
//! log, RavenDB's portions, the counter locks, the peers, the faults and the clock.

use super::errors::ApiError;
use super::messages::ReplicaRead;
use super::peers::Peers;
use super::transport::Transport;
use crate::api::{ClusterSettings, Faults};
use crate::node::core::cells::Table;
use crate::node::core::clock::{self, Clock};
use crate::node::core::durable::Durable;
use crate::node::core::raven_journal::RavenDurable;
use crate::node::core::ring;
use crate::node::core::store::StoreSettings;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// What a node's state is made of.
pub struct NodeParts {
    /// The node's id, such as `n1`.
    pub id: String,
    /// The cluster's settings.
    pub settings: ClusterSettings,
    /// The store and its commit log, recovered from the data folder.
    pub data: Durable,
    /// The RavenDB-mode store and its journal, recovered from the data folder.
    pub raven: RavenDurable,
    /// The other nodes by id, as `host:port`.
    pub peers: BTreeMap<String, String>,
    /// How messages reach the peers.
    pub transport: Arc<dyn Transport>,
    /// Where the time comes from.
    pub clock: Arc<dyn Clock>,
    /// Seeds the node's random choices (the leader of an increment).
    pub seed: u64,
    /// The cluster's secret, if it has one.
    pub secret: Option<String>,
    /// Disk work runs in place instead of on the blocking pool (a simulation: one thread,
    /// in a fixed order).
    pub inline_io: bool,
}

/// Striped counter locks, as Cassandra's `concurrent_counter_writes` × 1024.
const STRIPES: usize = 1024;

/// A running node's state, shared by its request handlers.
pub struct Node {
    pub(super) id: String,
    settings: RwLock<ClusterSettings>,
    data: Mutex<Durable>,
    raven: Mutex<RavenDurable>,
    rng: Mutex<StdRng>,
    pub(super) peers: Arc<Peers>,
    pub(super) faults: Arc<RwLock<Faults>>,
    /// Wakes the RavenDB replication loops when something changed.
    pub(super) replication: tokio::sync::Notify,
    clock: Arc<dyn Clock>,
    stripes: Vec<tokio::sync::Mutex<()>>,
    /// The cluster's secret, required on the internal and admin planes.
    pub(super) secret: Option<String>,
    inline_io: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Node {
    /// A node's state: `store` and `log` as recovered from its data folder, `segments`
    /// the number of segments found there, peers reached through `transport`.
    pub fn new(parts: NodeParts) -> Self {
        let faults = Arc::new(RwLock::new(Faults::default()));
        let timeout = parts
            .settings
            .write_timeout()
            .max(parts.settings.read_timeout());
        let peers = Peers::new(
            &parts.id,
            parts.peers,
            timeout,
            faults.clone(),
            parts.transport,
        );
        Node {
            raven: Mutex::new(parts.raven),
            id: parts.id,
            peers: Arc::new(peers),
            faults,
            replication: tokio::sync::Notify::new(),
            clock: parts.clock,
            data: Mutex::new(parts.data),
            rng: Mutex::new(StdRng::seed_from_u64(parts.seed)),
            stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
            settings: RwLock::new(parts.settings),
            secret: parts.secret,
            inline_io: parts.inline_io,
        }
    }

    /// Runs disk work off the async threads (in place in a simulation); `None` if it panicked.
    pub(super) async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Node) -> T + Send + 'static,
    ) -> Option<T> {
        if self.inline_io {
            return Some(work(self));
        }
        let node = self.clone();
        tokio::task::spawn_blocking(move || work(&node)).await.ok()
    }

    /// Stops the tasks carrying this node's messages, as its process dying would (a
    /// simulated kill; a real one ends the process).
    pub fn stop(&self) {
        self.peers.stop();
    }

    /// This node's clock, µs (the system clock plus the fault plane's offset).
    pub(super) fn now(&self) -> u64 {
        let offset_ms = self.faults().clock_offset_ms;
        clock::offset(self.clock.now_micros(), offset_ms)
    }

    /// The faults in force.
    pub(super) fn faults(&self) -> Faults {
        self.faults
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current settings.
    pub(super) fn settings(&self) -> ClusterSettings {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Changes the settings at run time.
    pub(super) fn set_settings(&self, settings: ClusterSettings) {
        self.data().set_settings(StoreSettings::of(&settings));
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
    }

    /// The Cassandra-mode store and its commit log.
    pub(super) fn data(&self) -> MutexGuard<'_, Durable> {
        lock(&self.data)
    }

    /// The RavenDB-mode store and its journal.
    pub(super) fn raven(&self) -> MutexGuard<'_, RavenDurable> {
        lock(&self.raven)
    }

    /// One of `choices`, picked by the node's seeded source; `None` when there are none.
    pub(super) fn pick<'a, T>(&self, choices: &'a [T]) -> Option<&'a T> {
        choices.choose(&mut *lock(&self.rng))
    }

    /// `items` in an order drawn from the node's seeded source.
    pub(super) fn shuffle<T>(&self, items: &mut [T]) {
        items.shuffle(&mut *lock(&self.rng));
    }

    /// The lock stripe of one counter.
    pub(super) fn stripe(&self, key: &str) -> &tokio::sync::Mutex<()> {
        &self.stripes[ring::token(key) as usize % STRIPES]
    }

    /// Logs a write and applies it, in one step: a write is never acknowledged before it is
    /// logged, and no flush falls between the two.
    pub(super) fn apply_local(&self, fragment: &Table) -> Result<(), ApiError> {
        self.data()
            .apply(fragment)
            .map_err(|e| ApiError::Internal(format!("commit log: {e}")))
    }

    /// Leads an increment locally: this node's clock for the shard, the coordinator's
    /// `timestamp` for the cell; logged and applied in one step.
    pub(super) fn lead_local(
        &self,
        partition: &str,
        cell: &str,
        delta: i64,
        timestamp: u64,
    ) -> Result<Table, ApiError> {
        let now = self.now();
        self.data()
            .lead_add(partition, cell, delta, now, timestamp)
            .map_err(|e| ApiError::Internal(format!("commit log: {e}")))
    }

    /// Flushes the memtable into a segment on disk; returns whether there was anything.
    pub(super) fn flush(&self) -> std::io::Result<bool> {
        self.data().flush()
    }

    /// Flushes, then compacts every segment into one; returns the tombstones purged.
    pub(super) fn compact(&self) -> std::io::Result<usize> {
        let now = self.now();
        self.data().compact(now)
    }

    /// Moves the commit log's replay marker (periodic mode).
    pub(super) fn mark_log(&self) {
        if let Err(e) = self.data().mark() {
            tracing::error!(error = %e, "commit log mark failed");
        }
    }

    /// Syncs the commit log and closes it: a write that comes later is refused, never
    /// acknowledged (a node shutting down).
    pub(super) fn close_log(&self) {
        if let Err(e) = self.data().close() {
            tracing::error!(error = %e, "commit log sync at shutdown failed");
        }
    }

    /// Syncs the commit log to the disk.
    pub(super) fn sync_log(&self) {
        if let Err(e) = self.data().sync() {
            tracing::error!(error = %e, "commit log sync failed");
        }
    }

    /// This replica's read: its merged version, or the failure a tombstone flood causes.
    pub(super) fn replica_read(
        &self,
        partition: &str,
        cell: Option<&str>,
    ) -> Result<ReplicaRead, ApiError> {
        let now = self.now();
        let threshold = self.settings().tombstone_failure_threshold;
        let scanned = self.data().store().read(partition, cell, now);
        if scanned.tombstones > threshold {
            tracing::warn!(
                partition,
                tombstones = scanned.tombstones,
                "read aborted: tombstone_overwhelming"
            );
            return Err(ApiError::TombstoneOverwhelming {
                scanned: scanned.tombstones,
                threshold,
            });
        }
        Ok(ReplicaRead {
            partition: scanned.partition,
            tombstones: scanned.tombstones,
        })
    }
}
