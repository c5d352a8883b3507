//! The receiving end: each request on a link is answered in a task of its own, and its
//! answer goes back as a reply frame. The two that every replicated write makes (lead,
//! apply) go through the guard's checks straight to their handlers; the others go through
//! the node's router as an HTTP request would (guard, secret, faults, handlers).

use super::wire::{self, Reply, Request};
use super::{feed_all, keep_alive};
use crate::api::secret::SECRET_HEADER;
use crate::node::http::guard::{self, Passage};
use crate::node::http::internal::Direct;
use crate::node::http::state::Node;
use crate::node::http::transport::FROM_HEADER;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use futures_util::StreamExt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Serves the link on `stream` (its [`super::MAGIC`] byte already read) from the peer at
/// `from` with `router` (and `node`'s handlers for the direct requests, when given), until
/// the peer closes it or `stop` is cancelled (the answers being worked on still go out); a
/// peer that sends no hello within `hello_within` is dropped.
pub async fn serve_link(
    stream: TcpStream,
    from: SocketAddr,
    router: Router,
    node: Option<Arc<Node>>,
    hello_within: Duration,
    stop: CancellationToken,
) {
    keep_alive(&stream);
    let (read, write) = stream.into_split();
    let mut frames = FramedRead::new(read, wire::request_codec());
    let hello = match tokio::time::timeout(hello_within, frames.next()).await {
        Ok(Some(Ok(frame))) => wire::read_hello(&frame),
        _ => return,
    };
    let Ok(secret) = hello else {
        return;
    };
    let (outbox, mut inbox) = mpsc::unbounded_channel::<Bytes>();
    let writer = tokio::spawn(async move {
        let mut sink = FramedWrite::new(write, wire::reply_codec());
        if let Err(e) = feed_all(&mut sink, &mut inbox).await {
            tracing::debug!(%from, error = %e, "a link's writes failed");
        }
    });
    loop {
        let frame = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            frame = frames.next() => frame,
        };
        // Past a frame too large, or once the answers can no longer go out, the link ends.
        let Some(Ok(frame)) = frame else {
            break;
        };
        if outbox.is_closed() {
            break;
        }
        let request = match Request::decode(frame.freeze()) {
            Ok(request) => request,
            Err(e) => {
                tracing::debug!(%from, error = %e, "a garbled frame ends the link");
                break;
            }
        };
        let (router, outbox, secret) = (router.clone(), outbox.clone(), secret.clone());
        let direct = node
            .clone()
            .zip(request.body.as_ref().and(Direct::of(&request.path)));
        tokio::spawn(async move {
            let id = request.id;
            let secret = secret.as_deref();
            let (status, body) = match direct {
                Some((node, direct)) => answer_direct(&node, direct, request, from, secret).await,
                None => answer(router, request, from, secret).await,
            };
            let _ = outbox.send(Reply { id, status, body }.encode());
        });
    }
    // The answers still being worked on go out before the writer stops.
    drop(outbox);
    let _ = writer.await;
}

/// The answer to a direct request: the guard's checks as [`guard::guard`] makes them, then
/// the handler within the request timeout; its status and body.
async fn answer_direct(
    node: &Arc<Node>,
    direct: Direct,
    request: Request,
    from: SocketAddr,
    secret: Option<&str>,
) -> (u16, Bytes) {
    let answered = async {
        guard::authorize(node, secret.unwrap_or_default(), from.ip())?;
        let passage = guard::pass(node, Some(&request.from)).await;
        if passage == Passage::Lost {
            return Err(guard::lost(node).await);
        }
        let body = request.body.unwrap_or_default();
        let answer = guard::in_time(node, direct.answer(node, &body)).await;
        if passage == Passage::ActedOnAndLost {
            return Err(guard::lost(node).await);
        }
        answer?
    };
    match answered.await {
        Ok(body) => (200, Bytes::from(body)),
        Err(e) => {
            let (status, body) = e.to_reply();
            (status, Bytes::from(body))
        }
    }
}

/// The router's answer to one request: its status and body.
async fn answer(
    router: Router,
    request: Request,
    from: SocketAddr,
    secret: Option<&str>,
) -> (u16, Bytes) {
    let method = match request.body {
        Some(_) => axum::http::Method::POST,
        None => axum::http::Method::GET,
    };
    let mut builder = axum::http::Request::builder()
        .method(method)
        .uri(request.path.as_str())
        .header(FROM_HEADER, request.from.as_str())
        .header(axum::http::header::CONTENT_TYPE, "application/json");
    if let Some(secret) = secret {
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
    http.extensions_mut().insert(ConnectInfo(from));
    let Ok(response) = router.oneshot(http).await;
    let status = response.status().as_u16();
    match axum::body::to_bytes(response.into_body(), wire::MAX_REPLY - 64).await {
        Ok(body) => (status, body),
        Err(e) => {
            let error = serde_json::json!({"error": "internal", "message": e.to_string()});
            (500, Bytes::from(error.to_string()))
        }
    }
}
