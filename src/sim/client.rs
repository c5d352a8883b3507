//! The driver's clients in a simulation: each request goes to a node's router over the
//! simulated network, and its answer means what a real one would.

use super::net::{call_error, request, SimNet};
use crate::api::{ConsistencyLevel, CounterKey, DataCall, DeleteScope};
use crate::driver::{outcome_of, CounterClient, Outcome};
use std::sync::Arc;
use std::time::Duration;

/// Talks to simulated nodes as [`crate::driver::HttpClient`] talks to real ones.
pub struct SimClient {
    net: Arc<SimNet>,
    ids: Vec<String>,
    timeout: Duration,
}

impl SimClient {
    /// A client of the nodes `ids` on `net`, giving up on a request after `timeout`.
    pub fn new(net: Arc<SimNet>, ids: Vec<String>, timeout: Duration) -> Self {
        SimClient { net, ids, timeout }
    }

    async fn call(&self, node: usize, call: DataCall) -> Outcome {
        let id = &self.ids[node % self.ids.len()];
        let (method, url, body) = call.request(id);
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let sent = self.net.deliver(None, id, request(method, &target, body));
        let raw = match tokio::time::timeout(self.timeout, sent).await {
            Ok(answer) => answer.map_err(|e| call_error(Some(e))),
            Err(_) => Err(call_error(None)),
        };
        outcome_of(&call, raw)
    }
}

impl CounterClient for SimClient {
    async fn add(
        &self,
        node: usize,
        key: &CounterKey,
        delta: i64,
        cl: ConsistencyLevel,
    ) -> Outcome {
        let key = key.clone();
        self.call(node, DataCall::Add { key, delta, cl }).await
    }

    async fn read(&self, node: usize, key: &CounterKey, cl: ConsistencyLevel) -> Outcome {
        let key = key.clone();
        self.call(node, DataCall::Read { key, cl }).await
    }

    async fn delete(
        &self,
        node: usize,
        key: &CounterKey,
        scope: DeleteScope,
        cl: ConsistencyLevel,
    ) -> Outcome {
        let key = key.clone();
        self.call(node, DataCall::Delete { key, scope, cl }).await
    }

    async fn scan(&self, node: usize, partition: &str, cl: ConsistencyLevel) -> Outcome {
        let partition = partition.to_string();
        self.call(node, DataCall::Scan { partition, cl }).await
    }
}
