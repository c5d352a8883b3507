//! The node process: its state, the HTTP router, the guards every request passes (pause,
//! cut links, loopback-only admin), and the background tasks (commit log sync, flush,
//! compaction and repair schedules).

use super::api::Listening;
use super::cells::Table;
use super::commitlog::CommitLog;
use super::errors::ApiError;
use super::faults::Faults;
use super::peers::{Peers, FROM_HEADER};
use super::raven::RavenStore;
use super::settings::{ClusterSettings, CommitlogSync};
use super::store::Store;
use super::{admin, coordinator, internal};
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

/// Striped counter locks, as Cassandra's `concurrent_counter_writes` × 1024.
const STRIPES: usize = 1024;
/// The largest request body a node accepts.
const BODY_LIMIT: usize = 64 * 1024;

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
}

/// A running node's state, shared by its request handlers.
pub struct Node {
    pub(super) id: String,
    settings: RwLock<ClusterSettings>,
    store: Mutex<Store>,
    raven: Mutex<RavenStore>,
    log: Mutex<CommitLog>,
    pub(super) peers: Arc<Peers>,
    pub(super) faults: Arc<RwLock<Faults>>,
    stripes: Vec<tokio::sync::Mutex<()>>,
    segments: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Node {
    /// This node's clock, µs (the system clock plus the fault plane's offset).
    pub(super) fn now(&self) -> u64 {
        self.faults
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .now_micros()
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
        self.store().set_settings(settings.store());
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
        &self.stripes[super::ring::token(key) as usize % STRIPES]
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
    fn sync_log(&self) {
        if let Err(e) = lock(&self.log).sync() {
            tracing::error!(error = %e, "commit log sync failed");
        }
    }
}

/// Binds, recovers the data folder, prints the [`Listening`] line, and serves until
/// SIGTERM or Ctrl-C.
pub async fn serve(config: NodeConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let (log, recovered) = CommitLog::open(&config.data_dir, config.settings.commitlog_sync)?;
    let replayed = recovered.log.len();
    let segments = recovered.segments.len();
    let store = Store::recover(
        &config.id,
        config.settings.store(),
        recovered.segments,
        &recovered.log,
    );
    let faults = Arc::new(RwLock::new(Faults::default()));
    let timeout = config
        .settings
        .write_timeout()
        .max(config.settings.read_timeout());
    let node = Arc::new(Node {
        id: config.id.clone(),
        peers: Arc::new(Peers::new(
            &config.id,
            config.peers.clone(),
            timeout,
            faults.clone(),
        )),
        faults,
        store: Mutex::new(store),
        raven: Mutex::new(RavenStore::new(&config.id)),
        log: Mutex::new(log),
        stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        segments: AtomicUsize::new(segments + 1),
        settings: RwLock::new(config.settings.clone()),
    });
    let line = Listening {
        id: config.id.clone(),
        addr: addr.to_string(),
    };
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    tracing::info!(id = %config.id, %addr, segments, replayed, mode = ?config.settings.mode, "node listening");
    spawn_background(node.clone(), config.exit_with_parent);
    let app = router(node).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!(id = %config.id, "node stopped");
    Ok(())
}

fn router(node: Arc<Node>) -> Router {
    Router::new()
        .merge(coordinator::routes())
        .merge(internal::routes())
        .merge(admin::routes())
        .fallback(|uri: axum::http::Uri| async move { ApiError::NotFound(uri.path().to_string()) })
        .layer(axum::middleware::from_fn_with_state(node.clone(), guard))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(node)
}

/// Every request passes here: admin requests only from loopback; others wait while the node
/// is paused, and those from a peer whose link is cut are never answered in time.
async fn guard(
    State(node): State<Arc<Node>>,
    ConnectInfo(from): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path().starts_with("/admin/") {
        if !from.ip().is_loopback() {
            return ApiError::Forbidden.into_response();
        }
        return next.run(request).await;
    }
    while node.faults.read().unwrap_or_else(|e| e.into_inner()).paused {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sender = request
        .headers()
        .get(FROM_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(sender) = sender {
        if node
            .faults
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .cut
            .contains(&sender)
        {
            let settings = node.settings();
            tokio::time::sleep(settings.write_timeout() + settings.read_timeout()).await;
            return ApiError::Unavailable {
                alive: 0,
                block_for: 0,
            }
            .into_response();
        }
        node.peers.heard_from(&sender);
    }
    next.run(request).await
}

/// Starts the commit log sync, the flush, compaction and repair schedules, and the parent
/// watch. Each reads the settings on every tick, so they follow run-time changes.
fn spawn_background(node: Arc<Node>, exit_with_parent: bool) {
    let every = |node: &Arc<Node>,
                 pick: fn(&ClusterSettings) -> f64,
                 work: fn(Arc<Node>) -> tokio::task::JoinHandle<()>| {
        let node = node.clone();
        tokio::spawn(async move {
            let mut last = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let interval = pick(&node.settings());
                if interval > 0.0 && last.elapsed().as_secs_f64() >= interval {
                    last = tokio::time::Instant::now();
                    let _ = work(node.clone()).await;
                }
            }
        });
    };
    let sync_node = node.clone();
    tokio::spawn(async move {
        loop {
            let period = match sync_node.settings().commitlog_sync {
                CommitlogSync::Periodic(ms) => ms,
                _ => 100,
            };
            tokio::time::sleep(Duration::from_millis(period)).await;
            sync_node.sync_log();
        }
    });
    every(
        &node,
        |s| s.flush_interval_s,
        |n| tokio::task::spawn_blocking(move || log_io("flush", n.flush().map(|_| ()))),
    );
    every(
        &node,
        |s| s.compaction_interval_s,
        |n| tokio::task::spawn_blocking(move || log_io("compaction", n.compact().map(|_| ()))),
    );
    every(
        &node,
        |s| s.repair_interval_s,
        |n| {
            tokio::spawn(async move {
                admin::repair(&n).await;
            })
        },
    );
    if exit_with_parent {
        tokio::spawn(exit_when_parent_is_gone());
    }
}

fn log_io(what: &str, result: std::io::Result<()>) {
    if let Err(e) = result {
        tracing::error!(error = %e, "{what} failed");
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
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
