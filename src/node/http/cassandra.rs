//! The data plane in Cassandra mode: the node a client reached coordinates. It checks up front
//! that the consistency level can be met, stamps each write, has a random live replica lead
//! each increment, sends deletes to every replica, and reads from as many replicas as the
//! level needs, merging and repairing the ones it contacted.

use super::errors::ApiError;
use super::leader::lead_increment;
use super::messages::{LeadRequest, APPLY, LEAD};
use super::peers::{gather, PeerError};
use super::plan::plan;
use super::read::coordinate_read;
use super::request::{body, cell_scope, key_of, partition_of, query_of, Shared};
use super::state::Node;
use crate::api::{
    Ack, AddRequest, AddResponse, ClQuery, ConsistencyLevel, DeleteScope, ReadResponse,
    ScanResponse,
};
use crate::node::core::cells::Table;
use crate::node::core::store::tombstone;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;
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
        timestamp: node.now(),
    };
    // The leader: a random live replica, as Cassandra's `findSuitableReplica` picks one in
    // the local data centre (this node too, when it is one).
    let alive: Vec<&String> = replicas.iter().filter(|r| node.peers.alive(r)).collect();
    let leader = *node.pick(&alive).ok_or(ApiError::Unavailable {
        alive: 0,
        block_for,
    })?;
    if *leader == node.id {
        return lead_increment(&node, lead).await.map(Json);
    }
    // Forwarded in a task of its own, so that a slow link still delivers it after the
    // coordinator stopped waiting, at the write timeout.
    let forward = {
        let (node, leader) = (node.clone(), leader.clone());
        node.clone().peers.spawn(async move {
            node.peers
                .call::<_, AddResponse>(&leader, LEAD, Some(&lead))
                .await
        })
    };
    match tokio::time::timeout(settings.write_timeout(), forward).await {
        Ok(Ok(Ok(answer))) => Ok(Json(answer)),
        Ok(Ok(Err(PeerError::Status { status, body, .. }))) => {
            Err(ApiError::from_peer(status, &body, block_for))
        }
        _ => Err(ApiError::WriteTimeout {
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
        .broadcast::<Table, Ack>(&others, APPLY, &fragment);
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
