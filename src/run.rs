//! `checker run`: start a cluster, drive the workload, check the history, chart it.

use crate::analysis::{write_json, BadInput};
use crate::cluster::Cluster;
use crate::driver::{drive, final_reads, HttpClient, Nemesis, Progress, Recorder};
use crate::report::summary;
use crate::run_folder::RunFolder;
use crate::workload::nemesis;
use crate::workload::Workload;
use anyhow::Context;
use checkers::{Results, Validity};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// What a run was asked to do, after flags were applied to the workload file.
pub struct RunPlan {
    /// The effective workload.
    pub workload: Workload,
    /// The seed; random when the user gave none.
    pub seed: u64,
    /// Where run folders go.
    pub results: PathBuf,
    /// Panic once the cluster is up (to test that no node outlives a crashed run).
    pub panic_after_start: bool,
    /// An already running service (`host:port` each) to drive instead of bundled nodes.
    pub targets: Vec<String>,
}

/// run.json: the full effective configuration, the seed and the versions.
#[derive(Serialize)]
struct RunRecord<'a> {
    workload: &'a Workload,
    seed: u64,
    checker_version: &'static str,
    command: Vec<String>,
    started: String,
    finished: Option<String>,
    interrupted: bool,
    /// The bundled cluster always starts with no data.
    cluster_started_empty: bool,
    nodes: Vec<NodeRecord>,
}

#[derive(Serialize)]
struct NodeRecord {
    id: String,
    addr: String,
    pid: u32,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The combined verdict.
    pub verdict: Validity,
    /// Every checker's results, as results.json holds them.
    pub results: Results,
    /// The run folder.
    pub dir: PathBuf,
    /// Ctrl-C stopped the load early.
    pub interrupted: bool,
}

/// Runs the plan end to end.
pub async fn run(plan: RunPlan) -> anyhow::Result<RunOutcome> {
    let folder = RunFolder::create(&plan.results, &plan.workload.name)
        .with_context(|| format!("creating a run folder under {}", plan.results.display()))?;
    eprintln!(
        "run {} · workload {} · seed {} · {} nodes · {:.0}s",
        folder.dir.display(),
        plan.workload.name,
        plan.seed,
        plan.workload.nodes,
        plan.workload.time_limit
    );
    let mut record = RunRecord {
        workload: &plan.workload,
        seed: plan.seed,
        checker_version: env!("CARGO_PKG_VERSION"),
        command: std::env::args().collect(),
        started: chrono::Local::now().to_rfc3339(),
        finished: None,
        interrupted: false,
        cluster_started_empty: true,
        nodes: Vec::new(),
    };
    write_json(&folder.dir.join("run.json"), &record)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    if plan.targets.is_empty() {
        let binary = std::env::current_exe().context("finding this program to start nodes")?;
        let cluster = Cluster::start(
            &binary,
            plan.workload.nodes,
            &plan.workload.cluster,
            &folder.nodes(),
        )
        .await
        .context("starting the cluster")?;
        record.nodes = cluster
            .nodes()
            .iter()
            .map(|n| NodeRecord {
                id: n.id.clone(),
                addr: n.addr.clone(),
                pid: n.pid,
            })
            .collect();
        write_json(&folder.dir.join("run.json"), &record)?;
        if plan.panic_after_start {
            panic!(
                "--panic-after-start: panicking with {} nodes running",
                cluster.nodes().len()
            );
        }
        let addrs = cluster.addrs();
        let cluster = Arc::new(Mutex::new(cluster));
        let drove = drive_load(
            &plan,
            &folder.history(),
            addrs,
            Some(cluster.clone()),
            interrupted.clone(),
        )
        .await;
        let mut cluster = cluster.lock().await;
        cluster.save_oracles().await;
        cluster.stop().await;
        drove?;
    } else {
        // Someone else's service: no process-level faults, no oracle.
        let addrs: Vec<(String, String)> = plan
            .targets
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("t{}", i + 1), a.clone()))
            .collect();
        record.nodes = addrs
            .iter()
            .map(|(id, addr)| NodeRecord {
                id: id.clone(),
                addr: addr.clone(),
                pid: 0,
            })
            .collect();
        write_json(&folder.dir.join("run.json"), &record)?;
        drive_load(&plan, &folder.history(), addrs, None, interrupted.clone()).await?;
    }

    record.interrupted = interrupted.load(Ordering::Relaxed);
    record.finished = Some(chrono::Local::now().to_rfc3339());
    write_json(&folder.dir.join("run.json"), &record)?;
    let results = report(&folder)?;
    folder
        .link_latest(&plan.results)
        .context("updating the latest links")?;
    crate::report::index::write(&plan.results).context("writing the index of runs")?;
    Ok(RunOutcome {
        verdict: results.valid,
        results,
        dir: folder.dir.clone(),
        interrupted: record.interrupted,
    })
}

/// Drives the workload with a progress display while the nemesis runs its schedule; then
/// heals the cluster and reads every counter from every node. Ctrl-C stops the load early.
async fn drive_load(
    plan: &RunPlan,
    history: &Path,
    addrs: Vec<(String, String)>,
    cluster: Option<Arc<Mutex<Cluster>>>,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let w = &plan.workload;
    let recorder = Arc::new(Recorder::create(history).map_err(BadInput::from)?);
    let ids: Vec<String> = addrs.iter().map(|(id, _)| id.clone()).collect();
    let client = Arc::new(HttpClient::new(
        addrs,
        Duration::from_millis(w.client_timeout_ms),
    ));
    let stop = Arc::new(AtomicBool::new(false));
    let on_ctrl_c = {
        let (stop, interrupted) = (stop.clone(), interrupted);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: stopping the load, then checking what was recorded");
                interrupted.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
            }
        })
    };
    let schedule = nemesis::schedule(&w.nemesis, &ids, w.phases.warmup_s, w.time_limit, plan.seed);
    let nemesis = cluster.map(|c| Arc::new(Nemesis::new(c, recorder.clone())));
    let faults_stop = Arc::new(AtomicBool::new(false));
    let faults = nemesis
        .clone()
        .map(|n| tokio::spawn(n.run(schedule, tokio::time::Instant::now(), faults_stop.clone())));
    let progress = Progress::start(recorder.clone(), Duration::from_secs_f64(w.time_limit));
    let driven = drive(client.clone(), w, plan.seed, recorder.clone(), stop.clone()).await;
    progress.finish();
    faults_stop.store(true, Ordering::Relaxed);
    let faulted = match faults {
        Some(task) => task
            .await
            .map_err(|e| anyhow::anyhow!("the nemesis failed: {e}"))?,
        None => Ok(()),
    };
    if let Some(nemesis) = &nemesis {
        nemesis
            .heal(w.phases.repair)
            .await
            .context("recording the heal")?;
    }
    if !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_secs_f64(w.phases.heal_s)).await;
        if w.phases.final_reads {
            final_reads(client.as_ref(), w, &recorder)
                .await
                .context("final reads")?;
        }
    }
    on_ctrl_c.abort();
    driven.context("driving the workload")?;
    faulted.context("recording a fault")?;
    Ok(())
}

/// Checks the run's history, writes results.json, the charts and the report page, prints
/// the summary.
fn report(folder: &RunFolder) -> anyhow::Result<Results> {
    let results = crate::report::folder::render(&folder.dir)?;
    print!("{}", summary::render(&results, Some(&folder.dir)));
    Ok(results)
}
