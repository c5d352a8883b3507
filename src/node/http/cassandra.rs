//! The data plane in Cassandra mode: the node a client reached coordinates. It checks up front
//! that the consistency level can be met, has a replica lead each increment, sends deletes to
//! every replica, and merges and repairs the replicas a read contacts.

use super::errors::ApiError;
use super::leader::lead_increment;
use super::messages::{LeadRequest, ReplicaRead};
use super::peers::{gather, PeerError};
use super::request::{body, cell_scope, key_of, partition_of, query_of, Shared};
use super::state::Node;
use crate::api::{
    Ack, AddRequest, AddResponse, ClQuery, ConsistencyLevel, DeleteScope, ReadResponse,
    ScanResponse,
};
use crate::node::core::cells::{Partition, Table};
use crate::node::core::ring;
use crate::node::core::store::{merge_versions, tombstone};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The `/v1/counters/...` routes.
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route(
            "/v1/counters/{partition}/{cell}",
            post(add).get(read).delete(delete_cell),
        )
        .route(
            "/v1/counters/{partition}",
            get(scan).delete(delete_partition),
        )
}

/// The replicas of a partition and how many of them `cl` needs; 503 when the failure
/// detector says fewer are alive (nothing is sent then).
fn plan(
    node: &Node,
    partition: &str,
    cl: ConsistencyLevel,
) -> Result<(Vec<String>, usize), ApiError> {
    let replicas = ring::replicas(&node.peers.cluster(), partition, node.settings().rf);
    let block_for = cl.block_for(replicas.len());
    let alive = replicas.iter().filter(|r| node.peers.alive(r)).count();
    if alive < block_for {
        return Err(ApiError::Unavailable { alive, block_for });
    }
    Ok((replicas, block_for))
}

async fn add(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    request: Result<Json<AddRequest>, JsonRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    key_of(&partition, &cell)?;
    let request = body(request)?;
    let settings = node.settings();
    let cl = request.cl.unwrap_or(settings.default_write_cl);
    let (replicas, block_for) = plan(&node, &partition, cl)?;
    let lead = LeadRequest {
        partition,
        cell,
        delta: request.delta,
        cl,
    };
    if replicas.contains(&node.id) {
        return lead_increment(&node, lead).await.map(Json);
    }
    let alive: Vec<&String> = replicas.iter().filter(|r| node.peers.alive(r)).collect();
    let leader = alive[rand::random::<u32>() as usize % alive.len()];
    match node
        .peers
        .call::<_, AddResponse>(leader, "/internal/lead", Some(&lead))
        .await
    {
        Ok(answer) => Ok(Json(answer)),
        Err(PeerError::Status { status, body, .. }) => {
            Err(ApiError::from_peer(status, &body, block_for))
        }
        Err(_) => Err(ApiError::WriteTimeout {
            received: 0,
            block_for,
        }),
    }
}

async fn delete_cell(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    let key = key_of(&partition, &cell)?;
    let query = query_of(query)?;
    let scope = cell_scope(&query)?;
    delete(&node, scope, &key.partition, Some(&key.cell), query.cl)
        .await
        .map(Json)
}

async fn delete_partition(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    partition_of(&partition)?;
    let query = query_of(query)?;
    delete(&node, DeleteScope::Partition, &partition, None, query.cl)
        .await
        .map(Json)
}

/// A delete: a tombstone stamped with this coordinator's clock, sent to every replica.
async fn delete(
    node: &Arc<Node>,
    scope: DeleteScope,
    partition: &str,
    cell: Option<&str>,
    cl: Option<ConsistencyLevel>,
) -> Result<AddResponse, ApiError> {
    let settings = node.settings();
    let (replicas, block_for) = plan(node, partition, cl.unwrap_or(settings.default_write_cl))?;
    let deadline = Instant::now() + settings.write_timeout();
    let fragment = tombstone(scope, partition, cell, node.now());
    let mut received = 0;
    if replicas.contains(&node.id) {
        node.apply_local(&fragment)?;
        received += 1;
    }
    let others: Vec<String> = replicas.into_iter().filter(|r| *r != node.id).collect();
    let acks = node
        .peers
        .broadcast::<Table, Ack>(&others, "/internal/apply", &fragment);
    received += gather(acks, block_for.saturating_sub(received), deadline)
        .await
        .len();
    if received < block_for {
        return Err(ApiError::WriteTimeout {
            received,
            block_for,
        });
    }
    Ok(AddResponse {
        node: node.id.clone(),
    })
}

