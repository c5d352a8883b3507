//! The driver's view of a counter service: a small trait, and its HTTP implementation.

use crate::node::api::{AddRequest, CounterKey, ErrorBody, ReadResponse};
use crate::node::consistency::ConsistencyLevel;
use checkers::OpType;
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

/// How one request ended, in the history's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `Ok`, `Fail` (certainly not applied) or `Info` (may have been applied).
    pub kind: OpType,
    /// A read's count (`null` when absent); null otherwise.
    pub value: Value,
    /// The node that answered.
    pub node: Option<String>,
    /// Why a fail or info.
    pub error: Option<String>,
    /// Tombstones a read scanned.
    pub tombstones: Option<u64>,
}

impl Outcome {
    fn failed(kind: OpType, error: impl Into<String>) -> Self {
        Outcome {
            kind,
            value: Value::Null,
            node: None,
            error: Some(error.into()),
            tombstones: None,
        }
    }
}

/// A counter service the driver can talk to; another transport (a user's own service, a
/// simulated network) implements this without touching the generator.
pub trait CounterClient: Send + Sync + 'static {
    /// Adds `delta` to `key` through node number `node`.
    fn add(
        &self,
        node: usize,
        key: &CounterKey,
        delta: i64,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send;

    /// Reads `key` through node number `node`.
    fn read(
        &self,
        node: usize,
        key: &CounterKey,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send;
}

/// Talks to nodes over the HTTP API of DESIGN.md.
pub struct HttpClient {
    http: reqwest::Client,
    nodes: Vec<(String, String)>,
}

impl HttpClient {
    /// A client for nodes given as `(id, host:port)`, giving up on a request after `timeout`.
    pub fn new(nodes: Vec<(String, String)>, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(64)
            .build()
            .unwrap_or_default();
        HttpClient { http, nodes }
    }

    fn addr(&self, node: usize) -> &str {
        &self.nodes[node % self.nodes.len()].1
    }
}

/// What a request that got no usable answer means: a request that was never sent certainly
/// did not apply; one that may have reached the node may have, unless `may_apply` is false.
fn transport_outcome(error: &reqwest::Error, may_apply: bool) -> Outcome {
    let certain = error.is_connect() || error.is_builder();
    let kind = if certain || !may_apply {
        OpType::Fail
    } else {
        OpType::Info
    };
    let what = if error.is_timeout() {
        "client_timeout"
    } else if error.is_connect() {
        "connection_refused"
    } else {
        "transport_error"
    };
    Outcome::failed(kind, what)
}

/// Reads an error answer: 503 never applied; 504 and other 5xx may have, unless `may_apply`
/// is false; 4xx were refused.
async fn error_outcome(response: reqwest::Response, may_apply: bool) -> Outcome {
    let status = response.status();
    let code = response
        .json::<ErrorBody>()
        .await
        .map(|b| b.error)
        .unwrap_or_else(|_| format!("http_{}", status.as_u16()));
    let uncertain = status.is_server_error() && status.as_u16() != 503;
    let kind = if uncertain && may_apply {
        OpType::Info
    } else {
        OpType::Fail
    };
    Outcome::failed(kind, code)
}

impl CounterClient for HttpClient {
    async fn add(
        &self,
        node: usize,
        key: &CounterKey,
        delta: i64,
        cl: ConsistencyLevel,
    ) -> Outcome {
        let url = key.url(self.addr(node), &["v1", "counters"]);
        let body = AddRequest {
            delta,
            cl: Some(cl),
        };
        match self.http.post(url).json(&body).send().await {
            Ok(r) if r.status().is_success() => Outcome {
                kind: OpType::Ok,
                value: Value::from(delta),
                node: Some(self.nodes[node % self.nodes.len()].0.clone()),
                error: None,
                tombstones: None,
            },
            Ok(r) => error_outcome(r, true).await,
            Err(e) => transport_outcome(&e, true),
        }
    }

    async fn read(&self, node: usize, key: &CounterKey, cl: ConsistencyLevel) -> Outcome {
        let mut url = key.url(self.addr(node), &["v1", "counters"]);
        url.query_pairs_mut().append_pair("cl", cl.as_str());
        let response = match self.http.get(url).send().await {
            Ok(r) if r.status().is_success() => r.json::<ReadResponse>().await,
            Ok(r) => return error_outcome(r, false).await,
            Err(e) => return transport_outcome(&e, false),
        };
        match response {
            Ok(read) => Outcome {
                kind: OpType::Ok,
                value: read.value.map(Value::from).unwrap_or(Value::Null),
                node: Some(read.node),
                error: None,
                tombstones: Some(read.tombstones),
            },
            Err(_) => Outcome::failed(OpType::Fail, "bad_response"),
        }
    }
}
