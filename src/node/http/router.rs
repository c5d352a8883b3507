//! The node's router: the data plane of its mode, the internal and admin planes, behind the
//! guard every request passes (`guard`) and the body limit.

use super::errors::{json_errors, ApiError};
use super::request::BODY_LIMIT;
use super::state::Node;
use super::{admin, cassandra, guard, internal, ravendb};
use crate::api::Mode;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::sync::Arc;

/// Every route of a node: the data plane of its mode (chosen once, here), the node-to-node
/// plane and the admin plane, data and internal handlers within the request timeout, behind the guard and
/// the body limit; every error answer is JSON.
pub fn router(node: Arc<Node>) -> Router {
    let data_plane = match node.settings().mode {
        Mode::Cassandra => cassandra::routes(),
        Mode::Ravendb => ravendb::routes(),
    };
    // The request timeout covers the data and internal planes; the admin plane's repair
    // walks every peer and is bounded by its caller.
    Router::new()
        .merge(data_plane)
        .merge(internal::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            node.clone(),
            within_request_timeout,
        ))
        .merge(admin::routes())
        .fallback(|uri: axum::http::Uri| async move { ApiError::NotFound(uri.path().to_string()) })
        .layer(axum::middleware::from_fn_with_state(
            node.clone(),
            guard::guard,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn(json_errors))
        .with_state(node)
}

/// Answers 408 for a handler (a slow body upload, say) that takes too long.
async fn within_request_timeout(
    State(node): State<Arc<Node>>,
    request: Request,
    next: Next,
) -> Response {
    guard::in_time(&node, next.run(request))
        .await
        .unwrap_or_else(IntoResponse::into_response)
}
