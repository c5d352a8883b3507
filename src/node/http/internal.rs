//! Node-to-node endpoints: leading an increment, applying a replicated write, a replica's
//! read, the whole dump repair exchanges, and RavenDB's replicated counters.

use super::errors::ApiError;
use super::leader::lead_increment;
use super::messages::{LeadRequest, RavenWrite, ReplicaRead, APPLY, LEAD};
use super::request::{body, json, query_of, Shared};
use super::state::Node;
use crate::api::{Ack, AddResponse, ClQuery};
use crate::node::core::cells::Table;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;

/// The `/internal/...` routes.
pub fn routes() -> Router<Arc<Node>> {
    Router::new()
        .route(LEAD, post(lead))
        .route(APPLY, post(apply))
        .route("/internal/read/{partition}", get(read))
        .route("/internal/dump", get(dump))
        .route("/internal/raven", post(raven))
}

async fn lead(
    State(node): Shared,
    request: Result<Json<LeadRequest>, JsonRejection>,
) -> Result<Json<AddResponse>, ApiError> {
    lead_increment(&node, body(request)?).await.map(Json)
}

async fn apply(
    State(node): Shared,
    fragment: Result<Json<Table>, JsonRejection>,
) -> Result<Json<Ack>, ApiError> {
    node.apply_local(&body(fragment)?)?;
    Ok(Json(Ack {}))
}

/// An internal request that a link hands straight to its handler, past the router: the
/// two every replicated write makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// `POST /internal/lead`.
    Lead,
    /// `POST /internal/apply`.
    Apply,
}

impl Direct {
    /// The direct request a POST to `path` is, if any.
    pub fn of(path: &str) -> Option<Direct> {
        match path {
            LEAD => Some(Direct::Lead),
            APPLY => Some(Direct::Apply),
            _ => None,
        }
    }

    /// Its handler's JSON answer to `body`, as the route's would be.
    pub async fn answer(self, node: &Arc<Node>, body: &[u8]) -> Result<Vec<u8>, ApiError> {
        let answer = match self {
            Direct::Lead => serde_json::to_vec(&lead_increment(node, json(body)?).await?),
            Direct::Apply => {
                node.apply_local(&json::<Table>(body)?)?;
                serde_json::to_vec(&Ack {})
            }
        };
        answer.map_err(|e| ApiError::Internal(e.to_string()))
    }
}

async fn read(
    State(node): Shared,
    Path(partition): Path<String>,
    query: Result<Query<ClQuery>, QueryRejection>,
) -> Result<Json<ReplicaRead>, ApiError> {
    let query = query_of(query)?;
    node.replica_read(&partition, query.cell.as_deref())
        .map(Json)
}

async fn dump(State(node): Shared) -> Json<Table> {
    let now = node.now();
    Json(node.data().store().dump(now))
}

async fn raven(
    State(node): Shared,
    writes: Result<Json<Vec<RavenWrite>>, JsonRejection>,
) -> Result<Json<Ack>, ApiError> {
    let writes = body(writes)?;
    let mut changed = false;
    {
        let mut raven = node.raven();
        for write in &writes {
            changed |= raven
                .merge(&write.key, &write.counter)
                .map_err(|e| ApiError::Internal(format!("journal: {e}")))?;
        }
    }
    if changed {
        node.replication.notify_waiters();
    }
    Ok(Json(Ack {}))
}
