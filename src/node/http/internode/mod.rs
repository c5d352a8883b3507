//! Internode messaging: node-to-node requests over one long-lived TCP connection per peer
//! (a link), as Cassandra's nodes talk over their own messaging port rather than per-request
//! HTTP. A link carries many requests at once, each with an id, and the frames that wait are
//! written together. The requests are the internal plane's own (path, sender, JSON body),
//! held by the same guard and answered by the same handlers as over HTTP; only the framing
//! differs, and the two every replicated write makes skip the router (`server`).
//!
//! The link shares the node's HTTP port: its first byte is [`MAGIC`], which no HTTP request
//! starts with. Then come length-delimited frames: a hello with the cluster's secret, then
//! requests one way and replies the other.

pub mod client;
pub mod server;
mod wire;

pub use client::LinkTransport;
pub use server::serve_link;

use bytes::Bytes;
use futures_util::SinkExt;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::codec::FramedWrite;

/// The first byte a link sends: HTTP requests start with a method name, never a zero byte.
pub const MAGIC: u8 = 0;

/// Feeds every frame from `inbox` to `sink`, flushing whenever none is left waiting; ends
/// when every sender is gone, or with the first write error.
async fn feed_all<W>(
    sink: &mut FramedWrite<W, tokio_util::codec::LengthDelimitedCodec>,
    inbox: &mut mpsc::UnboundedReceiver<Bytes>,
) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    while let Some(frame) = inbox.recv().await {
        sink.feed(frame).await?;
        while let Ok(more) = inbox.try_recv() {
            sink.feed(more).await?;
        }
        SinkExt::<Bytes>::flush(sink).await?;
    }
    Ok(())
}

/// Keeps a link's connection checked while idle (probes after 5 s idle, every second, three
/// unanswered close it), so that a link whose other end vanished behind a partition ends.
fn keep_alive(stream: &TcpStream) {
    let probes = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(5))
        .with_interval(Duration::from_secs(1))
        .with_retries(3);
    let _ = socket2::SockRef::from(stream).set_tcp_keepalive(&probes);
}

#[cfg(test)]
mod direct_tests;
#[cfg(test)]
mod tests;
