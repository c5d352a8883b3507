//! What answers the requests a node's peers send it, over a link or the simulated network:
//! the two every replicated write makes (lead, apply) go through the guard's checks straight
//! to their handlers; the others go through the node's router as an HTTP request would
//! (guard, secret, faults, handlers).

use super::guard;
use super::internal::Direct;
use super::state::Node;
use super::transport::FROM_HEADER;
use crate::api::secret::SECRET_HEADER;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use tower::ServiceExt;

/// The largest body an answer carries: it may be a whole table (`/internal/dump`).
pub const MAX_ANSWER: usize = 1024 * 1024 * 1024 - 64;

/// A node's answerer of its peers' requests: its router, and the node itself for the direct
/// requests (none: every request goes through the router).
#[derive(Clone)]
pub struct Inbox {
    router: Router,
    node: Option<Arc<Node>>,
}

/// One request from a peer.
#[derive(Debug, Clone)]
pub struct PeerRequest<'a> {
    /// The sending node's id.
    pub from: &'a str,
    /// The path and query, such as `/internal/apply`.
    pub path: &'a str,
    /// The JSON body (a POST); none for a GET.
    pub body: Option<Bytes>,
    /// Where it came from.
    pub addr: SocketAddr,
    /// The cluster secret the sender gave, if any.
    pub secret: Option<&'a str>,
}

impl Inbox {
    /// Answers with `router`, and with `node`'s handlers for the direct requests when given.
    pub fn new(router: Router, node: Option<Arc<Node>>) -> Self {
        Inbox { router, node }
    }

    /// The router it answers the other requests with, and clients' too.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The answer to `request`: its status and body.
    pub async fn answer(&self, request: PeerRequest<'_>) -> (u16, Bytes) {
        let direct = request.body.as_ref().and(Direct::of(request.path));
        match self.node.as_ref().zip(direct) {
            Some((node, direct)) => answer_direct(node, direct, request).await,
            None => self.through_router(request).await,
        }
    }

    /// The router's answer to `request`.
    async fn through_router(&self, request: PeerRequest<'_>) -> (u16, Bytes) {
        let method = match request.body {
            Some(_) => axum::http::Method::POST,
            None => axum::http::Method::GET,
        };
        let mut builder = axum::http::Request::builder()
            .method(method)
            .uri(request.path)
            .header(FROM_HEADER, request.from)
            .header(axum::http::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = request.secret {
            builder = builder.header(SECRET_HEADER, secret);
        }
        let body = axum::body::Body::from(request.body.unwrap_or_default());
        let mut http = match builder.body(body) {
            Ok(http) => http,
            Err(e) => {
                let error = serde_json::json!({"error": "bad_request", "message": e.to_string()});
                return (400, Bytes::from(error.to_string()));
            }
        };
        http.extensions_mut().insert(ConnectInfo(request.addr));
        let Ok(response) = self.router.clone().oneshot(http).await;
        let status = response.status().as_u16();
        match axum::body::to_bytes(response.into_body(), MAX_ANSWER).await {
            Ok(body) => (status, body),
            Err(e) => {
                let error = serde_json::json!({"error": "internal", "message": e.to_string()});
                (500, Bytes::from(error.to_string()))
            }
        }
    }
}

/// The answer to a direct request: the guard's checks as [`guard::guard`] makes them, then
/// the handler within the request timeout.
async fn answer_direct(node: &Arc<Node>, direct: Direct, request: PeerRequest<'_>) -> (u16, Bytes) {
    let answered = async {
        let given = request.secret.unwrap_or_default();
        guard::authorize(node, given, request.addr.ip())?;
        let passage = guard::pass(node, Some(request.from)).await;
        let body = request.body.unwrap_or_default();
        let handling = guard::in_time(node, direct.answer(node, &body));
        guard::through(node, passage, handling).await??
    };
    match answered.await {
        Ok(body) => (200, Bytes::from(body)),
        Err(e) => {
            let (status, body) = e.to_reply();
            (status, Bytes::from(body))
        }
    }
}
