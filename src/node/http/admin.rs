//! The admin and fault plane, answered on 127.0.0.1 only: health, peers, faults, flush,
//! compaction, repair, settings, and the oracle dump of the node's true state.

use super::errors::ApiError;
use super::messages;
use super::ravendb;
use super::request::{body, Shared};
use super::state::Node;
use crate::api::admin::{Compacted, Flushed, Repaired};
use crate::api::{Ack, ClusterSettings, Faults, FaultsUpdate, Health, Mode, PeerList};
use crate::node::core::cells::Table;
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

/// The `/admin/...` routes.
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route("/admin/health", get(health))
        .route("/admin/peers", put(set_peers))
        .route("/admin/faults", get(faults).put(set_faults))
        .route("/admin/flush", post(flush))
        .route("/admin/compact", post(compact))
        .route("/admin/repair", post(repair_now))
        .route("/admin/config", get(config).put(set_config))
        .route("/admin/oracle", get(oracle))
}

async fn health(State(node): Shared) -> Json<Health> {
    Json(Health {
        id: node.id.clone(),
        peers: node.peers.addrs(),
    })
}

async fn set_peers(
    State(node): Shared,
    peers: Result<Json<PeerList>, JsonRejection>,
) -> Result<Json<Health>, ApiError> {
    let peers = body(peers)?;
    tracing::info!(peers = ?peers.peers, "peers set");
    node.peers.set(peers.peers);
    Ok(health(State(node)).await)
}

async fn faults(State(node): Shared) -> Json<Faults> {
    Json(node.faults())
}

async fn set_faults(
    State(node): Shared,
    update: Result<Json<FaultsUpdate>, JsonRejection>,
) -> Result<Json<Faults>, ApiError> {
    let update = body(update)?;
    let now = {
        let mut faults = node.faults.write().unwrap_or_else(|e| e.into_inner());
        faults.update(update);
        faults.clone()
    };
    tracing::info!(faults = ?now, "faults changed");
    Ok(Json(now))
}

fn io_error(e: std::io::Error) -> ApiError {
    ApiError::Internal(e.to_string())
}

async fn flush(State(node): Shared) -> Result<Json<Flushed>, ApiError> {
    let flushed = node
        .blocking(|n| n.flush())
        .await
        .ok_or_else(|| ApiError::Internal("the flush panicked".into()))?
        .map_err(io_error)?;
    Ok(Json(Flushed { flushed }))
}

async fn compact(State(node): Shared) -> Result<Json<Compacted>, ApiError> {
    let purged = node
        .blocking(|n| n.compact())
        .await
        .ok_or_else(|| ApiError::Internal("the compaction panicked".into()))?
        .map_err(io_error)?;
    tracing::info!(purged, "compacted");
    Ok(Json(Compacted {
        purged_tombstones: purged,
    }))
}

/// Anti-entropy repair: take every reachable peer's dump, merge it here, then send the
/// merged dump back to each. Purgeable tombstones are never sent, so a replica repaired after
/// gc_grace brings back what they shadowed elsewhere. Returns the peers repaired with.
pub async fn repair(node: &Arc<Node>) -> usize {
    if node.settings().mode == Mode::Ravendb {
        return ravendb::catch_up(node).await;
    }
    let peers = node.peers.live_peers();
    let mut reached = Vec::new();
    for peer in &peers {
        match node
            .peers
            .call::<(), Table>(peer, "/internal/dump", None)
            .await
        {
            Ok(dump) => {
                if let Err(e) = node.apply_local(&dump) {
                    tracing::warn!(error = %e, "repair: could not apply a dump");
                }
                reached.push(peer.clone());
            }
            Err(e) => tracing::warn!(%peer, error = %e, "repair: peer unreachable"),
        }
    }
    let mine = {
        let now = node.now();
        node.data().store().dump(now)
    };
    for peer in &reached {
        if let Err(e) = node
            .peers
            .call::<Table, Ack>(peer, messages::APPLY, Some(&mine))
            .await
        {
            tracing::warn!(%peer, error = %e, "repair: could not send the merged data");
        }
    }
    tracing::info!(peers = reached.len(), "repaired");
    reached.len()
}

async fn repair_now(State(node): Shared) -> Json<Repaired> {
    Json(Repaired {
        repaired_with: repair(&node).await,
    })
}

async fn config(State(node): Shared) -> Json<ClusterSettings> {
    Json(node.settings())
}

/// Held while a settings change is merged and set, so that of two concurrent partial
/// changes neither is lost.
static CHANGING_SETTINGS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Changes the fields the body names; the others keep their values.
async fn set_config(
    State(node): Shared,
    change: Result<Json<Value>, JsonRejection>,
) -> Result<Json<ClusterSettings>, ApiError> {
    let Value::Object(change) = body(change)? else {
        return Err(ApiError::BadRequest(
            "expected a JSON object of the settings to change".into(),
        ));
    };
    let _changing = CHANGING_SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let mut settings = json!(node.settings());
    for (field, value) in change {
        settings[field] = value;
    }
    let settings: ClusterSettings =
        serde_json::from_value(settings).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if settings.mode != node.settings().mode {
        return Err(ApiError::BadRequest(
            "`mode` cannot change while a node runs: its data plane is chosen at start".into(),
        ));
    }
    if settings.commitlog_sync != node.settings().commitlog_sync {
        return Err(ApiError::BadRequest(
            "`commitlog_sync` cannot change while a node runs: the log is opened at start".into(),
        ));
    }
    settings
        .validate(node.peers.cluster().len())
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    node.set_settings(settings);
    Ok(Json(node.settings()))
}

async fn oracle(State(node): Shared) -> Json<Value> {
    let now = node.now();
    let mut oracle = node.data().store().oracle(now);
    let mode = node.settings().mode;
    // Each counter's value as a read served from this node alone would see it.
    let values: std::collections::BTreeMap<String, Option<i64>> = match mode {
        Mode::Ravendb => (node.raven().store().counters().iter())
            .map(|(key, counter)| (key.clone(), counter.value()))
            .collect(),
        Mode::Cassandra => (oracle["counters"].as_object().into_iter())
            .flatten()
            .map(|(key, counter)| (key.clone(), counter["value"].as_i64()))
            .collect(),
    };
    oracle["mode"] = json!(mode);
    oracle["values"] = json!(values);
    oracle["raven"] = json!(node.raven().store().counters());
    Json(oracle)
}
