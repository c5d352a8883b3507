//! The nemesis: carries out the planned faults on the real processes (kill -9, SIGSTOP) and
//! through the nodes' fault plane (cut links, delays, clocks, flush, compact, repair),
//! records every action in the history, and heals the cluster at the end. Against targets
//! (`--target`) whose fault plane answers, it plays through that plane alone: a pause is the
//! plane's `paused`, and kill and power loss, which need the processes, are not played.

use super::recorder::Recorder;
use crate::api::{AdminClient, FaultsUpdate};
use crate::cluster::{Cluster, Network};
use crate::workload::nemesis::{Action, FaultKind, PlannedFault};
use checkers::history::HistoryError;
use checkers::{Op, OpType, Process, F};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Injects faults into one cluster.
pub struct Nemesis {
    /// The bundled cluster's processes; none for targets.
    cluster: Option<Arc<Mutex<Cluster>>>,
    /// The nodes as `(id, host:port)` when there is no cluster.
    targets: Vec<(String, String)>,
    recorder: Arc<Recorder>,
    admin: AdminClient,
    /// The links each node has cut now, so that overlapping partitions add up; held while a
    /// change is applied, so that the last change applied is the last made.
    cuts: Mutex<BTreeMap<String, BTreeSet<String>>>,
    /// With `--net netns`: the network whose rules play partitions and slow links.
    network: Option<Arc<Network>>,
}

impl Nemesis {
    /// A nemesis for `cluster`, reaching its admin plane through `admin` (which carries the
    /// cluster's secret), recording into `recorder`; partitions and slow links are rules of
    /// `network` when the nodes run in one.
    pub fn new(
        cluster: Arc<Mutex<Cluster>>,
        network: Option<Arc<Network>>,
        admin: AdminClient,
        recorder: Arc<Recorder>,
    ) -> Self {
        Nemesis {
            cluster: Some(cluster),
            targets: Vec::new(),
            recorder,
            admin,
            cuts: Mutex::new(BTreeMap::new()),
            network,
        }
    }

    /// A nemesis for running services given as `(id, host:port)`, through their fault plane
    /// alone.
    pub fn for_targets(
        targets: Vec<(String, String)>,
        admin: AdminClient,
        recorder: Arc<Recorder>,
    ) -> Self {
        Nemesis {
            cluster: None,
            targets,
            recorder,
            admin,
            cuts: Mutex::new(BTreeMap::new()),
            network: None,
        }
    }

    fn record(&self, f: String, value: Value) -> Result<(), HistoryError> {
        self.recorder
            .record(Op::new(
                Process::nemesis(),
                OpType::Info,
                F::from(f),
                None,
                value,
            ))
            .map(|_| ())
    }

    /// A node's address, and its process id when the nemesis started it (else 0).
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

    async fn nodes(&self) -> Vec<String> {
        let Some(cluster) = &self.cluster else {
            return self.targets.iter().map(|(id, _)| id.clone()).collect();
        };
        let cluster = cluster.lock().await;
        cluster.nodes().iter().map(|n| n.id.clone()).collect()
    }

    /// Changes a node's faults; a node that does not answer (paused, killed) is logged.
    async fn set_faults(&self, node: &str, update: FaultsUpdate) {
        let Some((addr, _)) = self.addr(node).await else {
            return;
        };
        if let Err(e) = self.admin.set_faults(&addr, &update).await {
            tracing::warn!(%node, error = %e, "nemesis: could not change the faults");
        }
    }

    /// Asks a node to flush, compact or repair now; one that does not answer is logged.
    async fn maintain(&self, node: &str, kind: FaultKind) {
        let Some((addr, _)) = self.addr(node).await else {
            return;
        };
        let done = match kind {
            FaultKind::Flush => self.admin.flush(&addr).await.map(|_| ()),
            FaultKind::Compact => self.admin.compact(&addr).await.map(|_| ()),
            _ => self.admin.repair(&addr).await.map(|_| ()),
        };
        if let Err(e) = done {
            tracing::warn!(%node, ?kind, error = %e, "nemesis: admin call failed");
        }
    }

