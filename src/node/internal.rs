//! Node-to-node and admin endpoints: replicated shards, read repair, health and peers.

use super::api::{CounterState, Health, Peers, ShardWrite};
use super::errors::ApiError;
use super::server::Node;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use std::sync::Arc;

type Shared = State<Arc<Node>>;

/// The `/internal/...` and `/admin/...` routes.
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route("/internal/shards", post(apply_shard))
        .route(
            "/internal/counters/{partition}/{cell}",
            get(counter).post(repair),
        )
        .route("/admin/health", get(health))
        .route("/admin/peers", put(set_peers))
}

fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(t)| t)
        .map_err(|e| ApiError::BadRequest(e.body_text()))
}

async fn apply_shard(
    State(node): Shared,
    write: Result<Json<ShardWrite>, JsonRejection>,
) -> Result<(), ApiError> {
    let write = body(write)?;
    node.store()
        .apply_shard(&write.key, &write.owner, write.shard);
    Ok(())
}

async fn counter(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
) -> Json<CounterState> {
    let counter = node
        .store()
        .counter(&format!("{partition}/{cell}"))
        .cloned()
        .unwrap_or_default();
    Json(CounterState { counter })
}

async fn repair(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    state: Result<Json<CounterState>, JsonRejection>,
) -> Result<(), ApiError> {
    let state = body(state)?;
    node.store()
        .repair(&format!("{partition}/{cell}"), &state.counter);
    Ok(())
}

async fn health(State(node): Shared) -> Json<Health> {
    Json(Health {
        id: node.id.clone(),
        peers: node.replicas.peers(),
    })
}

async fn set_peers(
    State(node): Shared,
    peers: Result<Json<Peers>, JsonRejection>,
) -> Result<Json<Health>, ApiError> {
    let peers = body(peers)?;
    tracing::info!(peers = ?peers.peers, "peers set");
    node.replicas.set(peers.peers);
    Ok(health(State(node)).await)
}
