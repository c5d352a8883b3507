//! The data plane in RavenDB mode: every node owns its portion; an increment or a delete
//! changes this node's state and is replicated to the others in the background; reads are
//! local. Replicas merge with RavenDB's rules (a concurrent increment beats a delete).

use super::api::{Ack, AddResponse, CounterKey, ReadResponse, ScanResponse};
use super::errors::ApiError;
use super::internal::RavenWrite;
use super::raven::RavenCounter;
use super::server::Node;
use std::sync::Arc;

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
pub fn add(node: &Arc<Node>, key: &CounterKey, delta: i64) -> Result<AddResponse, ApiError> {
    let key = key.to_string();
    let state = node.raven().increment(&key, delta);
    replicate(node, key, state);
    Ok(AddResponse {
        node: node.id.clone(),
    })
}

/// A delete of one counter, or of every counter of a partition.
pub fn delete(
    node: &Arc<Node>,
    partition: &str,
    cell: Option<&str>,
) -> Result<AddResponse, ApiError> {
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
pub fn read(node: &Arc<Node>, key: &CounterKey) -> ReadResponse {
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
pub fn scan(node: &Arc<Node>, partition: &str) -> ScanResponse {
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
        super::peers::gather(
            acks,
            peers.len(),
            tokio::time::Instant::now() + node.settings().write_timeout(),
        )
        .await;
    }
    peers.len()
}