    /// Pauses (SIGSTOP) or resumes (SIGCONT) a node: its process, or for a target, through
    /// its fault plane.
    async fn signal(&self, node: &str, signal: Signal) {
        match self.addr(node).await {
            Some((_, pid)) if pid > 0 => {
                let _ = kill(Pid::from_raw(pid as i32), signal);
            }
            Some(_) => {
                let update = FaultsUpdate {
                    paused: Some(signal == Signal::SIGSTOP),
                    ..FaultsUpdate::default()
                };
                self.set_faults(node, update).await;
            }
            None => {}
        }
    }

    async fn set_cuts(&self, cuts: &[(String, String)], add: bool) {
        let mut all = self.cuts.lock().await;
        let changed: BTreeMap<String, BTreeSet<String>> = {
            let mut touched = BTreeSet::new();
            for (a, b) in cuts {
                for (x, y) in [(a, b), (b, a)] {
                    let set = all.entry(x.clone()).or_default();
                    if add {
                        set.insert(y.clone());
                    } else {
                        set.remove(y);
                    }
                    touched.insert(x.clone());
                }
            }
            touched
                .into_iter()
                .map(|n| (n.clone(), all.get(&n).cloned().unwrap_or_default()))
                .collect()
        };
        for (node, cut) in changed {
            if let Some(network) = &self.network {
                if let Err(e) = network.cut(&node, &cut).await {
                    tracing::warn!(%node, error = %e, "nemesis: could not change the cut links");
                }
                continue;
            }
            let update = FaultsUpdate {
                cut: Some(cut),
                ..FaultsUpdate::default()
            };
            self.set_faults(&node, update).await;
        }
    }

    /// Starts a fault.
    async fn start(&self, action: &Action, stop: &Arc<AtomicBool>) {
        match action {
            Action::Partition { cuts, .. } => self.set_cuts(cuts, true).await,
            Action::Kill { node } | Action::PowerLoss { node } => {
                let Some(cluster) = &self.cluster else {
                    tracing::warn!(%node, "nemesis: no process to kill on a target");
                    return;
                };
                let mut cluster = cluster.lock().await;
                if let Action::Kill { .. } = action {
                    cluster.kill(node).await;
                    return;
                }
                match cluster.power_loss(node).await {
                    Ok(lost) => tracing::info!(%node, lost_bytes = lost, "power loss"),
                    Err(e) => tracing::warn!(%node, error = %e, "power loss: commit log"),
                }
            }
            Action::Pause { node } => self.signal(node, Signal::SIGSTOP).await,
            Action::Clock {
                node,
                ms,
                period_ms: None,
            } => self.set_faults(node, clock_offset(*ms)).await,
            Action::Clock {
                node,
                ms,
                period_ms: Some(period),
            } => {
                let (stop, node, ms, period) = (stop.clone(), node.clone(), *ms, *period);
                let (admin, addr) = (self.admin.clone(), self.addr(&node).await.map(|a| a.0));
                tokio::spawn(async move {
                    let Some(addr) = addr else { return };
                    let mut sign = 1;
                    while !stop.load(Ordering::Relaxed) {
                        let _ = admin.set_faults(&addr, &clock_offset(sign * ms)).await;
                        sign = -sign;
                        tokio::time::sleep(Duration::from_millis(period)).await;
                    }
                });
            }
            Action::Slow { node, ms } => self.slow(node, *ms).await,
            Action::Maintenance { node, kind } => self.maintain(node, *kind).await,
        }
    }

    /// Delays every message to and from `node` by `ms` (0 clears it); with a network, slows
    /// the node's link instead.
    async fn slow(&self, node: &str, ms: u64) {
        if let Some(network) = &self.network {
            if let Err(e) = network.slow(node, ms).await {
                tracing::warn!(%node, error = %e, "nemesis: could not change the link's speed");
            }
            return;
        }
        let nodes = self.nodes().await;
        let others: BTreeMap<String, u64> = nodes
            .iter()
            .filter(|n| *n != node)
            .map(|n| (n.clone(), ms))
            .collect();
        let delays = |delay_ms: BTreeMap<String, u64>| FaultsUpdate {
            delay_ms: Some(delay_ms),
            ..FaultsUpdate::default()
        };
        let mine = if ms == 0 { BTreeMap::new() } else { others };
        self.set_faults(node, delays(mine)).await;
        for other in nodes.iter().filter(|n| *n != node) {
            let theirs = if ms == 0 {
                BTreeMap::new()
            } else {
                BTreeMap::from([(node.to_string(), ms)])
            };
            self.set_faults(other, delays(theirs)).await;
        }
    }

