//! What every handler takes from a request: its JSON body, a counter key or partition from
//! the path, the `?cl=` query; each refused with a 400 naming the problem.

use super::errors::ApiError;
use super::state::Node;
use crate::api::{ClQuery, CounterKey, DeleteScope};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use std::sync::Arc;

/// The largest request body a node accepts (413 past it).
pub const BODY_LIMIT: usize = 64 * 1024;

/// The node state every handler is given.
pub type Shared = State<Arc<Node>>;

/// A JSON body, or 400.
pub fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(t)| t).map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::Rejected(e.status(), e.body_text()),
        _ => ApiError::BadRequest(e.body_text()),
    })
}

/// A JSON body given as bytes (a link's request), held to the same rules as [`body`]'s.
pub fn json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.len() > BODY_LIMIT {
        let message = "Failed to buffer the request body: length limit exceeded";
        return Err(ApiError::Rejected(
            StatusCode::PAYLOAD_TOO_LARGE,
            message.into(),
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Data => {
                "Failed to deserialize the JSON body into the target type"
            }
            _ => "Failed to parse the request body as JSON",
        };
        ApiError::BadRequest(format!("{what}: {e}"))
    })
}

/// A counter key from the path, or 400.
pub fn key_of(partition: &str, cell: &str) -> Result<CounterKey, ApiError> {
    CounterKey::new(partition, cell).map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// A partition from the path, held to the same rules as a key's, or 400.
pub fn partition_of(partition: &str) -> Result<(), ApiError> {
    key_of(partition, "_").map(|_| ())
}

/// The `?cl=...` query, or 400.
pub fn query_of(query: Result<Query<ClQuery>, QueryRejection>) -> Result<ClQuery, ApiError> {
    query
        .map(|Query(q)| q)
        .map_err(|e| ApiError::BadRequest(e.body_text()))
}

/// The scope of a cell delete: `row` (the default) or `column`; `partition` is refused, since
/// a partition delete has a URL of its own.
pub fn cell_scope(query: &ClQuery) -> Result<DeleteScope, ApiError> {
    match query.scope.unwrap_or_default() {
        DeleteScope::Partition => Err(ApiError::BadRequest(
            "scope=partition is not a cell delete: DELETE /v1/counters/{partition} instead".into(),
        )),
        scope => Ok(scope),
    }
}
