//! The driver's view of a counter service: a small trait, and its HTTP implementation.

use crate::node::api::{AddRequest, CounterKey, ErrorBody, ReadResponse, ScanResponse};
use crate::node::consistency::ConsistencyLevel;
use crate::workload::mix::DeleteScope;
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

    /// Deletes `key` (its row or column, or its whole partition) through node number `node`.
    fn delete(
        &self,
        node: usize,
        key: &CounterKey,
        scope: DeleteScope,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send;

    /// Reads every counter of `partition` through node number `node`.
    fn scan(
        &self,
        node: usize,
        partition: &str,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send;
}

/// Talks to nodes over the HTTP API of docs/node-api.md.
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

    fn partition_url(&self, node: usize, partition: &str, cl: ConsistencyLevel) -> reqwest::Url {
        let mut url = reqwest::Url::parse(&format!("http://{}/", self.addr(node)))
            .unwrap_or_else(|_| reqwest::Url::parse("http://127.0.0.1/").expect("static URL"));
        if let Ok(mut segments) = url.path_segments_mut() {
            segments
                .pop_if_empty()
                .extend(["v1", "counters", partition]);
        }
        url.query_pairs_mut().append_pair("cl", cl.as_str());
        url
    }

    /// Sends a request whose ok answer is a `T`, turned into an outcome by `ok`; `may_apply`
    /// says whether an unanswered request may still have taken effect.
    async fn outcome<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        may_apply: bool,
        ok: impl FnOnce(T) -> Outcome,
    ) -> Outcome {
        match request.send().await {
            Ok(r) if r.status().is_success() => match r.json::<T>().await {
                Ok(answer) => ok(answer),
                Err(_) => Outcome::failed(
                    if may_apply {
                        OpType::Info
                    } else {
                        OpType::Fail
                    },
                    "bad_response",
                ),
            },
            Ok(r) => error_outcome(r, may_apply).await,
            Err(e) => transport_outcome(&e, may_apply),
        }
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

fn ok(value: Value, node: String, tombstones: Option<u64>) -> Outcome {
    Outcome {
        kind: OpType::Ok,
        value,
        node: Some(node),
        error: None,
        tombstones,
    }
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
        let request = self.http.post(url).json(&AddRequest {
            delta,
            cl: Some(cl),
        });
        self.outcome(request, true, |a: crate::node::api::AddResponse| {
            ok(Value::from(delta), a.node, None)
        })
        .await
    }

    async fn read(&self, node: usize, key: &CounterKey, cl: ConsistencyLevel) -> Outcome {
        let mut url = key.url(self.addr(node), &["v1", "counters"]);
        url.query_pairs_mut().append_pair("cl", cl.as_str());
        self.outcome(self.http.get(url), false, |r: ReadResponse| {
            ok(
                r.value.map(Value::from).unwrap_or(Value::Null),
                r.node,
                Some(r.tombstones),
            )
        })
        .await
    }

    async fn delete(
        &self,
        node: usize,
        key: &CounterKey,
        scope: DeleteScope,
        cl: ConsistencyLevel,
    ) -> Outcome {
        let url = match scope {
            DeleteScope::Partition => self.partition_url(node, &key.partition, cl),
            DeleteScope::Row | DeleteScope::Column => {
                let mut url = key.url(self.addr(node), &["v1", "counters"]);
                url.query_pairs_mut().append_pair("cl", cl.as_str());
                if scope == DeleteScope::Column {
                    url.query_pairs_mut().append_pair("scope", "column");
                }
                url
            }
        };
        self.outcome(
            self.http.delete(url),
            true,
            |a: crate::node::api::AddResponse| ok(Value::Null, a.node, None),
        )
        .await
    }

    async fn scan(&self, node: usize, partition: &str, cl: ConsistencyLevel) -> Outcome {
        let url = self.partition_url(node, partition, cl);
        self.outcome(self.http.get(url), false, |r: ScanResponse| {
            ok(serde_json::json!(r.cells), r.node, Some(r.tombstones))
        })
        .await
    }
}
