//! Which replicas a Cassandra-mode request goes to, and how many of them must answer.

use super::errors::ApiError;
use super::state::Node;
use crate::api::ConsistencyLevel;
use crate::node::core::ring;

/// The replicas of a partition and how many of them `cl` needs; 503 when the failure
/// detector says fewer are alive (nothing is sent then).
pub fn plan(
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
