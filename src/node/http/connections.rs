//! Serving the router on a listener: every connection has a header-read timeout (a client
//! that is slow to send a request's head, or idle between requests, is dropped), and a
//! shutdown waits a bounded time for the requests in flight.

use crate::api::IDLE_POOL_TIMEOUT;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's head, or leave a connection idle; longer
/// than the bundled clients keep an idle connection, so they never reuse one being closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(IDLE_POOL_TIMEOUT.as_secs() * 2);

/// How long a shutdown waits for the requests in flight before it drops them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` completes, then stops accepting and waits
/// at most [`SHUTDOWN_GRACE`] for the connections still open.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    tokio::pin!(shutdown);
    loop {
        let (stream, from) = tokio::select! {
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
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(from));
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%from, error = %e, "connection ended");
            }
        });
    }
    drop(listener);
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
