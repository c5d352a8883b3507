//! The receiving end: each request on a link is answered by the node's inbox in a task of
//! its own, and its answer goes back as a reply frame.

use super::wire::{self, Reply, Request};
use super::{feed_all, keep_alive};
use crate::node::http::inbox::{Inbox, PeerRequest};
use bytes::Bytes;
use futures_util::StreamExt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

/// Serves the link on `stream` (its [`super::MAGIC`] byte already read) from the peer at
/// `from` with `inbox`, until the peer closes it or `stop` is cancelled (the answers being
/// worked on still go out); a peer that sends no hello within `hello_within` is dropped.
pub async fn serve_link(
    stream: TcpStream,
    from: SocketAddr,
    inbox: Inbox,
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
    let (outbox, mut frames_out) = mpsc::unbounded_channel::<Bytes>();
    let writer = tokio::spawn(async move {
        let mut sink = FramedWrite::new(write, wire::reply_codec());
        if let Err(e) = feed_all(&mut sink, &mut frames_out).await {
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
        let (inbox, outbox, secret) = (inbox.clone(), outbox.clone(), secret.clone());
        tokio::spawn(async move {
            let (status, body) = inbox
                .answer(PeerRequest {
                    from: &request.from,
                    path: &request.path,
                    body: request.body,
                    addr: from,
                    secret: secret.as_deref(),
                })
                .await;
            let _ = outbox.send(
                Reply {
                    id: request.id,
                    status,
                    body,
                }
                .encode(),
            );
        });
    }
    // The answers still being worked on go out before the writer stops.
    drop(outbox);
    let _ = writer.await;
}
