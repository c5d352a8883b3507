//! What the nemesis needs of a cluster to play its faults: the nodes' fault planes and their
//! processes. Real processes (with or without network namespaces), someone else's service
//! and a simulation each implement it; the nemesis itself is the same for all.

use crate::api::{AdminClient, FaultsUpdate};
use crate::cluster::{Cluster, Network};
use crate::workload::nemesis::{Action, FaultKind};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Mutex;

/// The cluster a nemesis plays its faults on.
pub trait Plane: Send + Sync + 'static {
    /// The nodes' ids, in order.
    fn nodes(&self) -> impl Future<Output = Vec<String>> + Send;

    /// Changes a node's faults (`PUT /admin/faults`); the fields given replace the node's.
    fn set_faults(
        &self,
        node: &str,
        update: &FaultsUpdate,
    ) -> impl Future<Output = Result<(), String>> + Send;

    /// Asks a node to flush, compact or repair now.
    fn maintain(
        &self,
        node: &str,
        kind: FaultKind,
    ) -> impl Future<Output = Result<(), String>> + Send;

    /// Pauses a node as SIGSTOP does, or resumes it.
    fn pause(&self, node: &str, paused: bool) -> impl Future<Output = ()> + Send;

    /// Kills a node as SIGKILL does; with `power_loss` its commit log also loses what was
    /// not synced to the disk. Returns the bytes of log lost; an error when it cannot.
    fn kill(
        &self,
        node: &str,
        power_loss: bool,
    ) -> impl Future<Output = Result<u64, String>> + Send;

    /// Starts a killed node again on its data folder.
    fn restart(&self, node: &str) -> impl Future<Output = Result<(), String>> + Send;

    /// The nodes killed and not started again.
    fn dead(&self) -> impl Future<Output = Vec<String>> + Send;

    /// Makes `cut` the set of nodes `node` cannot exchange messages with.
    fn cut(
        &self,
        node: &str,
        cut: &BTreeSet<String>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        cut_through_faults(self, node, cut, false)
    }

    /// Makes `to` the set of nodes that `node`'s messages, and its answers, never reach,
    /// while theirs still reach it.
    fn cut_one_way(
        &self,
        node: &str,
        to: &BTreeSet<String>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        cut_through_faults(self, node, to, true)
    }

    /// Delays every message to and from `node` by `ms` (0 restores its links).
    fn slow(&self, node: &str, ms: u64) -> impl Future<Output = Result<(), String>> + Send {
        slow_through_faults(self, node, ms)
    }

    /// The fault to play for `action` as planned: by default the same; a plane may aim it
    /// at another node (Redis: a kill or pause hits the primary of the moment).
    fn aim(&self, action: Action) -> impl Future<Output = Action> + Send {
        async { action }
    }

    /// Restores `node`'s links where they are played outside its fault plane (which the
    /// heal resets on its own); nothing to do by default.
    fn heal_links(&self, node: &str) -> impl Future<Output = Result<(), String>> + Send {
        let _ = node;
        async { Ok(()) }
    }
}

/// A partition through the nodes' own fault plane: `node` drops messages to and from `cut`,
/// or with `one_way` its messages (and answers) to them alone.
async fn cut_through_faults<P: Plane + ?Sized>(
    plane: &P,
    node: &str,
    cut: &BTreeSet<String>,
    one_way: bool,
) -> Result<(), String> {
    let update = match one_way {
        true => FaultsUpdate {
            cut_to: Some(cut.clone()),
            ..FaultsUpdate::default()
        },
        false => FaultsUpdate {
            cut: Some(cut.clone()),
            ..FaultsUpdate::default()
        },
    };
    plane.set_faults(node, &update).await
}

/// A slow node through the nodes' own fault plane: it delays its messages to every other
/// node, and every other node its messages to it.
async fn slow_through_faults<P: Plane + ?Sized>(
    plane: &P,
    node: &str,
    ms: u64,
) -> Result<(), String> {
    let nodes = plane.nodes().await;
    let delays = |delay_ms: BTreeMap<String, u64>| FaultsUpdate {
        delay_ms: Some(delay_ms),
        ..FaultsUpdate::default()
    };
    let others = nodes.iter().filter(|n| *n != node);
    let mine = match ms {
        0 => BTreeMap::new(),
        _ => others.clone().map(|n| (n.clone(), ms)).collect(),
    };
    let mut result = plane.set_faults(node, &delays(mine)).await;
    for other in others {
        let theirs = match ms {
            0 => BTreeMap::new(),
            _ => BTreeMap::from([(node.to_string(), ms)]),
        };
        result = result.and(plane.set_faults(other, &delays(theirs)).await);
    }
    result
}

/// Clears `node`'s partitions, one-way cuts and slow links in the run's network.
pub async fn heal_network_links(network: &Network, node: &str) -> Result<(), String> {
    let none = BTreeSet::new();
    let cut = network.cut(node, &none).await;
    let cut = cut.and(network.cut_to(node, &none).await);
    cut.and(network.slow(node, 0).await)
        .map_err(|e| e.to_string())
}

