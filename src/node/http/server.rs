//! The node process: binds, recovers its data folder, serves the router until SIGTERM or
//! Ctrl-C, and runs the background tasks (commit log sync, flush, compaction and repair
//! schedules, and the watch that exits when the starting process is gone).

use super::admin;
use super::connections;
use super::internode::LinkTransport;
use super::replication;
use super::router::router;
use super::state::{Node, NodeParts};
use crate::api::{ClusterSettings, CommitlogSync, Listening, Mode};
use crate::node::core::clock::SystemClock;
use crate::node::core::commitlog::MARK_INTERVAL;
use crate::node::core::durable::Durable;
use crate::node::core::raven_journal::RavenDurable;
use crate::node::core::store::StoreSettings;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How one node is started.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// The node's id, such as `n1`.
    pub id: String,
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The other nodes by id, as `host:port`.
    pub peers: BTreeMap<String, String>,
    /// The cluster's settings.
    pub settings: ClusterSettings,
    /// Where the commit log and segments live.
    pub data_dir: PathBuf,
    /// Exit when the process that started this node goes away.
    pub exit_with_parent: bool,
    /// Seeds the node's random choices.
    pub seed: u64,
    /// The cluster's secret, required on the internal and admin planes; without one those
    /// answer loopback callers only.
    pub secret: Option<String>,
}

/// Binds, recovers the data folder, prints the [`Listening`] line, and serves until
/// SIGTERM or Ctrl-C.
pub async fn serve(config: NodeConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let (data, recovery) = Durable::open(
        &config.id,
        StoreSettings::of(&config.settings),
        config.settings.commitlog_sync,
        &config.data_dir,
    )?;
    let timeout = config
        .settings
        .write_timeout()
        .max(config.settings.read_timeout());
    let node = Arc::new(Node::new(NodeParts {
        id: config.id.clone(),
        settings: config.settings.clone(),
        data,
        raven: RavenDurable::open(&config.id, &config.data_dir)?,
        peers: config.peers.clone(),
        transport: Arc::new(LinkTransport::new(timeout, config.secret.as_deref())),
        clock: Arc::new(SystemClock),
        seed: config.seed,
        secret: config.secret.clone(),
        inline_io: false,
    }));
    let stop = shutdown_signal()?;
    let line = Listening {
        id: config.id.clone(),
        addr: addr.to_string(),
    };
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    tracing::info!(id = %config.id, %addr, segments = recovery.segments, replayed = recovery.replayed, mode = ?config.settings.mode, "node listening");
    background(node.clone());
    if config.exit_with_parent {
        tokio::spawn(exit_when_parent_is_gone());
    }
    connections::serve(listener, router(node.clone()), Some(node.clone()), stop).await?;
    // As Cassandra drains on shutdown: every write acknowledged reaches the disk, and a
    // request still being answered (a peer's, say, which the shutdown does not wait for)
    // can no longer be acknowledged.
    node.close_log();
    tracing::info!(id = %config.id, "node stopped");
    Ok(())
}

/// Starts the commit log sync, the flush, compaction and repair schedules, and in RavenDB
/// mode the replication loops; aborting the returned tasks stops them all. Each reads the
/// settings on every tick, so they follow run-time changes.
pub fn background(node: Arc<Node>) -> Vec<tokio::task::JoinHandle<()>> {
    let every = |pick: fn(&ClusterSettings) -> f64, work: Work| {
        let node = node.clone();
        tokio::spawn(async move {
            let mut last = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let interval = pick(&node.settings());
                if interval > 0.0 && last.elapsed().as_secs_f64() >= interval {
                    last = tokio::time::Instant::now();
                    work.run(&node).await;
                }
            }
        })
    };
    let sync_node = node.clone();
    let mut tasks = vec![tokio::spawn(async move {
        let mut last_sync = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(MARK_INTERVAL).await;
            let period = match sync_node.settings().commitlog_sync {
                CommitlogSync::Periodic(ms) => Duration::from_millis(ms),
                _ => MARK_INTERVAL,
            };
            if last_sync.elapsed() >= period {
                last_sync = tokio::time::Instant::now();
                sync_node.blocking(|n| n.sync_log()).await;
            } else {
                sync_node.mark_log();
            }
        }
    })];
    tasks.push(every(|s| s.flush_interval_s, Work::Flush));
    tasks.push(every(|s| s.compaction_interval_s, Work::Compact));
    tasks.push(every(|s| s.repair_interval_s, Work::Repair));
    if node.settings().mode == Mode::Ravendb {
        tasks.push(replication::spawn(node.clone()));
    }
    tasks
}

/// What a schedule does when its interval has passed.
#[derive(Debug, Clone, Copy)]
enum Work {
    Flush,
    Compact,
    Repair,
}

impl Work {
    async fn run(self, node: &Arc<Node>) {
        match self {
            Work::Flush => {
                let done = node.blocking(|n| n.flush().map(|_| ())).await;
                log_io("flush", done);
            }
            Work::Compact => {
                let done = node.blocking(|n| n.compact().map(|_| ())).await;
                log_io("compaction", done);
            }
            Work::Repair => {
                // In a task of its own, so that a panic in it stops this repair alone.
                let node = node.clone();
                let _ = tokio::spawn(async move { admin::repair(&node).await }).await;
            }
        }
    }
}

fn log_io(what: &str, result: Option<std::io::Result<()>>) {
    match result {
        Some(Ok(())) => {}
        Some(Err(e)) => tracing::error!(error = %e, "{what} failed"),
        None => tracing::error!("{what} panicked"),
    }
}

/// Listens for SIGTERM and Ctrl-C at once (so that a signal sent as soon as the node says
/// it listens is never missed), and resolves on the first.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            biased;
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// Exits the process once its parent is gone, so that no node outlives the run that
/// started it, even when that run was killed with SIGKILL.
async fn exit_when_parent_is_gone() {
    let parent = std::os::unix::process::parent_id();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if std::os::unix::process::parent_id() != parent {
            tracing::warn!("the process that started this node is gone; exiting");
            std::process::exit(0);
        }
    }
}
