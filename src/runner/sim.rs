//! A run's load in simulation (`--sim`): the cluster, the clients and the nemesis in one
//! thread on tokio's paused clock, which jumps to the next timer whenever every task waits.
//! Nothing else runs on that thread, so the same seed gives the same history, byte for byte,
//! and twenty simulated seconds take a fraction of that. The nodes' and the driver's logs go
//! to `nodes/sim.log`, stamped with simulated time.

use super::load::Load;
use crate::driver::Recorder;
use crate::error::BadInput;
use crate::sim::{SimClient, SimCluster, SimPlane};
use crate::store::NodeRecord;
use crate::workload::Workload;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::EnvFilter;

/// Starts the simulated cluster in `nodes_dir`, drives `workload` with `seed` against it
/// recording into `history`, and stops it; returns the nodes, as run.json lists them.
pub async fn run(
    workload: Workload,
    seed: u64,
    nodes_dir: PathBuf,
    history: PathBuf,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<Vec<NodeRecord>> {
    let simulate = move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .context("starting the simulation's runtime")?;
        let began = runtime.block_on(async { Instant::now() });
        std::fs::create_dir_all(&nodes_dir)?;
        let log_path = nodes_dir.join("sim.log");
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let logs = tracing_subscriber::fmt()
            .with_writer(std::sync::Mutex::new(log))
            .with_ansi(false)
            .with_timer(SimTime(began))
            .with_env_filter(filter)
            .finish();
        // The nodes' and the driver's logs, on this thread alone, go to the file.
        tracing::subscriber::with_default(logs, || {
            runtime.block_on(simulate(workload, seed, nodes_dir, history, interrupted))
        })
    };
    tokio::task::spawn_blocking(simulate)
        .await
        .context("the simulation failed")?
}

/// Log lines stamped with simulated time since the run began.
struct SimTime(Instant);

impl FormatTime for SimTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        write!(w, "{:>10.3}s", self.0.elapsed().as_secs_f64())
    }
}

async fn simulate(
    workload: Workload,
    seed: u64,
    nodes_dir: PathBuf,
    history: PathBuf,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<Vec<NodeRecord>> {
    let (nodes_count, settings) = (workload.nodes, &workload.cluster);
    let cluster = SimCluster::start(nodes_count, settings, &workload.sim, &nodes_dir, seed)
        .context("starting the simulated cluster")?;
    let (net, ids) = (cluster.net(), cluster.ids());
    let nodes = ids
        .iter()
        .map(|id| NodeRecord {
            id: id.clone(),
            addr: format!("sim:{id}"),
            pid: 0,
        })
        .collect();
    let cluster = Arc::new(Mutex::new(cluster));
    let recorder = Arc::new(Recorder::create(&history).map_err(BadInput::from)?);
    let timeout = Duration::from_millis(workload.client_timeout_ms);
    let client = Arc::new(SimClient::new(net.clone(), ids.clone(), timeout));
    // A plane even without faults, as for real nodes: the heal and its repair need one.
    let plane = Some(Arc::new(SimPlane::new(cluster.clone(), net, ids.clone())));
    let load = Load {
        workload: &workload,
        seed,
        ids,
        recorder,
        progress: false,
    };
    let drove = load.drive(client, plane, interrupted).await;
    let mut cluster = cluster.lock().await;
    let saved = cluster.save_oracles().await;
    cluster.stop();
    drove?;
    saved.context("saving the nodes' oracle dumps")?;
    Ok(nodes)
}
