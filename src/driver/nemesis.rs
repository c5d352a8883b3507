//! The nemesis: carries out the planned faults on a [`Plane`] (real processes, someone
//! else's service, or a simulation): kill -9, pause, cut links, delays, clocks, flush,
//! compact, repair. It records every action in the history, and heals the cluster at the end.

use super::plane::Plane;
use super::recorder::Recorder;
use crate::api::FaultsUpdate;
use crate::workload::nemesis::{Action, FaultKind, PlannedFault};
use checkers::history::HistoryError;
use checkers::{Op, OpType, Process, F};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Injects faults into one cluster.
pub struct Nemesis<P> {
    /// Where the faults are played.
    plane: Arc<P>,
    recorder: Arc<Recorder>,
    /// The links each node has cut now, so that overlapping partitions add up; held while a
    /// change is applied, so that the last change applied is the last made.
    cuts: Mutex<BTreeMap<String, BTreeSet<String>>>,
    /// The same for links cut one way, by the node whose messages are lost.
    one_way: Mutex<BTreeMap<String, BTreeSet<String>>>,
}

impl<P: Plane> Nemesis<P> {
    /// A nemesis playing its faults on `plane`, recording into `recorder`.
    pub fn new(plane: Arc<P>, recorder: Arc<Recorder>) -> Self {
        Nemesis {
            plane,
            recorder,
            cuts: Mutex::new(BTreeMap::new()),
            one_way: Mutex::new(BTreeMap::new()),
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

    /// Changes a node's faults; a node that does not answer (paused, killed) is logged.
    async fn set_faults(&self, node: &str, update: FaultsUpdate) {
        if let Err(e) = self.plane.set_faults(node, &update).await {
            tracing::warn!(%node, error = %e, "nemesis: could not change the faults");
        }
    }

    /// Asks a node to flush, compact or repair now; one that does not answer is logged.
    async fn maintain(&self, node: &str, kind: FaultKind) {
        if let Err(e) = self.plane.maintain(node, kind).await {
            tracing::warn!(%node, ?kind, error = %e, "nemesis: admin call failed");
        }
    }

    /// Adds or removes cut links: both ways, or with `one_way` only from the first node of
    /// each pair to the second.
    async fn set_cuts(&self, cuts: &[(String, String)], add: bool, one_way: bool) {
        let mut all = match one_way {
            true => self.one_way.lock().await,
            false => self.cuts.lock().await,
        };
        let mut touched = BTreeSet::new();
        for (a, b) in cuts {
            let ways = match one_way {
                true => vec![(a, b)],
                false => vec![(a, b), (b, a)],
            };
            for (x, y) in ways {
                let set = all.entry(x.clone()).or_default();
                if add {
                    set.insert(y.clone());
                } else {
                    set.remove(y);
                }
                touched.insert(x.clone());
            }
        }
        for node in touched {
            let cut = all.get(&node).cloned().unwrap_or_default();
            let done = match one_way {
                true => self.plane.cut_one_way(&node, &cut).await,
                false => self.plane.cut(&node, &cut).await,
            };
            if let Err(e) = done {
                tracing::warn!(%node, error = %e, "nemesis: could not change the cut links");
            }
        }
    }

    /// Starts a fault.
    async fn start(&self, action: &Action, stop: &Arc<AtomicBool>) {
        match action {
            Action::Partition { cuts, kind } => {
                self.set_cuts(cuts, true, *kind == FaultKind::PartitionOneWay)
                    .await
            }
            Action::Kill { node } | Action::PowerLoss { node } => {
                let power_loss = matches!(action, Action::PowerLoss { .. });
                match self.plane.kill(node, power_loss).await {
                    Ok(lost) if power_loss => {
                        tracing::info!(%node, lost_bytes = lost, "power loss")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(%node, error = %e, "nemesis: could not kill"),
                }
            }
            Action::Pause { node } => self.plane.pause(node, true).await,
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
                let plane = self.plane.clone();
                tokio::spawn(async move {
                    let mut sign = 1;
                    while !stop.load(Ordering::Relaxed) {
                        let _ = plane.set_faults(&node, &clock_offset(sign * ms)).await;
                        sign = -sign;
                        tokio::time::sleep(Duration::from_millis(period)).await;
                    }
                });
            }
            Action::Slow { node, ms } => self.slow(node, *ms).await,
            Action::Maintenance { node, kind } => self.maintain(node, *kind).await,
        }
    }

    /// Delays every message to and from `node` by `ms` (0 clears it).
    async fn slow(&self, node: &str, ms: u64) {
        if let Err(e) = self.plane.slow(node, ms).await {
            tracing::warn!(%node, error = %e, "nemesis: could not change the link's speed");
        }
    }

    /// Undoes a fault.
    async fn stop(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::Partition { cuts, kind } => {
                self.set_cuts(cuts, false, *kind == FaultKind::PartitionOneWay)
                    .await
            }
            Action::Kill { node } | Action::PowerLoss { node } => self.plane.restart(node).await?,
            Action::Pause { node } => self.plane.pause(node, false).await,
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
        let action = self.plane.aim(fault.action).await;
        let value = serde_json::to_value(&action).unwrap_or(Value::Null);
        if let Action::Maintenance { .. } = action {
            self.record(action.name().to_string(), value.clone())?;
            self.start(&action, &stop).await;
            return Ok(());
        }
        self.record(format!("start-{}", action.name()), value.clone())?;
        let fault_stop = Arc::new(AtomicBool::new(false));
        self.start(&action, &fault_stop).await;
        let until = Instant::now() + Duration::from_secs_f64(fault.duration_s);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        fault_stop.store(true, Ordering::Relaxed);
        if let Err(e) = self.stop(&action).await {
            tracing::warn!(error = %e, "nemesis: could not undo a fault");
        }
        self.record(format!("stop-{}", action.name()), value)
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
        let nodes = self.plane.nodes().await;
        for node in &nodes {
            self.plane.pause(node, false).await;
        }
        let dead = self.plane.dead().await;
        for node in &dead {
            if let Err(e) = self.plane.restart(node).await {
                tracing::warn!(%node, error = %e, "heal: could not restart a node");
            }
        }
        self.cuts.lock().await.clear();
        self.one_way.lock().await.clear();
        let reset = FaultsUpdate {
            cut: Some(BTreeSet::new()),
            cut_to: Some(BTreeSet::new()),
            delay_ms: Some(BTreeMap::new()),
            clock_offset_ms: Some(0),
            paused: Some(false),
        };
        for node in &nodes {
            self.set_faults(node, reset.clone()).await;
            if let Err(e) = self.plane.heal_links(node).await {
                tracing::warn!(%node, error = %e, "heal: could not clear the network's rules");
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
