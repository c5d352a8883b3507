//! The node's router: the data plane of its mode, the internal and admin planes, and the
//! guard every request passes (the cluster's secret, pause, cut links).

use super::errors::{json_errors, ApiError};
use super::state::Node;
use super::transport::FROM_HEADER;
use super::{admin, cassandra, internal, ravendb};
use crate::api::secret::{self, SECRET_HEADER};
use crate::api::Mode;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The largest request body a node accepts (413 past it).
const BODY_LIMIT: usize = 64 * 1024;

/// The longest request target a node accepts (414 past it): a key of the longest kind,
/// percent-encoded, with its query, fits.
const URI_LIMIT: usize = 8 * 1024;

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
        .layer(axum::middleware::from_fn_with_state(node.clone(), guard))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn(json_errors))
        .with_state(node)
}

/// How long a handler may take, body upload included: twice the longer of the node's
/// timeouts and a second, so that a coordinator's own 504 always comes first.
fn request_timeout(node: &Node) -> Duration {
    let settings = node.settings();
    settings.write_timeout().max(settings.read_timeout()) * 2 + Duration::from_secs(1)
}

/// Answers 408 for a handler (a slow body upload, say) past [`request_timeout`].
async fn within_request_timeout(
    State(node): State<Arc<Node>>,
    request: Request,
    next: Next,
) -> Response {
    let limit = request_timeout(&node);
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Rejected(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request took over {} ms", limit.as_millis()),
        )
        .into_response(),
    }
}

/// Every request passes here: the admin and internal planes need the cluster's secret
/// (or, on a node without one, a loopback caller); admin requests then go straight through;
/// others wait while the node is paused, and those from a peer whose link is cut are never
/// answered in time (cut one way: acted on, and never answered in time).
async fn guard(
    State(node): State<Arc<Node>>,
    ConnectInfo(from): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |t| t.as_str().len());
    if target > URI_LIMIT {
        let message = format!("the request target is {target} bytes, over {URI_LIMIT}");
        return ApiError::Rejected(StatusCode::URI_TOO_LONG, message).into_response();
    }
    let path = request.uri().path();
    let admin = path.starts_with("/admin/");
    if admin || path.starts_with("/internal/") {
        let given = request.headers().get(SECRET_HEADER);
        let given = given.and_then(|v| v.to_str().ok()).unwrap_or_default();
        match &node.secret {
            Some(secret) if !secret::matches(secret, given) => {
                return ApiError::Unauthorized.into_response()
            }
            None if !is_loopback(from.ip()) => return ApiError::Forbidden.into_response(),
            _ => {}
        }
    }
    if admin {
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
            return lost(&node).await;
        }
        node.peers.heard_from(&sender);
        if node.faults().cut_to.contains(&sender) {
            // Cut one way: the request arrived and is acted on, but the answer is lost.
            let _ = next.run(request).await;
            return lost(&node).await;
        }
    }
    next.run(request).await
}

/// An answer that never arrives in time: the sender gives up before it is sent.
async fn lost(node: &Node) -> Response {
    let settings = node.settings();
    tokio::time::sleep(settings.write_timeout() + settings.read_timeout()).await;
    ApiError::Unavailable {
        alive: 0,
        block_for: 0,
    }
    .into_response()
}

/// Whether `ip` is a loopback address, an IPv4 one mapped into IPv6 (`::ffff:127.0.0.1`,
/// what a socket bound to `[::]` sees) included.
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        v4 => v4.is_loopback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_includes_ipv4_mapped_loopback_and_nothing_else() {
        for ip in ["127.0.0.1", "127.8.0.2", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["10.0.0.1", "::ffff:10.0.0.1", "2001:db8::1", "0.0.0.0"] {
            assert!(!is_loopback(ip.parse().expect("ip")), "{ip}");
        }
    }
}
