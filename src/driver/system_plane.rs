//! The nemesis's plane on a real system's processes (etcd, Redis): kill -9 and restart,
//! SIGSTOP and SIGCONT; partitions and slow links as the run's network rules with
//! `--net netns`. Faults only the bundled nodes have are refused, not dropped. For Redis, a
//! kill or pause hits the primary the sentinels name at that moment, and a watcher records
//! every failover in the history.

use super::plane::{heal_network_links, Plane};
use super::recorder::Recorder;
use crate::api::FaultsUpdate;
use crate::cluster::Network;
use crate::systems::{redis, Members};
use crate::workload::nemesis::{Action, FaultKind};
use crate::workload::system::System;
use checkers::{Op, OpType, Process, F};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How often the watcher asks the sentinels for the primary.
const WATCH_EVERY: Duration = Duration::from_millis(200);

/// A real system's processes, as the nemesis sees them.
pub struct SystemPlane {
    system: System,
    members: Arc<Mutex<Members>>,
    /// The data members as `(id, host:port)`; sentinels are not faulted.
    nodes: Vec<(String, String)>,
    /// Redis's sentinels; none for etcd.
    sentinels: Vec<String>,
    network: Option<Arc<Network>>,
}

impl SystemPlane {
    /// The plane of `system`'s `members`, of which `nodes` are the data members; `sentinels`
    /// name Redis's primary; `network` plays partitions and slow links when there is one.
    pub fn new(
        system: System,
        members: Arc<Mutex<Members>>,
        nodes: Vec<(String, String)>,
        sentinels: Vec<String>,
        network: Option<Arc<Network>>,
    ) -> Self {
        SystemPlane {
            system,
            members,
            nodes,
            sentinels,
            network,
        }
    }

    /// The id of the primary the sentinels name now (Redis only).
    async fn primary(&self) -> Option<String> {
        if self.sentinels.is_empty() {
            return None;
        }
        let addr = redis::primary(&self.sentinels).await?;
        let found = self.nodes.iter().find(|(_, a)| *a == addr);
        found.map(|(id, _)| id.clone())
    }

    fn network(&self, what: &str) -> Result<&Network, String> {
        self.network
            .as_deref()
            .ok_or_else(|| format!("{what} on {} needs `--net netns`", self.system.as_str()))
    }
}

impl Plane for SystemPlane {
    async fn nodes(&self) -> Vec<String> {
        self.nodes.iter().map(|(id, _)| id.clone()).collect()
    }

    /// Only resuming, and clearing what is already clear, mean anything to a real system.
    async fn set_faults(&self, node: &str, update: &FaultsUpdate) -> Result<(), String> {
        if let Some(paused) = update.paused {
            self.pause(node, paused).await;
        }
        let asks_more = update.cut.as_ref().is_some_and(|c| !c.is_empty())
            || update.cut_to.as_ref().is_some_and(|c| !c.is_empty())
            || update.delay_ms.as_ref().is_some_and(|d| !d.is_empty())
            || update.clock_offset_ms.is_some_and(|ms| ms != 0);
        match asks_more {
            true => Err(format!("{} has no fault plane of ours", self.system)),
            false => Ok(()),
        }
    }

    async fn maintain(&self, _node: &str, kind: FaultKind) -> Result<(), String> {
        Err(format!(
            "{kind:?} is the bundled nodes' own; {} has none",
            self.system
        ))
    }

    async fn pause(&self, node: &str, paused: bool) {
        if let Err(e) = self.members.lock().await.pause(node, paused) {
            tracing::warn!(%node, error = %e, "nemesis: could not pause or resume");
        }
    }

    async fn kill(&self, node: &str, power_loss: bool) -> Result<u64, String> {
        if power_loss {
            return Err(format!("no power loss on {}", self.system));
        }
        self.members.lock().await.kill(node).await.map(|()| 0)
    }

    async fn restart(&self, node: &str) -> Result<(), String> {
        self.members.lock().await.restart(node).await
    }

    async fn dead(&self) -> Vec<String> {
        self.members.lock().await.dead()
    }

    async fn cut(&self, node: &str, cut: &BTreeSet<String>) -> Result<(), String> {
        let network = self.network("a partition")?;
        network.cut(node, cut).await.map_err(|e| e.to_string())
    }

    async fn cut_one_way(&self, node: &str, to: &BTreeSet<String>) -> Result<(), String> {
        let network = self.network("a one-way partition")?;
        network.cut_to(node, to).await.map_err(|e| e.to_string())
    }

    async fn slow(&self, node: &str, ms: u64) -> Result<(), String> {
        let network = self.network("a slow link")?;
        network.slow(node, ms).await.map_err(|e| e.to_string())
    }

    async fn heal_links(&self, node: &str) -> Result<(), String> {
        match &self.network {
            Some(network) => heal_network_links(network, node).await,
            None => Ok(()),
        }
    }

    /// On Redis, a kill or a pause hits the primary of the moment.
    async fn aim(&self, action: Action) -> Action {
        let primary = match &action {
            Action::Kill { .. } | Action::Pause { .. } => self.primary().await,
            _ => None,
        };
        match (action, primary) {
            (Action::Kill { .. }, Some(node)) => Action::Kill { node },
            (Action::Pause { .. }, Some(node)) => Action::Pause { node },
            (action, _) => action,
        }
    }
}

/// Records a `failover` in the history (the nemesis's process, `info`) each time the
/// primary the sentinels name changes, until `stop`.
pub async fn watch_failovers(
    plane: Arc<SystemPlane>,
    recorder: Arc<Recorder>,
    stop: Arc<AtomicBool>,
) {
    let mut last = plane.primary().await;
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(WATCH_EVERY).await;
        let now = plane.primary().await;
        if now.is_some() && now != last {
            let value = json!({ "from": last, "to": now });
            let op = Op::new(
                Process::nemesis(),
                OpType::Info,
                F::from("failover".to_string()),
                None,
                value,
            );
            if let Err(e) = recorder.record(op) {
                tracing::warn!(error = %e, "could not record a failover");
            }
            last = now;
        }
    }
}
