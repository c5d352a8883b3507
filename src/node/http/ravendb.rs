//! The data plane in RavenDB mode: every node owns its portion; an increment or a delete
//! changes this node's state and is replicated to the others in the background; reads are
//! local. Replicas merge with RavenDB's rules (a concurrent increment beats a delete).

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

/// Sends a counter's state to every peer without waiting (asynchronous replication).
fn replicate(node: &Arc<Node>, key: String, counter: RavenCounter) {
    let peers: Vec<String> = node.peers.addrs().into_keys().collect();
    drop(node.peers.broadcast::<RavenWrite, Ack>(
        &peers,
        "/internal/raven",
        &RavenWrite { key, counter },
    ));
}

/// An increment of this node's portion.
fn add(node: &Arc<Node>, key: &CounterKey, delta: i64) -> Result<AddResponse, ApiError> {
    let key = key.to_string();
    let state = node.raven().increment(&key, delta);
    replicate(node, key, state);
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
                .counters()
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect()
        }
    };
    for key in keys {
        let state = node.raven().delete(&key);
        replicate(node, key, state);
    }
    Ok(AddResponse {
        node: node.id.clone(),
    })
}

/// A local read.
fn read(node: &Arc<Node>, key: &CounterKey) -> ReadResponse {
    let value = node
        .raven()
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

/// Catch-up: sends every counter's state to every peer (RavenDB's replication, for links
/// that dropped messages). Returns the peers it went to.
pub async fn catch_up(node: &Arc<Node>) -> usize {
    let counters = node.raven().counters().clone();
    let peers = node.peers.live_peers();
    for (key, counter) in counters {
        let write = RavenWrite { key, counter };
        let acks = node
            .peers
            .broadcast::<RavenWrite, Ack>(&peers, "/internal/raven", &write);
        gather(
            acks,
            peers.len(),
            tokio::time::Instant::now() + node.settings().write_timeout(),
        )
        .await;
    }
    peers.len()
}
