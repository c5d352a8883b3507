//! The guard every request passes, over HTTP (a middleware) or a link (called directly):
//! the cluster's secret for the admin and internal planes; then, but for admin requests, the
//! node's pause and its cut links; and the time a handler may take.

use super::errors::ApiError;
use super::state::Node;
use super::transport::FROM_HEADER;
use crate::api::secret::{self, SECRET_HEADER};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The longest request target a node accepts (414 past it): a key of the longest kind,
/// percent-encoded, with its query, fits.
const URI_LIMIT: usize = 8 * 1024;

/// What becomes of a request the guard lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passage {
    /// Acted on and answered.
    Answer,
    /// Acted on, and its answer never arrives in time: the node's link to the sender is cut
    /// one way.
    ActedOnAndLost,
    /// Never answered in time, nor acted on: the link from the sender is cut.
    Lost,
}

/// Whether a caller at `ip` that gave the secret `given` may use the admin and internal
/// planes: with the cluster's secret, or, on a node without one, from the loopback.
pub fn authorize(node: &Node, given: &str, ip: IpAddr) -> Result<(), ApiError> {
    match &node.secret {
        Some(secret) if !secret::matches(secret, given) => Err(ApiError::Unauthorized),
        None if !is_loopback(ip) => Err(ApiError::Forbidden),
        _ => Ok(()),
    }
}

/// Waits while the node is paused, then says what becomes of a request from the peer
/// `sender` (`None`: a client's); a request that gets through marks its sender as heard from.
pub async fn pass(node: &Node, sender: Option<&str>) -> Passage {
    while node.faults().paused {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let Some(sender) = sender else {
        return Passage::Answer;
    };
    if node.faults().cut.contains(sender) {
        return Passage::Lost;
    }
    node.peers.heard_from(sender);
    match node.faults().cut_to.contains(sender) {
        true => Passage::ActedOnAndLost,
        false => Passage::Answer,
    }
}

/// `handling`'s outcome, or 408 once it takes over [`request_timeout`].
pub async fn in_time<F: Future>(node: &Node, handling: F) -> Result<F::Output, ApiError> {
    let limit = request_timeout(node);
    tokio::time::timeout(limit, handling).await.map_err(|_| {
        ApiError::Rejected(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request took over {} ms", limit.as_millis()),
        )
    })
}

/// How long a handler may take, body upload included: twice the longer of the node's
/// timeouts and a second, so that a coordinator's own 504 always comes first.
fn request_timeout(node: &Node) -> Duration {
    let settings = node.settings();
    settings.write_timeout().max(settings.read_timeout()) * 2 + Duration::from_secs(1)
}

/// An answer that never arrives in time: the sender gives up before it is sent.
async fn lost(node: &Node) -> ApiError {
    let settings = node.settings();
    tokio::time::sleep(settings.write_timeout() + settings.read_timeout()).await;
    ApiError::Unavailable {
        alive: 0,
        block_for: 0,
    }
}

/// The guard over HTTP: a target over [`URI_LIMIT`] is refused, then [`authorize`] for the
/// admin and internal planes; admin requests go straight through, others by [`pass`].
pub async fn guard(
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
        if let Err(e) = authorize(&node, given, from.ip()) {
            return e.into_response();
        }
    }
    if admin {
        return next.run(request).await;
    }
    let sender = request
        .headers()
        .get(FROM_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let passage = pass(&node, sender.as_deref()).await;
    match through(&node, passage, next.run(request)).await {
        Ok(response) => response,
        Err(lost) => lost.into_response(),
    }
}

/// `handling`'s outcome for a request whose fate is `passage`: never run when it is lost,
/// run and then lost when it is acted on and lost.
pub async fn through<F: Future>(
    node: &Node,
    passage: Passage,
    handling: F,
) -> Result<F::Output, ApiError> {
    if passage == Passage::Lost {
        return Err(lost(node).await);
    }
    let outcome = handling.await;
    match passage {
        Passage::ActedOnAndLost => Err(lost(node).await),
        _ => Ok(outcome),
    }
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
