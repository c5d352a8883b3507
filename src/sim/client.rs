//! The driver's clients in a simulation: each request goes to a node's router over the
//! simulated network, and its answer means what a real one would.

use super::net::{call_error, request, Sent, SimNet};
use crate::api::DataCall;
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
}

impl CounterClient for SimClient {
    async fn call(&self, node: usize, call: DataCall) -> Outcome {
        let id = &self.ids[node % self.ids.len()];
        let (method, url, body) = call.request(id);
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let sent = self
            .net
            .deliver(None, id, Sent::Client(request(method, &target, body)));
        let raw = match tokio::time::timeout(self.timeout, sent).await {
            Ok(answer) => answer.map_err(|e| call_error(Some(e))),
            Err(_) => Err(call_error(None)),
        };
        outcome_of(&call, raw)
    }
}
