//! The node's HTTP shell: the data plane of DESIGN.md, coordinating replicas around the store.

use super::api::{
    AddRequest, AddResponse, ClQuery, CounterKey, Listening, ReadResponse, ShardWrite,
};
use super::errors::ApiError;
use super::replicas::{gather, Replicas};
use super::shards::Counter;
use super::store::Store;
use super::{consistency::ConsistencyLevel, internal};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// How one node is started.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// The node's id, such as `n1`.
    pub id: String,
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The other replicas by id, as `host:port`.
    pub peers: BTreeMap<String, String>,
    /// How long a coordinator waits for write acknowledgements before answering 504.
    pub write_timeout: Duration,
    /// How long a coordinator waits for read answers before answering 504.
    pub read_timeout: Duration,
    /// Exit when the process that started this node goes away.
    pub exit_with_parent: bool,
}

/// A running node's state, shared by its request handlers.
pub struct Node {
    pub(super) id: String,
    pub(super) store: Mutex<Store>,
    pub(super) replicas: Replicas,
    write_timeout: Duration,
    read_timeout: Duration,
}

type Shared = State<Arc<Node>>;

impl Node {
    pub(super) fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn replica_count(&self) -> usize {
        self.replicas.peers().len() + 1
    }

    /// How many replicas `cl` needs, or 503 up front when the failure detector says the
    /// cluster cannot meet it (nothing is applied then).
    fn block_for(&self, cl: ConsistencyLevel) -> Result<usize, ApiError> {
        let block_for = cl.block_for(self.replica_count());
        let alive = self.replicas.alive();
        if alive < block_for {
            return Err(ApiError::Unavailable { alive, block_for });
        }
        Ok(block_for)
    }
}

/// Binds, prints the [`Listening`] line on stdout, and serves until SIGTERM or Ctrl-C.
pub async fn serve(config: NodeConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let line = Listening {
        id: config.id.clone(),
        addr: addr.to_string(),
    };
    println!("{}", serde_json::to_string(&line).unwrap_or_default());
    tracing::info!(id = %config.id, %addr, peers = config.peers.len(), "node listening");
    let node = Arc::new(Node {
        id: config.id.clone(),
        store: Mutex::new(Store::new(&config.id)),
        replicas: Replicas::new(config.peers, config.write_timeout.max(config.read_timeout)),
        write_timeout: config.write_timeout,
        read_timeout: config.read_timeout,
    });
    if config.exit_with_parent {
        tokio::spawn(exit_with_parent());
    }
    axum::serve(listener, router(node))
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!(id = %config.id, "node stopped");
    Ok(())
}

fn router(node: Arc<Node>) -> Router {
    Router::new()
        .route(
            "/v1/counters/{partition}/{cell}",
            post(add).get(read).delete(delete_cell),
        )
        .route(
            "/v1/counters/{partition}",
            get(scan).delete(delete_partition),
        )
        .merge(internal::routes())
        .fallback(|uri: axum::http::Uri| async move { ApiError::NotFound(uri.path().to_string()) })
        .with_state(node)
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

fn key_of(partition: &str, cell: &str) -> Result<CounterKey, ApiError> {
    CounterKey::new(partition, cell).map_err(|e| ApiError::BadRequest(e.to_string()))
}

fn cl_of(query: Result<Query<ClQuery>, QueryRejection>) -> Result<ConsistencyLevel, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    Ok(query.cl.unwrap_or_default())
}

/// The coordinator leads the increment itself (it is always a replica here), then waits for
/// the consistency level's acknowledgements.
async fn add(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    body: Result<Json<AddRequest>, JsonRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    let Json(request) = body.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let block_for = node.block_for(request.cl.unwrap_or_default())?;
    let deadline = Instant::now() + node.write_timeout;
    let shard = node
        .store()
        .lead_add(&key.to_string(), request.delta, now_micros());
    let acks = node.replicas.replicate(ShardWrite {
        key: key.to_string(),
        owner: node.id.clone(),
        shard,
    });
    let received = 1 + gather(acks, block_for - 1, deadline).await.len();
    if received < block_for {
        tracing::info!(%key, received, block_for, "write timed out");
        return Err(ApiError::WriteTimeout {
            received,
            block_for,
        });
    }
    Ok(Json(AddResponse {
        node: node.id.clone(),
    }))
}

/// Merges the coordinator's version with enough peers' to meet the consistency level, and
/// repairs the contacted replicas that were behind.
async fn read(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ReadResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    let block_for = node.block_for(cl_of(query)?)?;
    let deadline = Instant::now() + node.read_timeout;
    let local = node
        .store()
        .counter(&key.to_string())
        .cloned()
        .unwrap_or_default();
    let answers = if block_for > 1 {
        gather(node.replicas.fetch(&key), block_for - 1, deadline).await
    } else {
        Vec::new()
    };
    let received = 1 + answers.len();
    if received < block_for {
        return Err(ApiError::ReadTimeout {
            received,
            block_for,
        });
    }
    let mut merged: Counter = local.clone();
    for (_, counter) in &answers {
        merged.merge(counter);
    }
    if merged != local {
        node.store().repair(&key.to_string(), &merged);
    }
    for (peer, counter) in &answers {
        if *counter != merged {
            node.replicas.repair(peer, &key, &merged);
        }
    }
    let value = (!merged.shards.is_empty()).then(|| merged.value());
    Ok(Json(ReadResponse {
        value,
        tombstones: 0,
        node: node.id.clone(),
    }))
}

async fn delete_cell() -> ApiError {
    ApiError::NotImplemented("deletes are not supported by this node yet".into())
}

async fn delete_partition() -> ApiError {
    ApiError::NotImplemented("partition deletes are not supported by this node yet".into())
}

async fn scan() -> ApiError {
    ApiError::NotImplemented("partition scans are not supported by this node yet".into())
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
async fn exit_with_parent() {
    let parent = std::os::unix::process::parent_id();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if std::os::unix::process::parent_id() != parent {
            tracing::warn!("the process that started this node is gone; exiting");
            std::process::exit(0);
        }
    }
}
