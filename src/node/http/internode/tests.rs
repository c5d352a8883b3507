//! Links end to end: a real listener serving a small router both ways (links and HTTP),
//! and the transport talking to it.

use super::LinkTransport;
use crate::api::secret::SECRET_HEADER;
use crate::node::http::connections::serve;
use crate::node::http::transport::{Message, Transport, TransportError, FROM_HEADER};
use axum::extract::ConnectInfo;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::Router;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

/// Echoes what a request carried; `/port` names the connection it came on; `/slow` answers
/// after a second.
fn router() -> Router {
    let header = |headers: &HeaderMap, name: &str| {
        let value = headers.get(name).and_then(|v| v.to_str().ok());
        value.unwrap_or("-").to_string()
    };
    Router::new()
        .route(
            "/internal/echo",
            post(move |headers: HeaderMap, body: String| async move {
                let from = header(&headers, FROM_HEADER);
                let secret = header(&headers, SECRET_HEADER);
                format!("{from} {secret} {body}")
            }),
        )
        .route(
            "/internal/port",
            get(
                |ConnectInfo(from): ConnectInfo<SocketAddr>| async move { from.port().to_string() },
            ),
        )
        .route(
            "/internal/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                "late"
            }),
        )
        .route(
            "/internal/refuse",
            get(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "no") }),
        )
}

/// Serves [`router`] on `addr` (port 0: any) until the returned sender is dropped.
async fn start(addr: &str) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind(addr).await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(listener, router(), None, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

fn message(path: &str, body: Option<&str>) -> Message {
    Message {
        from: "n2".into(),
        path: path.into(),
        body: body.map(|b| b.as_bytes().to_vec()),
    }
}

async fn text(transport: &LinkTransport, addr: &str, path: &str) -> Result<String, TransportError> {
    let reply = transport.send(addr, message(path, None)).await?;
    Ok(String::from_utf8_lossy(&reply.body).to_string())
}

#[tokio::test]
async fn concurrent_requests_on_one_link_each_get_their_own_answer() {
    let (addr, _stop) = start("127.0.0.1:0").await;
    let transport = LinkTransport::new(Duration::from_secs(2), Some("s3cret"));
    let calls = (0..200).map(|i| {
        let (transport, addr) = (&transport, addr.clone());
        async move {
            let body = format!("{{\"i\":{i}}}");
            let reply = transport
                .send(&addr, message("/internal/echo", Some(&body)))
                .await
                .expect("answered");
            (
                i,
                reply.status,
                String::from_utf8_lossy(&reply.body).to_string(),
            )
        }
    });
    for (i, status, body) in futures_util::future::join_all(calls).await {
        assert_eq!(status, 200);
        assert_eq!(body, format!("n2 s3cret {{\"i\":{i}}}"));
    }
    // One link carried them all.
    let first = text(&transport, &addr, "/internal/port")
        .await
        .expect("port");
    let again = text(&transport, &addr, "/internal/port")
        .await
        .expect("port");
    assert_eq!(first, again);
    // An error status comes back as it was, and HTTP still works on the same port.
    let refused = transport
        .send(&addr, message("/internal/refuse", None))
        .await;
    assert_eq!(refused.expect("answered").status, 503);
    let http = reqwest::get(format!("http://{addr}/internal/port"))
        .await
        .expect("http");
    assert_eq!(http.status(), 200);
}

#[tokio::test]
async fn a_peer_that_is_gone_is_not_delivered_to_and_a_restarted_one_is_reached_again() {
    let (addr, stop) = start("127.0.0.1:0").await;
    let transport = LinkTransport::new(Duration::from_millis(500), None);
    assert!(text(&transport, &addr, "/internal/port").await.is_ok());
    drop(stop);
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The listener is gone; the link it served may linger until the next message finds
    // it broken, and then a new link cannot connect.
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(text(&transport, &addr, "/internal/port").await);
    }
    assert!(
        matches!(answers.last(), Some(Err(TransportError::NotDelivered(_)))),
        "{answers:?}"
    );
    let (_again, _stop) = start(&addr).await;
    // Once the failed connect is older than the connect timeout, a new link is tried.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(text(&transport, &addr, "/internal/port").await.is_ok());
}

#[tokio::test]
async fn a_link_silent_past_the_timeout_is_replaced_and_a_busy_one_is_kept() {
    let (addr, _stop) = start("127.0.0.1:0").await;
    let transport = LinkTransport::new(Duration::from_millis(300), None);
    let port = text(&transport, &addr, "/internal/port")
        .await
        .expect("port");
    // Nothing came back on the link while the slow request waited: a new link follows.
    let slow = text(&transport, &addr, "/internal/slow").await;
    assert!(matches!(slow, Err(TransportError::NoAnswer(_))), "{slow:?}");
    let after = text(&transport, &addr, "/internal/port")
        .await
        .expect("port");
    assert_ne!(port, after);
    // Answers kept arriving while this slow one waited: the link stays.
    let busy = async {
        for _ in 0..20 {
            text(&transport, &addr, "/internal/port")
                .await
                .expect("port");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    };
    let (slow, ()) = tokio::join!(text(&transport, &addr, "/internal/slow"), busy);
    assert!(matches!(slow, Err(TransportError::NoAnswer(_))), "{slow:?}");
    let kept = text(&transport, &addr, "/internal/port")
        .await
        .expect("port");
    assert_eq!(after, kept);
}

#[tokio::test]
async fn after_a_failed_connect_messages_fail_at_once_until_the_connect_timeout_passes() {
    // A free port with nobody on it.
    let addr = {
        let probe = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        probe.local_addr().expect("addr").to_string()
    };
    let transport = LinkTransport::new(Duration::from_secs(2), None);
    let refused = text(&transport, &addr, "/internal/port").await;
    assert!(
        matches!(refused, Err(TransportError::NotDelivered(_))),
        "{refused:?}"
    );
    let (_server, _stop) = start(&addr).await;
    // Within the connect timeout (500 ms here) the failure stands: no connect is tried.
    let remembered = text(&transport, &addr, "/internal/port").await;
    assert!(
        matches!(remembered, Err(TransportError::NotDelivered(_))),
        "{remembered:?}"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(text(&transport, &addr, "/internal/port").await.is_ok());
}
