//! The node's error answers: a status code and the JSON body of docs/node-api.md.

use crate::api::ErrorBody;
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
    /// A replica went over the tombstone failure threshold and aborted the read: 500.
    #[error("a replica scanned {scanned} tombstones, over the failure threshold of {threshold}")]
    TombstoneOverwhelming {
        /// Tombstones scanned.
        scanned: u64,
        /// `tombstone_failure_threshold`.
        threshold: u64,
    },
    /// The node could not do its own part (its commit log could not be written): 500.
    #[error("{0}")]
    Internal(String),
    /// The endpoint is only for the loopback interface: 403.
    #[error("the admin and internal planes of a node without a cluster secret answer loopback callers only")]
    Forbidden,
    /// The request lacks the cluster's secret: 401.
    #[error("the admin and internal planes need the cluster's secret (header x-checker-secret)")]
    Unauthorized,
    /// No such endpoint: 404.
    #[error("no such endpoint: {0}")]
    NotFound(String),
    /// The request was refused before a handler saw it (method, size, path, time): the
    /// status given, with a code named after it.
    #[error("{1}")]
    Rejected(StatusCode, String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ApiError::WriteTimeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "write_timeout"),
            ApiError::ReadTimeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "read_timeout"),
            ApiError::Unavailable { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::TombstoneOverwhelming { .. } => {
                (StatusCode::INTERNAL_SERVER_ERROR, "tombstone_overwhelming")
            }
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            ApiError::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::Rejected(status, _) => (*status, code_of(*status)),
        }
    }
}

/// The error code of a status the node answers without a handler's say.
fn code_of(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "request_timeout",
        411 => "length_required",
        413 => "payload_too_large",
        414 => "uri_too_long",
        415 => "unsupported_media_type",
        422 => "unprocessable",
        431 => "headers_too_large",
        s if s >= 500 => "internal",
        _ => "rejected",
    }
}

/// The largest error text a node carries into a JSON body; a longer one is replaced by the
/// status's reason.
const ERROR_TEXT_LIMIT: usize = 4096;

/// Gives every error answer a JSON body: those of handlers already have one; those axum
/// makes itself (an unknown method, a path that does not decode, a body over the limit)
/// have plain text, which becomes the `message` of an [`ErrorBody`].
pub async fn json_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = (response.headers().get(axum::http::header::CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, ERROR_TEXT_LIMIT)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    let text = match text.is_empty() {
        true => status.canonical_reason().unwrap_or("refused").to_string(),
        false => text,
    };
    let mut json = ApiError::Rejected(status, text).into_response();
    // Keep the original's other headers (`Allow` on a 405, say).
    parts.headers.remove(axum::http::header::CONTENT_TYPE);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    json.headers_mut().extend(parts.headers);
    json
}

impl ApiError {
    /// Rebuilds the error a peer answered with, so a forwarded request fails as it did there.
    pub fn from_peer(status: u16, body: &serde_json::Value, block_for: usize) -> ApiError {
        let received = body["received"].as_u64().unwrap_or(0) as usize;
        match (status, body["error"].as_str()) {
            (503, _) => ApiError::Unavailable {
                alive: 0,
                block_for,
            },
            (500, Some("tombstone_overwhelming")) => ApiError::TombstoneOverwhelming {
                scanned: 0,
                threshold: 0,
            },
            (400, _) => ApiError::BadRequest(
                body["message"]
                    .as_str()
                    .unwrap_or("bad request")
                    .to_string(),
            ),
            _ => ApiError::WriteTimeout {
                received,
                block_for,
            },
        }
    }
}

impl ApiError {
    /// The error's JSON body, as docs/node-api.md gives it.
    fn body(&self) -> ErrorBody {
        let (_, code) = self.status_and_code();
        let (received, block_for) = match *self {
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
        ErrorBody {
            error: code.to_string(),
            message: self.to_string(),
            received,
            block_for,
        }
    }

    /// The error's status and JSON body, as a link's reply carries them.
    pub fn to_reply(&self) -> (u16, Vec<u8>) {
        let body = serde_json::to_vec(&self.body()).unwrap_or_default();
        (self.status_and_code().0.as_u16(), body)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status_and_code().0, Json(self.body())).into_response()
    }
}
