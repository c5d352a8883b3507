//! A running node's state, shared by its request handlers: settings, the store, the commit
//! log, RavenDB's portions, the counter locks, the peers, the faults and the clock.

use super::errors::ApiError;
use super::messages::ReplicaRead;
use super::peers::Peers;
use super::transport::Transport;
use crate::api::{ClusterSettings, Faults};
use crate::node::core::cells::Table;
use crate::node::core::clock::{self, Clock};
use crate::node::core::commitlog::CommitLog;
use crate::node::core::raven::RavenStore;
use crate::node::core::ring;
use crate::node::core::store::{Store, StoreSettings};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// What a node's state is made of.
pub struct NodeParts {
    /// The node's id, such as `n1`.
    pub id: String,
    /// The cluster's settings.
    pub settings: ClusterSettings,
    /// The store, recovered from the data folder.
    pub store: Store,
    /// The commit log, opened for appending.
    pub log: CommitLog,
    /// How many segments the data folder held.
    pub segments: usize,
    /// The other nodes by id, as `host:port`.
    pub peers: BTreeMap<String, String>,
    /// How messages reach the peers.
    pub transport: Arc<dyn Transport>,
    /// Where the time comes from.
    pub clock: Arc<dyn Clock>,
}

/// Striped counter locks, as Cassandra's `concurrent_counter_writes` × 1024.
const STRIPES: usize = 1024;

/// A running node's state, shared by its request handlers.
pub struct Node {
    pub(super) id: String,
    settings: RwLock<ClusterSettings>,
    store: Mutex<Store>,
    raven: Mutex<RavenStore>,
    log: Mutex<CommitLog>,
    pub(super) peers: Arc<Peers>,
    pub(super) faults: Arc<RwLock<Faults>>,
    clock: Arc<dyn Clock>,
    stripes: Vec<tokio::sync::Mutex<()>>,
    segments: AtomicUsize,
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
            raven: Mutex::new(RavenStore::new(&parts.id)),
            id: parts.id,
            peers: Arc::new(peers),
            faults,
            clock: parts.clock,
            store: Mutex::new(parts.store),
            log: Mutex::new(parts.log),
            stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
            segments: AtomicUsize::new(parts.segments + 1),
            settings: RwLock::new(parts.settings),
        }
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
        self.store().set_settings(StoreSettings::of(&settings));
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
    }

    /// The Cassandra-mode store.
    pub(super) fn store(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }

    /// The RavenDB-mode store.
    pub(super) fn raven(&self) -> MutexGuard<'_, RavenStore> {
        lock(&self.raven)
    }

    /// The lock stripe of one counter.
    pub(super) fn stripe(&self, key: &str) -> &tokio::sync::Mutex<()> {
        &self.stripes[ring::token(key) as usize % STRIPES]
    }

    /// Logs a write, then applies it: a write is never acknowledged before it is logged.
    pub(super) fn apply_local(&self, fragment: &Table) -> Result<(), ApiError> {
        lock(&self.log)
            .append(fragment)
            .map_err(|e| ApiError::Internal(format!("commit log: {e}")))?;
        self.store().apply(fragment);
        Ok(())
    }

    /// Leads an increment locally: logged and applied under the store lock.
    pub(super) fn lead_local(
        &self,
        partition: &str,
        cell: &str,
        delta: i64,
    ) -> Result<Table, ApiError> {
        let now = self.now();
        let fragment = self.store().lead_add(partition, cell, delta, now);
        lock(&self.log)
            .append(&fragment)
            .map_err(|e| ApiError::Internal(format!("commit log: {e}")))?;
        Ok(fragment)
    }

    /// Flushes the memtable into a segment on disk; returns whether there was anything.
    pub(super) fn flush(&self) -> std::io::Result<bool> {
        let mut store = self.store();
        let Some(segment) = store.flush() else {
            return Ok(false);
        };
        let number = self.segments.fetch_add(1, Ordering::Relaxed);
        lock(&self.log).flushed(&segment, number)?;
        Ok(true)
    }

    /// Flushes, then compacts every segment into one; returns the tombstones purged.
    pub(super) fn compact(&self) -> std::io::Result<usize> {
        self.flush()?;
        let now = self.now();
        let mut store = self.store();
        let (segment, purged) = store.compact(now);
        lock(&self.log).compacted(&segment)?;
        Ok(purged)
    }

    /// Syncs what periodic commit log mode holds.
    pub(super) fn sync_log(&self) {
        if let Err(e) = lock(&self.log).sync() {
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
        let scanned = self.store().read(partition, cell, now);
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
