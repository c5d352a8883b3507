//! Coordinated reads in Cassandra mode: which replicas are asked, speculative retry, the
//! merge of their versions, and blocking read repair of the ones that were behind.

use super::errors::ApiError;
use super::messages::{ReplicaRead, APPLY};
use super::peers::{gather, PeerError};
use super::plan::plan;
use super::state::Node;
use crate::api::{Ack, ConsistencyLevel};
use crate::node::core::cells::{Partition, Table};
use crate::node::core::store::merge_versions;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The path of an internal read of a partition (or one cell of it), percent-encoded.
fn internal_read_path(partition: &str, cell: Option<&str>) -> String {
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

/// Reads from as many replicas as `cl` needs (this node's own version first when it is one,
/// then live replicas in a random order, as Cassandra's snitch orders equally close ones),
/// asks the remaining live replicas too when the first have not all answered within
/// `speculative_retry_ms` (Cassandra's speculative retry), merges the versions, and repairs
/// the contacted replicas that were behind before answering (not at ONE). Returns the merged
/// version, the most tombstones a replica scanned, and warnings.
pub async fn coordinate_read(
    node: &Arc<Node>,
    partition: &str,
    cell: Option<&str>,
    cl: Option<ConsistencyLevel>,
) -> Result<(Partition, u64, Vec<String>), ApiError> {
    let settings = node.settings();
    let cl = cl.unwrap_or(settings.default_read_cl);
    let (replicas, block_for) = plan(node, partition, cl)?;
    let deadline = Instant::now() + settings.read_timeout();
    let mut order: Vec<String> = replicas
        .iter()
        .filter(|r| **r != node.id && node.peers.alive(r))
        .cloned()
        .collect();
    node.shuffle(&mut order);
    if replicas.contains(&node.id) {
        order.insert(0, node.id.clone());
    }
    let spares = order.split_off(block_for.min(order.len()));
    let (tx, mut rx) = mpsc::channel(replicas.len().max(1));
    let mut outstanding = order.len();
    for replica in order {
        ask(node, &tx, replica, partition, cell);
    }
    let mut spares = Some(spares);
    let speculate_at = Instant::now() + Duration::from_millis(settings.speculative_retry_ms);
    let mut versions: Vec<(String, ReplicaRead)> = Vec::new();
    while versions.len() < block_for {
        let wait = if spares.is_some() {
            speculate_at.min(deadline)
        } else {
            deadline
        };
        let answer = tokio::time::timeout_at(wait, rx.recv()).await;
        if let Ok(Some(_)) = &answer {
            outstanding -= 1;
        }
        match answer {
            Ok(Some((replica, Ok(read)))) => versions.push((replica, read)),
            Ok(Some((_, Err(e @ ApiError::TombstoneOverwhelming { .. })))) => return Err(e),
            Ok(Some((_, Err(_)))) | Err(_) => {
                // A replica failed, or the first are slow: ask the spares now; with none
                // left, give up as soon as too few requests are out to reach the level.
                if let Some(spares) = spares.take().filter(|_| Instant::now() < deadline) {
                    outstanding += spares.len();
                    for replica in spares {
                        ask(node, &tx, replica, partition, cell);
                    }
                } else if answer.is_err() || versions.len() + outstanding < block_for {
                    break;
                }
            }
            Ok(None) => break,
        }
    }
    drop(tx);
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

/// One replica's answer to a read, sent on `tx` when it comes.
type Answer = (String, Result<ReplicaRead, ApiError>);

/// Asks `replica` (this node, or a peer over the internal plane) for its version.
fn ask(
    node: &Arc<Node>,
    tx: &mpsc::Sender<Answer>,
    replica: String,
    partition: &str,
    cell: Option<&str>,
) {
    let (tx, node) = (tx.clone(), node.clone());
    let path = internal_read_path(partition, cell);
    let (partition, cell) = (partition.to_string(), cell.map(str::to_string));
    node.clone().peers.spawn(async move {
        let answer = if replica == node.id {
            node.replica_read(&partition, cell.as_deref())
        } else {
            node.peers
                .call::<(), ReplicaRead>(&replica, &path, None)
                .await
                .map_err(|e| match e {
                    PeerError::Status { status, body, .. } => ApiError::from_peer(status, &body, 0),
                    other => ApiError::Internal(other.to_string()),
                })
        };
        let _ = tx.send((replica, answer)).await;
    });
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
        .broadcast::<Table, Ack>(&remote, APPLY, &fragment);
    gather(acks, remote.len(), deadline).await;
}