async fn read(
    State(node): Shared,
    Path((partition, cell)): Path<(String, String)>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ReadResponse>, ApiError> {
    key_of(&partition, &cell)?;
    let query = query_of(query)?;
    let (version, tombstones, warnings) =
        coordinate_read(&node, &partition, Some(&cell), query.cl).await?;
    let value = version
        .rows
        .get(&cell)
        .and_then(|r| r.counter.as_ref())
        .map(|c| c.counter.value());
    Ok(Json(ReadResponse {
        value,
        tombstones,
        node: node.id.clone(),
        warnings,
    }))
}

async fn scan(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ScanResponse>, ApiError> {
    partition_of(&partition)?;
    let query = query_of(query)?;
    let (version, tombstones, warnings) =
        coordinate_read(&node, &partition, None, query.cl).await?;
    let cells = version
        .rows
        .iter()
        .filter_map(|(c, r)| r.counter.as_ref().map(|k| (c.clone(), k.counter.value())))
        .collect();
    Ok(Json(ScanResponse {
        cells,
        tombstones,
        node: node.id.clone(),
        warnings,
    }))
}

/// The path of an internal read of a partition (or one cell of it), percent-encoded.
pub(super) fn internal_read_path(partition: &str, cell: Option<&str>) -> String {
    let mut url =
        reqwest::Url::parse("http://node/").unwrap_or_else(|_| unreachable!("a static URL parses"));
    if let Ok(mut segments) = url.path_segments_mut() {
        segments
            .pop_if_empty()
            .extend(["internal", "read", partition]);
    }
    if let Some(cell) = cell {
        url.query_pairs_mut().append_pair("cell", cell);
    }
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// Reads from the replicas until as many as `cl` needs answered (this node's own version
/// first when it is one), merges their versions, and repairs those that were behind before
/// answering (not at ONE). Returns the merged version, the most tombstones a replica scanned, and warnings.
async fn coordinate_read(
    node: &Arc<Node>,
    partition: &str,
    cell: Option<&str>,
    cl: Option<ConsistencyLevel>,
) -> Result<(Partition, u64, Vec<String>), ApiError> {
    let settings = node.settings();
    let cl = cl.unwrap_or(settings.default_read_cl);
    let (replicas, block_for) = plan(node, partition, cl)?;
    let deadline = Instant::now() + settings.read_timeout();
    let mut contacted: Vec<String> = replicas
        .iter()
        .filter(|r| **r == node.id)
        .cloned()
        .collect();
    contacted.extend(
        replicas
            .iter()
            .filter(|r| **r != node.id && node.peers.alive(r))
            .cloned(),
    );
    let (tx, rx) = mpsc::channel(contacted.len().max(1));
    for replica in &contacted {
        let (tx, node, replica) = (tx.clone(), node.clone(), replica.clone());
        let path = internal_read_path(partition, cell);
        let (partition, cell) = (partition.to_string(), cell.map(str::to_string));
        tokio::spawn(async move {
            let answer = if replica == node.id {
                node.replica_read(&partition, cell.as_deref())
            } else {
                node.peers
                    .call::<(), ReplicaRead>(&replica, &path, None)
                    .await
                    .map_err(|e| match e {
                        PeerError::Status { status, body, .. } => {
                            ApiError::from_peer(status, &body, 0)
                        }
                        other => ApiError::Internal(other.to_string()),
                    })
            };
            let _ = tx.send((replica, answer)).await;
        });
    }
    drop(tx);
    // Every replica thought alive is asked (a speculative read); the first `block_for`
    // versions answer the read.
    let mut rx = rx;
    let mut versions: Vec<(String, ReplicaRead)> = Vec::new();
    while versions.len() < block_for {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some((replica, Ok(read)))) => versions.push((replica, read)),
            Ok(Some((_, Err(e @ ApiError::TombstoneOverwhelming { .. })))) => return Err(e),
            Ok(Some((_, Err(_)))) => {}
            Ok(None) | Err(_) => break,
        }
    }
    if versions.len() < block_for {
        return Err(ApiError::ReadTimeout {
            received: versions.len(),
            block_for,
        });
    }
    let merged = merge_versions(versions.iter().map(|(_, r)| &r.partition));
    let tombstones = versions
        .iter()
        .map(|(_, r)| r.tombstones)
        .max()
        .unwrap_or(0);
    if cl != ConsistencyLevel::One {
        repair_stale(node, partition, &merged, &versions, deadline).await;
    }
    let mut warnings = Vec::new();
    if tombstones > settings.tombstone_warn_threshold {
        warnings.push(format!(
            "read {tombstones} tombstones, over the warn threshold of {}",
            settings.tombstone_warn_threshold
        ));
        tracing::warn!(partition, tombstones, "tombstone warn threshold exceeded");
    }
    Ok((merged, tombstones, warnings))
}

/// Blocking read repair: sends the merged version to every contacted replica that differed.
async fn repair_stale(
    node: &Arc<Node>,
    partition: &str,
    merged: &Partition,
    versions: &[(String, ReplicaRead)],
    deadline: Instant,
) {
    let fragment = Table::single(partition, merged.clone());
    let stale: Vec<String> = versions
        .iter()
        .filter(|(_, r)| r.partition != *merged)
        .map(|(replica, _)| replica.clone())
        .collect();
    let remote: Vec<String> = stale.iter().filter(|r| **r != node.id).cloned().collect();
    if stale.len() > remote.len() {
        if let Err(e) = node.apply_local(&fragment) {
            tracing::warn!(error = %e, "local read repair failed");
        }
    }
    let acks = node
        .peers
        .broadcast::<Table, Ack>(&remote, "/internal/apply", &fragment);
    gather(acks, remote.len(), deadline).await;
}