/// Node processes this run started (with the namespaces they run in, if any), or running
/// services given as `(id, host:port)` that have a fault plane; faults go through the
/// nodes' admin plane, signals and kills to the processes.
pub struct Processes {
    /// The bundled cluster's processes; none for targets.
    cluster: Option<Arc<Mutex<Cluster>>>,
    /// The nodes as `(id, host:port)` when there is no cluster.
    targets: Vec<(String, String)>,
    admin: AdminClient,
    /// With `--net netns`: the network whose rules play partitions and slow links.
    network: Option<Arc<Network>>,
}

impl Processes {
    /// The processes of `cluster`, reached through `admin` (which carries the cluster's
    /// secret); partitions and slow links are rules of `network` when the nodes run in one.
    pub fn new(
        cluster: Arc<Mutex<Cluster>>,
        network: Option<Arc<Network>>,
        admin: AdminClient,
    ) -> Self {
        Processes {
            cluster: Some(cluster),
            targets: Vec::new(),
            admin,
            network,
        }
    }

    /// Running services given as `(id, host:port)`, through their fault plane alone: a pause
    /// is the plane's `paused`; kill and power loss, which need the processes, are refused.
    pub fn targets(targets: Vec<(String, String)>, admin: AdminClient) -> Self {
        Processes {
            cluster: None,
            targets,
            admin,
            network: None,
        }
    }

    /// A node's address, and its process id when this run started it (else 0).
    async fn addr(&self, node: &str) -> Option<(String, u32)> {
        let Some(cluster) = &self.cluster else {
            let target = self.targets.iter().find(|(id, _)| id == node);
            return target.map(|(_, addr)| (addr.clone(), 0));
        };
        let cluster = cluster.lock().await;
        cluster
            .nodes()
            .iter()
            .find(|n| n.id == node)
            .map(|n| (n.addr.clone(), n.pid))
    }

    async fn address(&self, node: &str) -> Result<String, String> {
        let addr = self.addr(node).await.map(|a| a.0);
        addr.ok_or_else(|| format!("no node {node}"))
    }
}

impl Plane for Processes {
    async fn nodes(&self) -> Vec<String> {
        let Some(cluster) = &self.cluster else {
            return self.targets.iter().map(|(id, _)| id.clone()).collect();
        };
        let cluster = cluster.lock().await;
        cluster.nodes().iter().map(|n| n.id.clone()).collect()
    }

    async fn set_faults(&self, node: &str, update: &FaultsUpdate) -> Result<(), String> {
        let addr = self.address(node).await?;
        let set = self.admin.set_faults(&addr, update).await;
        set.map(|_| ()).map_err(|e| e.to_string())
    }

    async fn maintain(&self, node: &str, kind: FaultKind) -> Result<(), String> {
        let addr = self.address(node).await?;
        let done = match kind {
            FaultKind::Flush => self.admin.flush(&addr).await.map(|_| ()),
            FaultKind::Compact => self.admin.compact(&addr).await.map(|_| ()),
            _ => self.admin.repair(&addr).await.map(|_| ()),
        };
        done.map_err(|e| e.to_string())
    }

    async fn pause(&self, node: &str, paused: bool) {
        match self.addr(node).await {
            Some((_, pid)) if pid > 0 => {
                let signal = if paused {
                    Signal::SIGSTOP
                } else {
                    Signal::SIGCONT
                };
                let _ = kill(Pid::from_raw(pid as i32), signal);
            }
            Some(_) => {
                let update = FaultsUpdate {
                    paused: Some(paused),
                    ..FaultsUpdate::default()
                };
                if let Err(e) = self.set_faults(node, &update).await {
                    tracing::warn!(%node, error = %e, "nemesis: could not pause or resume");
                }
            }
            None => {}
        }
    }

    async fn kill(&self, node: &str, power_loss: bool) -> Result<u64, String> {
        let Some(cluster) = &self.cluster else {
            return Err("no process to kill on a target".into());
        };
        let mut cluster = cluster.lock().await;
        if !power_loss {
            cluster.kill(node).await;
            return Ok(0);
        }
        let lost = cluster.power_loss(node).await;
        lost.map_err(|e| format!("power loss: commit log: {e}"))
    }

    async fn restart(&self, node: &str) -> Result<(), String> {
        let Some(cluster) = &self.cluster else {
            return Ok(());
        };
        let mut cluster = cluster.lock().await;
        cluster.restart(node).await.map_err(|e| e.to_string())
    }

    async fn dead(&self) -> Vec<String> {
        let Some(cluster) = &self.cluster else {
            return Vec::new();
        };
        cluster.lock().await.dead().await
    }

    async fn cut(&self, node: &str, cut: &BTreeSet<String>) -> Result<(), String> {
        let Some(network) = &self.network else {
            return cut_through_faults(self, node, cut, false).await;
        };
        network.cut(node, cut).await.map_err(|e| e.to_string())
    }

    async fn cut_one_way(&self, node: &str, to: &BTreeSet<String>) -> Result<(), String> {
        let Some(network) = &self.network else {
            return cut_through_faults(self, node, to, true).await;
        };
        network.cut_to(node, to).await.map_err(|e| e.to_string())
    }

    async fn slow(&self, node: &str, ms: u64) -> Result<(), String> {
        let Some(network) = &self.network else {
            return slow_through_faults(self, node, ms).await;
        };
        network.slow(node, ms).await.map_err(|e| e.to_string())
    }

    async fn heal_links(&self, node: &str) -> Result<(), String> {
        match &self.network {
            Some(network) => heal_network_links(network, node).await,
            None => Ok(()),
        }
    }
}
