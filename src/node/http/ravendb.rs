//! The data plane in RavenDB mode: every node owns its portion; an increment or a delete
//! changes this node's state and is replicated to the others in the background (see
//! `replication.rs`); reads are local. Replicas merge with RavenDB's rules (a concurrent increment beats a delete).

use super::errors::ApiError;
use super::messages::RavenWrite;
use super::peers::gather;
use super::request::{body, cell_scope, key_of, partition_of, query_of, Shared};
use super::state::Node;
use crate::api::{Ack, AddRequest, AddResponse, ClQuery, CounterKey, ReadResponse, ScanResponse};
use crate::node::core::raven::RavenCounter;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;

/// The `/v1/counters/...` routes in RavenDB mode (the consistency level is accepted and
/// checked, but a RavenDB node always answers alone).
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route(
            "/v1/counters/{partition}/{cell}",
            post(add_route).get(read_route).delete(delete_cell_route),
        )
        .route(
            "/v1/counters/{partition}",
            get(scan_route).delete(delete_partition_route),
        )
}

async fn add_route(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    request: Result<Json<AddRequest>, JsonRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    let request = body(request)?;
    add(&node, &key, request.delta).map(Json)
}

async fn read_route(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ReadResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    query_of(query)?;
    Ok(Json(read(&node, &key)))
}

async fn delete_cell_route(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    cell_scope(&query_of(query)?)?;
    delete(&node, &key.partition, Some(&key.cell)).map(Json)
}

async fn delete_partition_route(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    partition_of(&partition)?;
    query_of(query)?;
    delete(&node, &partition, None).map(Json)
}

async fn scan_route(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ScanResponse>, ApiError> {
    partition_of(&partition)?;
    query_of(query)?;
    Ok(Json(scan(&node, &partition)))
}

/// A write the journal did not take: not acknowledged.
fn journal_error(e: std::io::Error) -> ApiError {
    ApiError::Internal(format!("journal: {e}"))
}

/// An increment of this node's portion.
fn add(node: &Arc<Node>, key: &CounterKey, delta: i64) -> Result<AddResponse, ApiError> {
    node.raven()
        .increment(&key.to_string(), delta)
        .map_err(journal_error)?;
    node.replication.notify_waiters();
    Ok(AddResponse {
        node: node.id.clone(),
    })
}

/// A delete of one counter, or of every counter of a partition.
fn delete(node: &Arc<Node>, partition: &str, cell: Option<&str>) -> Result<AddResponse, ApiError> {
    let keys: Vec<String> = match cell {
        Some(cell) => vec![format!("{partition}/{cell}")],
        None => {
            let prefix = format!("{partition}/");
            node.raven()
                .store()
                .counters()
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect()
        }
    };
    for key in keys {
        node.raven().delete(&key).map_err(journal_error)?;
    }
    node.replication.notify_waiters();
    Ok(AddResponse {
        node: node.id.clone(),
    })
}

/// A local read.
fn read(node: &Arc<Node>, key: &CounterKey) -> ReadResponse {
    let value = node
        .raven()
        .store()
        .get(&key.to_string())
        .and_then(RavenCounter::value);
    ReadResponse {
        value,
        tombstones: 0,
        node: node.id.clone(),
        warnings: Vec::new(),
    }
}

/// A local scan of a partition's live counters.
fn scan(node: &Arc<Node>, partition: &str) -> ScanResponse {
    let prefix = format!("{partition}/");
    let cells = node
        .raven()
        .store()
        .counters()
        .iter()
        .filter_map(|(k, c)| Some((k.strip_prefix(&prefix)?.to_string(), c.value()?)))
        .collect();
    ScanResponse {
        cells,
        tombstones: 0,
        node: node.id.clone(),
        warnings: Vec::new(),
    }
}

/// Catch-up (on repair): sends every counter's state to every live peer at once, besides
/// what the replication loops send. Returns the peers it went to.
pub async fn catch_up(node: &Arc<Node>) -> usize {
    let batch: Vec<RavenWrite> = (node.raven().store().counters().iter())
        .map(|(key, counter)| RavenWrite {
            key: key.clone(),
            counter: counter.clone(),
        })
        .collect();
    let peers = node.peers.live_peers();
    let acks = node
        .peers
        .broadcast::<Vec<RavenWrite>, Ack>(&peers, "/internal/raven", &batch);
    let deadline = tokio::time::Instant::now() + node.settings().write_timeout();
    gather(acks, peers.len(), deadline).await.len()
}
