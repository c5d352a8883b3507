//! The node's router: the data plane of its mode, the internal and admin planes, and the
//! guard every request passes (loopback-only admin, pause, cut links).

use super::errors::ApiError;
use super::state::Node;
use super::transport::FROM_HEADER;
use super::{admin, cassandra, internal, ravendb};
use crate::api::Mode;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body a node accepts.
const BODY_LIMIT: usize = 64 * 1024;

/// Every route of a node: the data plane of its mode (chosen once, here), the node-to-node
/// plane and the admin plane, behind the guard and the body limit.
pub fn router(node: Arc<Node>) -> Router {
    let data_plane = match node.settings().mode {
        Mode::Cassandra => cassandra::routes(),
        Mode::Ravendb => ravendb::routes(),
    };
    Router::new()
        .merge(data_plane)
        .merge(internal::routes())
        .merge(admin::routes())
        .fallback(|uri: axum::http::Uri| async move { ApiError::NotFound(uri.path().to_string()) })
        .layer(axum::middleware::from_fn_with_state(node.clone(), guard))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(node)
}

/// Every request passes here: admin requests only from loopback; others wait while the node
/// is paused, and those from a peer whose link is cut are never answered in time.
async fn guard(
    State(node): State<Arc<Node>>,
    ConnectInfo(from): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path().starts_with("/admin/") {
        if !from.ip().is_loopback() {
            return ApiError::Forbidden.into_response();
        }
        return next.run(request).await;
    }
    while node.faults().paused {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sender = request
        .headers()
        .get(FROM_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(sender) = sender {
        if node.faults().cut.contains(&sender) {
            let settings = node.settings();
            tokio::time::sleep(settings.write_timeout() + settings.read_timeout()).await;
            return ApiError::Unavailable {
                alive: 0,
                block_for: 0,
            }
            .into_response();
        }
        node.peers.heard_from(&sender);
    }
    next.run(request).await
}