    /// Undoes a fault.
    async fn stop(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::Partition { cuts, .. } => self.set_cuts(cuts, false).await,
            Action::Kill { node } | Action::PowerLoss { node } => {
                if let Some(cluster) = &self.cluster {
                    let mut cluster = cluster.lock().await;
                    cluster.restart(node).await.map_err(|e| e.to_string())?;
                }
            }
            Action::Pause { node } => self.signal(node, Signal::SIGCONT).await,
            Action::Clock { node, .. } => self.set_faults(node, clock_offset(0)).await,
            Action::Slow { node, .. } => self.slow(node, 0).await,
            Action::Maintenance { .. } => {}
        }
        Ok(())
    }

    /// Carries out one planned fault: start, wait its duration (or until `stop`), undo.
    async fn run_one(
        self: Arc<Self>,
        started: Instant,
        fault: PlannedFault,
        stop: Arc<AtomicBool>,
    ) -> Result<(), HistoryError> {
        let at = started + Duration::from_secs_f64(fault.at_s);
        while Instant::now() < at {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            tokio::time::sleep_until(at.min(Instant::now() + Duration::from_millis(50))).await;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let value = serde_json::to_value(&fault.action).unwrap_or(Value::Null);
        if let Action::Maintenance { .. } = fault.action {
            self.record(fault.action.name().to_string(), value.clone())?;
            self.start(&fault.action, &stop).await;
            return Ok(());
        }
        self.record(format!("start-{}", fault.action.name()), value.clone())?;
        let fault_stop = Arc::new(AtomicBool::new(false));
        self.start(&fault.action, &fault_stop).await;
        let until = Instant::now() + Duration::from_secs_f64(fault.duration_s);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        fault_stop.store(true, Ordering::Relaxed);
        if let Err(e) = self.stop(&fault.action).await {
            tracing::warn!(error = %e, "nemesis: could not undo a fault");
        }
        self.record(format!("stop-{}", fault.action.name()), value)
    }

    /// Runs the whole schedule from `started`; faults still on when `stop` is set end early.
    pub async fn run(
        self: Arc<Self>,
        schedule: Vec<PlannedFault>,
        started: Instant,
        stop: Arc<AtomicBool>,
    ) -> Result<(), HistoryError> {
        let mut tasks = tokio::task::JoinSet::new();
        for fault in schedule {
            tasks.spawn(self.clone().run_one(started, fault, stop.clone()));
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap_or(Ok(()))?;
        }
        Ok(())
    }

    /// Undoes every fault: resumes paused nodes, restarts dead ones, clears cut links,
    /// delays and clock offsets; then repairs from every node when asked.
    pub async fn heal(&self, repair: bool) -> Result<(), HistoryError> {
        let nodes = self.nodes().await;
        for node in &nodes {
            self.signal(node, Signal::SIGCONT).await;
        }
        let mut dead: Vec<String> = Vec::new();
        if let Some(cluster) = &self.cluster {
            let mut cluster = cluster.lock().await;
            dead = cluster.dead().await;
            for node in &dead {
                if let Err(e) = cluster.restart(node).await {
                    tracing::warn!(%node, error = %e, "heal: could not restart a node");
                }
            }
        }
        self.cuts.lock().await.clear();
        let reset = FaultsUpdate {
            cut: Some(BTreeSet::new()),
            delay_ms: Some(BTreeMap::new()),
            clock_offset_ms: Some(0),
            paused: Some(false),
        };
        for node in &nodes {
            self.set_faults(node, reset.clone()).await;
            if let Some(network) = &self.network {
                let healed = network.cut(node, &BTreeSet::new()).await;
                if let Err(e) = healed.and(network.slow(node, 0).await) {
                    tracing::warn!(%node, error = %e, "heal: could not clear the network's rules");
                }
            }
        }
        self.record("heal".into(), json!({ "restarted": dead }))?;
        if repair {
            for node in &nodes {
                self.maintain(node, FaultKind::Repair).await;
            }
            self.record("repair".into(), json!({ "nodes": nodes }))?;
        }
        Ok(())
    }
}

/// A change of a node's clock offset alone.
fn clock_offset(ms: i64) -> FaultsUpdate {
    FaultsUpdate {
        clock_offset_ms: Some(ms),
        ..FaultsUpdate::default()
    }
}
