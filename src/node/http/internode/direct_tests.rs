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
use crate::node::http::messages::{APPLY, LEAD};
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

/// A lead of `delta` on counter `p/c`.
fn lead(delta: i64) -> Vec<u8> {
    let body = serde_json::json!({
        "partition": "p", "cell": "c", "delta": delta, "cl": "ONE", "timestamp": 1
    });
    body.to_string().into_bytes()
}

/// Counter `p/c` as a client reads it at ONE.
async fn count(addr: &str) -> serde_json::Value {
    let read = reqwest::get(format!("http://{addr}/v1/counters/p/c?cl=ONE"))
        .await
        .expect("read");
    let body: serde_json::Value = read.json().await.expect("JSON");
    body["value"].clone()
}

/// Sets the node's faults.
async fn set_faults(addr: &str, faults: serde_json::Value) {
    let set = reqwest::Client::new()
        .put(format!("http://{addr}/admin/faults"))
        .header(SECRET_HEADER, SECRET)
        .json(&faults)
        .send()
        .await
        .expect("faults");
    assert_eq!(set.status(), 200);
}

#[tokio::test]
async fn a_direct_request_is_answered_as_the_router_answers_it_refusals_included() {
    let data = tempfile::tempdir().expect("tempdir");
    let (addr, _stop) = start_node(data.path()).await;
    let oversized = format!("{{\"partitions\":{{}},\"pad\":\"{}\"}}", "x".repeat(70_000));
    let table: &[u8] = br#"{"partitions":{}}"#;
    let cases: [(&str, &str, &[u8], u16); 8] = [
        ("an apply with the secret", APPLY, table, 200),
        ("a lead with the secret", LEAD, &lead(1), 200),
        ("an apply with a wrong secret", APPLY, table, 401),
        ("a lead with a wrong secret", LEAD, &lead(1), 401),
        ("a body that is no JSON", APPLY, b"{not json", 400),
        (
            "a body of the wrong shape",
            APPLY,
            br#"{"partitions":7}"#,
            400,
        ),
        (
            "a lead of the wrong shape",
            LEAD,
            br#"{"partition":"p"}"#,
            400,
        ),
        ("a body over the limit", APPLY, oversized.as_bytes(), 413),
    ];
    for (case, path, body, status) in cases {
        let secret = if status == 401 { "wrong" } else { SECRET };
        let link = over_link(&addr, secret, path, body, Duration::from_secs(2))
            .await
            .expect("answered");
        let http = over_http(&addr, secret, path, body).await;
        assert_eq!(link.0, status, "{case}: {link:?}");
        assert_eq!(http.0, status, "{case}: {http:?}");
        let json = |body: &str| -> serde_json::Value { serde_json::from_str(body).expect("JSON") };
        let (link, http) = (json(&link.1), json(&http.1));
        match status {
            // The same answer; error messages come from different parsers, their codes agree.
            200 => assert_eq!(link, http, "{case}"),
            _ => assert_eq!(link["error"], http["error"], "{case}: {link} {http}"),
        }
    }
    // Both leads that were let through took effect.
    assert_eq!(count(&addr).await, 2);
}

#[tokio::test]
async fn a_direct_request_from_a_cut_peer_is_neither_acted_on_nor_answered_and_one_cut_to_is_acted_on(
) {
    let data = tempfile::tempdir().expect("tempdir");
    let (addr, _stop) = start_node(data.path()).await;
    let quick = Duration::from_millis(300);
    set_faults(&addr, serde_json::json!({"cut": ["n2"]})).await;
    let cut = over_link(&addr, SECRET, LEAD, &lead(5), quick).await;
    assert!(matches!(cut, Err(TransportError::NoAnswer(_))), "{cut:?}");
    assert_eq!(count(&addr).await, serde_json::Value::Null);
    set_faults(&addr, serde_json::json!({"cut": [], "cut_to": ["n2"]})).await;
    let cut_to = over_link(&addr, SECRET, LEAD, &lead(7), quick).await;
    assert!(
        matches!(cut_to, Err(TransportError::NoAnswer(_))),
        "{cut_to:?}"
    );
    assert_eq!(count(&addr).await, 7);
    // A peer whose links are whole is answered.
    let transport = LinkTransport::new(Duration::from_secs(2), Some(SECRET));
    let message = Message {
        from: "n3".into(),
        path: LEAD.into(),
        body: Some(lead(1)),
    };
    let other = transport.send(&addr, message).await.expect("answered");
    assert_eq!(other.status, 200);
    assert_eq!(count(&addr).await, 8);
}
