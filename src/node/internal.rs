//! Node-to-node endpoints: leading an increment, applying a replicated write, a replica's
//! read, the whole dump repair exchanges, and RavenDB's replicated counters.

use super::api::{Ack, ClQuery, LeadRequest, ReplicaRead};
use super::cells::Table;
use super::coordinator::lead_increment;
use super::errors::ApiError;
use super::raven::RavenCounter;
use super::server::Node;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

type Shared = State<Arc<Node>>;

/// A RavenDB counter's whole state, replicated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RavenWrite {
    /// `partition/cell`.
    pub key: String,
    /// The sender's state of it.
    pub counter: RavenCounter,
}

/// The `/internal/...` routes.
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route("/internal/lead", post(lead))
        .route("/internal/apply", post(apply))
        .route("/internal/read/{partition}", get(read))
        .route("/internal/dump", get(dump))
        .route("/internal/raven", post(raven))
}

fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(t)| t)
        .map_err(|e| ApiError::BadRequest(e.body_text()))
}

async fn lead(
    State(node): Shared,
    request: Result<Json<LeadRequest>, JsonRejection>,
) -> Result<Json<super::api::AddResponse>, ApiError> {
    lead_increment(&node, body(request)?).await.map(Json)
}

async fn apply(
    State(node): Shared,
    fragment: Result<Json<Table>, JsonRejection>,
) -> Result<Json<Ack>, ApiError> {
    node.apply_local(&body(fragment)?)?;
    Ok(Json(Ack {}))
}

/// This replica's read: its merged version, or the failure a tombstone flood causes.
pub(super) fn replica_read(
    node: &Node,
    partition: &str,
    cell: Option<&str>,
) -> Result<ReplicaRead, ApiError> {
    let now = node.now();
    let threshold = node.settings().tombstone_failure_threshold;
    let scanned = node.store().read(partition, cell, now);
    if scanned.tombstones > threshold {
        tracing::warn!(
            partition,
            tombstones = scanned.tombstones,
            "read aborted: tombstone_overwhelming"
        );
        return Err(ApiError::TombstoneOverwhelming {
            scanned: scanned.tombstones,
            threshold,
        });
    }
    Ok(ReplicaRead {
        partition: scanned.partition,
        tombstones: scanned.tombstones,
    })
}

async fn read(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ReplicaRead>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    replica_read(&node, &partition, query.cell.as_deref()).map(Json)
}

async fn dump(State(node): Shared) -> Json<Table> {
    let now = node.now();
    Json(node.store().dump(now))
}

async fn raven(
    State(node): Shared,
    write: Result<Json<RavenWrite>, JsonRejection>,
) -> Result<Json<Ack>, ApiError> {
    let write = body(write)?;
    node.raven().merge(&write.key, &write.counter);
    Ok(Json(Ack {}))
}
