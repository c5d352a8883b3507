//! The nemesis: carries out the planned faults on the real processes (kill -9, SIGSTOP) and
//! through the nodes' fault plane (cut links, delays, clocks, flush, compact, repair),
//! records every action in the history, and heals the cluster at the end.

use super::recorder::Recorder;
use crate::cluster::Cluster;
use crate::workload::nemesis::{Action, PlannedFault};
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
    cluster: Arc<Mutex<Cluster>>,
    recorder: Arc<Recorder>,
    http: reqwest::Client,
    /// The links each node has cut now, so that overlapping partitions add up.
    cuts: std::sync::Mutex<BTreeMap<String, BTreeSet<String>>>,
}

impl Nemesis {
    /// A nemesis for `cluster`, recording into `recorder`.
    pub fn new(cluster: Arc<Mutex<Cluster>>, recorder: Arc<Recorder>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Nemesis {
            cluster,
            recorder,
            http,
            cuts: std::sync::Mutex::new(BTreeMap::new()),
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

    async fn addr(&self, node: &str) -> Option<(String, u32)> {
        let cluster = self.cluster.lock().await;
        cluster
            .nodes()
            .iter()
            .find(|n| n.id == node)
            .map(|n| (n.addr.clone(), n.pid))
    }

    async fn nodes(&self) -> Vec<String> {
        self.cluster
            .lock()
            .await
            .nodes()
            .iter()
            .map(|n| n.id.clone())
            .collect()
    }

    /// Calls a node's admin plane; a node that does not answer (paused, killed) is logged.
    async fn admin(&self, node: &str, path: &str, body: Option<Value>) {
        let Some((addr, _)) = self.addr(node).await else {
            return;
        };
        let url = format!("http://{addr}{path}");
        let request = match body {
            Some(body) => self.http.put(url).json(&body),
            None => self.http.post(url),
        };
        if let Err(e) = request.send().await {
            tracing::warn!(%node, path, error = %e, "nemesis: admin call failed");
        }
    }

    async fn signal(&self, node: &str, signal: Signal) {
        if let Some((_, pid)) = self.addr(node).await {
            let _ = kill(Pid::from_raw(pid as i32), signal);
        }
    }

    async fn set_cuts(&self, cuts: &[(String, String)], add: bool) {
        let changed: BTreeMap<String, BTreeSet<String>> = {
            let mut all = self.cuts.lock().unwrap_or_else(|e| e.into_inner());
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
            self.admin(&node, "/admin/faults", Some(json!({ "cut": cut })))
                .await;
        }
    }

    /// Starts a fault.
    async fn start(&self, action: &Action, stop: &Arc<AtomicBool>) {
        match action {
            Action::Partition { cuts, .. } => self.set_cuts(cuts, true).await,
            Action::Kill { node } => self.cluster.lock().await.kill(node).await,
            Action::Pause { node } => self.signal(node, Signal::SIGSTOP).await,
            Action::Clock {
                node,
                ms,
                period_ms: None,
            } => {
                self.admin(
                    node,
                    "/admin/faults",
                    Some(json!({ "clock_offset_ms": ms })),
                )
                .await
            }
            Action::Clock {
                node,
                ms,
                period_ms: Some(period),
            } => {
                let (stop, node, ms, period) = (stop.clone(), node.clone(), *ms, *period);
                let (http, addr) = (self.http.clone(), self.addr(&node).await.map(|a| a.0));
                tokio::spawn(async move {
                    let Some(addr) = addr else { return };
                    let mut sign = 1;
                    while !stop.load(Ordering::Relaxed) {
                        let body = json!({ "clock_offset_ms": sign * ms });
                        let _ = http
                            .put(format!("http://{addr}/admin/faults"))
                            .json(&body)
                            .send()
                            .await;
                        sign = -sign;
                        tokio::time::sleep(Duration::from_millis(period)).await;
                    }
                });
            }
            Action::Slow { node, ms } => self.slow(node, *ms).await,
            Action::Maintenance { node, .. } => {
                self.admin(node, &format!("/admin/{}", action.name()), None)
                    .await
            }
        }
    }

    /// Delays every message to and from `node` by `ms` (0 clears it).
    async fn slow(&self, node: &str, ms: u64) {
        let nodes = self.nodes().await;
        let others: BTreeMap<&String, u64> = nodes
            .iter()
            .filter(|n| *n != node)
            .map(|n| (n, ms))
            .collect();
        let delays = if ms == 0 { json!({}) } else { json!(others) };
        self.admin(node, "/admin/faults", Some(json!({ "delay_ms": delays })))
            .await;
        for other in nodes.iter().filter(|n| *n != node) {
            let delay = if ms == 0 {
                json!({})
            } else {
                json!({ node: ms })
            };
            self.admin(other, "/admin/faults", Some(json!({ "delay_ms": delay })))
                .await;
        }
    }

    /// Undoes a fault.
    async fn stop(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::Partition { cuts, .. } => self.set_cuts(cuts, false).await,
            Action::Kill { node } => {
                self.cluster
                    .lock()
                    .await
                    .restart(node)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Action::Pause { node } => self.signal(node, Signal::SIGCONT).await,
            Action::Clock { node, .. } => {
                self.admin(node, "/admin/faults", Some(json!({ "clock_offset_ms": 0 })))
                    .await
            }
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
        let dead: Vec<String> = {
            let mut cluster = self.cluster.lock().await;
            cluster.dead().await
        };
        for node in &dead {
            if let Err(e) = self.cluster.lock().await.restart(node).await {
                tracing::warn!(%node, error = %e, "heal: could not restart a node");
            }
        }
        self.cuts.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let reset = json!({ "cut": [], "delay_ms": {}, "clock_offset_ms": 0, "paused": false });
        for node in &nodes {
            self.admin(node, "/admin/faults", Some(reset.clone())).await;
        }
        self.record("heal".into(), json!({ "restarted": dead }))?;
        if repair {
            for node in &nodes {
                self.admin(node, "/admin/repair", None).await;
            }
            self.record("repair".into(), json!({ "nodes": nodes }))?;
        }
        Ok(())
    }
}
