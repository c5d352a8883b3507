//! The leader's part of a Cassandra increment: take the counter's lock within the write
//! timeout, update and log its own shard, send the shard to the other replicas, and wait
//! for the consistency level.

use super::errors::ApiError;
use super::messages::{LeadRequest, APPLY};
use super::peers::gather;
use super::state::Node;
use crate::api::{Ack, AddResponse};
use crate::node::core::cells::Table;
use crate::node::core::ring;
use std::sync::Arc;
use tokio::time::Instant;

/// The leader's part of an increment: under the counter's lock (taken within the write
/// timeout, else nothing is applied), update its own shard and log it; then send the shard to
/// the other replicas and wait for the consistency level.
pub async fn lead_increment(node: &Arc<Node>, lead: LeadRequest) -> Result<AddResponse, ApiError> {
    let settings = node.settings();
    let deadline = Instant::now() + settings.write_timeout();
    let replicas = ring::replicas(&node.peers.cluster(), &lead.partition, settings.rf);
    let block_for = lead.cl.block_for(replicas.len());
    let key = format!("{}/{}", lead.partition, lead.cell);
    let fragment = {
        let _locked = tokio::time::timeout_at(deadline, node.stripe(&key).lock())
            .await
            .map_err(|_| ApiError::WriteTimeout {
                received: 0,
                block_for,
            })?;
        node.lead_local(&lead.partition, &lead.cell, lead.delta, lead.timestamp)?
    };
    let others: Vec<String> = replicas.into_iter().filter(|r| *r != node.id).collect();
    let acks = node
        .peers
        .broadcast::<Table, Ack>(&others, APPLY, &fragment);
    let received = 1 + gather(acks, block_for.saturating_sub(1), deadline)
        .await
        .len();
    if received < block_for {
        tracing::info!(%key, received, block_for, "write timed out");
        return Err(ApiError::WriteTimeout {
            received,
            block_for,
        });
    }
    Ok(AddResponse {
        node: node.id.clone(),
    })
}
