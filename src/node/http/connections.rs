//! Serving the router on a listener: to clients over HTTP, to peers over their links
//! (`internode`, told apart by the first byte). Every HTTP connection has a header-read
//! timeout (a client that is slow to send a request's head, or idle between requests, is
//! dropped), and a shutdown waits a bounded time for the HTTP requests in flight.

use super::inbox::Inbox;
use super::internode;
use super::state::Node;
use crate::api::IDLE_POOL_TIMEOUT;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's head, or leave a connection idle; longer
/// than the bundled clients keep an idle connection, so they never reuse one being closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(IDLE_POOL_TIMEOUT.as_secs() * 2);

/// How long a shutdown waits for the requests in flight before it drops them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` (and, on links, `node`'s direct requests, when given) until
/// `shutdown` completes, then stops accepting and waits at most [`SHUTDOWN_GRACE`] for the
/// connections still open.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    node: Option<Arc<Node>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    // Links stop reading with the shutdown; what they were answering still goes out.
    let links = tokio_util::sync::CancellationToken::new();
    tokio::pin!(shutdown);
    loop {
        let (mut stream, from) = tokio::select! {
            // A shutdown first: a stream of connections never holds it off.
            biased;
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of file descriptors, say: wait for some to close rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let (router, http, watcher) = (router.clone(), http.clone(), graceful.watcher());
        let (links, inbox) = (links.clone(), Inbox::new(router.clone(), node.clone()));
        tokio::spawn(async move {
            // A peer's link or a client's HTTP: told apart by the first byte.
            let mut first = [0u8; 1];
            let peeked = tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await;
            if !matches!(peeked, Ok(Ok(1))) {
                return;
            }
            if first[0] == internode::MAGIC {
                // A link is no HTTP connection: the shutdown does not wait for it.
                drop(watcher);
                let mut magic = [0u8; 1];
                if stream.read_exact(&mut magic).await.is_ok() {
                    let hello_within = HEADER_READ_TIMEOUT;
                    internode::serve_link(stream, from, inbox, hello_within, links).await;
                }
                return;
            }
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    request.extensions_mut().insert(ConnectInfo(from));
                    router.clone().oneshot(request)
                });
            let connection = watcher.watch(http.serve_connection(TokioIo::new(stream), service));
            if let Err(e) = connection.await {
                tracing::debug!(%from, error = %e, "connection ended");
            }
        });
    }
    drop(listener);
    links.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "requests still in flight after {} s of shutdown were dropped",
            SHUTDOWN_GRACE.as_secs()
        );
    }
    Ok(())
}
