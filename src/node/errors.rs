//! The node's error answers: a status code and the JSON body of DESIGN.md.

use super::api::ErrorBody;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// Everything a node request can end in besides success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request was malformed: 400.
    #[error("{0}")]
    BadRequest(String),
    /// Not enough replicas acknowledged a write in time; it may have been applied: 504.
    #[error("{received} of {block_for} replicas acknowledged the write in time")]
    WriteTimeout {
        /// Replicas that acknowledged, the leader included.
        received: usize,
        /// Replicas the consistency level needs.
        block_for: usize,
    },
    /// Not enough replicas answered a read in time: 504.
    #[error("{received} of {block_for} replicas answered the read in time")]
    ReadTimeout {
        /// Replicas that answered, the coordinator included.
        received: usize,
        /// Replicas the consistency level needs.
        block_for: usize,
    },
    /// The cluster cannot meet the consistency level; nothing was applied: 503.
    #[error("{alive} replicas are known alive, {block_for} are needed")]
    Unavailable {
        /// Replicas known alive.
        alive: usize,
        /// Replicas the consistency level needs.
        block_for: usize,
    },
    /// The request is valid but this node does not do it yet: 501.
    #[error("{0}")]
    NotImplemented(String),
    /// No such endpoint: 404.
    #[error("no such endpoint: {0}")]
    NotFound(String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ApiError::WriteTimeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "write_timeout"),
            ApiError::ReadTimeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "read_timeout"),
            ApiError::Unavailable { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::NotImplemented(_) => (StatusCode::NOT_IMPLEMENTED, "not_implemented"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let (received, block_for) = match self {
            ApiError::WriteTimeout {
                received,
                block_for,
            }
            | ApiError::ReadTimeout {
                received,
                block_for,
            } => (Some(received), Some(block_for)),
            ApiError::Unavailable { block_for, .. } => (None, Some(block_for)),
            _ => (None, None),
        };
        let body = ErrorBody {
            error: code.to_string(),
            message: self.to_string(),
            received,
            block_for,
        };
        (status, Json(body)).into_response()
    }
}
