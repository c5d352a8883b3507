//! A run of the bundled nodes: start their processes, drive the load with the nemesis on
//! them, save their oracle dumps and stop them.

use super::{drive_load, RunPlan};
use crate::cluster::{Cluster, Network};
use crate::driver::Processes;
use crate::store::{NodeRecord, RunFolder, RunRecord};
use anyhow::Context;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// Starts the bundled nodes of `binary`, drives the plan's load at them, saves their
/// oracle dumps and stops them; run.json gains the nodes.
pub async fn run(
    plan: &RunPlan,
    folder: &RunFolder,
    record: &mut RunRecord,
    binary: PathBuf,
    network: Option<Arc<Network>>,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let cluster = Cluster::start(
        &binary,
        plan.workload.nodes,
        &plan.workload.cluster,
        &folder.nodes(),
        plan.seed,
        network,
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
    record.write(folder)?;
    if plan.panic_after_start {
        panic!(
            "--panic-after-start: panicking with {} nodes running",
            cluster.nodes().len()
        );
    }
    let addrs = cluster.addrs();
    let (admin, network) = (cluster.admin(Duration::from_secs(5)), cluster.network());
    let cluster = Arc::new(Mutex::new(cluster));
    let plane = Processes::new(cluster.clone(), network, admin);
    let drove = drive_load(
        plan,
        &folder.history(),
        addrs,
        Some(Arc::new(plane)),
        &[],
        interrupted.clone(),
    )
    .await;
    let mut cluster = cluster.lock().await;
    let saved = cluster.save_oracles().await;
    cluster.stop().await;
    drove?;
    saved.context("saving the nodes' oracle dumps")?;
    Ok(())
}
