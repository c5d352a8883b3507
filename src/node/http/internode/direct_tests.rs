//! The direct requests (lead, apply) on a link against a real node: answered as the router
//! answers them over HTTP, refusals included, and held by the same guard.

use super::LinkTransport;
use crate::api::secret::SECRET_HEADER;
use crate::api::ClusterSettings;
use crate::node::core::clock::SystemClock;
use crate::node::core::durable::Durable;
use crate::node::core::raven_journal::RavenDurable;
use crate::node::core::store::StoreSettings;
use crate::node::http::connections::serve;
use crate::node::http::messages::APPLY;
use crate::node::http::router::router;
use crate::node::http::state::{Node, NodeParts};
use crate::node::http::transport::{Message, Transport, TransportError, FROM_HEADER};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

const SECRET: &str = "s3cret";

/// A node `n1` with the cluster secret [`SECRET`], served on a free port (links and HTTP)
/// until the returned sender is dropped.
async fn start_node(data: &std::path::Path) -> (String, tokio::sync::oneshot::Sender<()>) {
    let settings = ClusterSettings::default();
    let store = StoreSettings::of(&settings);
    let (durable, _) = Durable::open("n1", store, settings.commitlog_sync, data).expect("data");
    let node = Arc::new(Node::new(NodeParts {
        id: "n1".into(),
        settings,
        data: durable,
        raven: RavenDurable::open("n1", data).expect("journal"),
        peers: BTreeMap::new(),
        transport: Arc::new(LinkTransport::new(Duration::from_secs(1), Some(SECRET))),
        clock: Arc::new(SystemClock),
        seed: 1,
        secret: Some(SECRET.into()),
        inline_io: false,
    }));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(
        listener,
        router(node.clone()),
        Some(node),
        async move {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

/// A POST of `body` to `path` on a link with `secret`, from peer `n2`: status and body.
async fn over_link(
    addr: &str,
    secret: &str,
    path: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<(u16, String), TransportError> {
    let transport = LinkTransport::new(timeout, Some(secret));
    let message = Message {
        from: "n2".into(),
        path: path.into(),
        body: Some(body.to_vec()),
    };
    let reply = transport.send(addr, message).await?;
    Ok((
        reply.status,
        String::from_utf8_lossy(&reply.body).to_string(),
    ))
}

/// The same POST over HTTP, through the router: status and body.
async fn over_http(addr: &str, secret: &str, path: &str, body: &[u8]) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .header(SECRET_HEADER, secret)
        .header(FROM_HEADER, "n2")
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .expect("http");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

#[tokio::test]
async fn a_direct_request_is_answered_as_the_router_answers_it_refusals_included() {
    let data = tempfile::tempdir().expect("tempdir");
    let (addr, _stop) = start_node(data.path()).await;
    let oversized = format!("{{\"partitions\":{{}},\"pad\":\"{}\"}}", "x".repeat(70_000));
    let cases: [(&str, &[u8], u16); 5] = [
        (
            "the cluster's secret and a good body",
            br#"{"partitions":{}}"#,
            200,
        ),
        ("a wrong secret", br#"{"partitions":{}}"#, 401),
        ("a body that is no JSON", b"{not json", 400),
        ("a body of the wrong shape", br#"{"partitions":7}"#, 400),
        ("a body over the limit", oversized.as_bytes(), 413),
    ];
    for (case, body, status) in cases {
        let secret = if status == 401 { "wrong" } else { SECRET };
        let link = over_link(&addr, secret, APPLY, body, Duration::from_secs(2))
            .await
            .expect("answered");
        let http = over_http(&addr, secret, APPLY, body).await;
        assert_eq!(link.0, status, "{case}: {link:?}");
        assert_eq!(http.0, status, "{case}: {http:?}");
        // The error bodies name the same code; their messages come from different parsers.
        let code = |body: &str| -> serde_json::Value {
            let json: serde_json::Value = serde_json::from_str(body).expect("JSON");
            json["error"].clone()
        };
        assert_eq!(code(&link.1), code(&http.1), "{case}: {link:?} {http:?}");
    }
}

#[tokio::test]
async fn a_direct_request_from_a_cut_peer_is_never_answered_in_time_and_one_from_another_is() {
    let data = tempfile::tempdir().expect("tempdir");
    let (addr, _stop) = start_node(data.path()).await;
    let faults = reqwest::Client::new()
        .put(format!("http://{addr}/admin/faults"))
        .header(SECRET_HEADER, SECRET)
        .json(&serde_json::json!({"cut": ["n2"]}))
        .send()
        .await
        .expect("faults");
    assert_eq!(faults.status(), 200);
    let body = br#"{"partitions":{}}"#;
    let cut = over_link(&addr, SECRET, APPLY, body, Duration::from_millis(300)).await;
    assert!(matches!(cut, Err(TransportError::NoAnswer(_))), "{cut:?}");
    let transport = LinkTransport::new(Duration::from_secs(2), Some(SECRET));
    let message = Message {
        from: "n3".into(),
        path: APPLY.into(),
        body: Some(body.to_vec()),
    };
    let other = transport.send(&addr, message).await.expect("answered");
    assert_eq!(other.status, 200);
}
