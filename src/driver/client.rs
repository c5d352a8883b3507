//! The driver's view of a counter service: a small trait, and its HTTP implementation.

use crate::api::client::answer;
use crate::api::{AddResponse, ReadResponse, ScanResponse};
use crate::api::{CallError, ConsistencyLevel, CounterKey, DataCall, DataClient, DeleteScope};
use checkers::OpType;
use serde::de::DeserializeOwned;
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
    /// A request that got no usable answer: `Fail` (certainly not applied) or `Info`.
    pub fn failed(kind: OpType, error: impl Into<String>) -> Self {
        Outcome {
            kind,
            value: Value::Null,
            node: None,
            error: Some(error.into()),
            tombstones: None,
        }
    }
}

/// Why a request to a real system got no usable answer.
pub enum Failure {
    /// Certainly not applied: never sent, or refused by the server.
    NotApplied(String),
    /// May have been applied: sent, and no usable answer came.
    Unknown(String),
}

impl Failure {
    /// The same failure, known not to have been applied.
    pub fn not_applied(self) -> Failure {
        match self {
            Failure::Unknown(code) | Failure::NotApplied(code) => Failure::NotApplied(code),
        }
    }

    /// The op's outcome: a write that may have been applied (`may_apply`) is `Info`; a
    /// read, or anything certainly not applied, is `Fail`.
    pub fn outcome(self, may_apply: bool) -> Outcome {
        match self {
            Failure::Unknown(code) if may_apply => Outcome::failed(OpType::Info, code),
            Failure::Unknown(code) | Failure::NotApplied(code) => {
                Outcome::failed(OpType::Fail, code)
            }
        }
    }
}

/// A counter service the driver can talk to; another transport (a user's own service, a
/// simulated network) implements `call` without touching the generator.
pub trait CounterClient: Send + Sync + 'static {
    /// Sends one data-plane request through node number `node`.
    fn call(&self, node: usize, call: DataCall) -> impl Future<Output = Outcome> + Send;

    /// Adds `delta` to `key` through node number `node`.
    fn add(
        &self,
        node: usize,
        key: &CounterKey,
        delta: i64,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send {
        let key = key.clone();
        self.call(node, DataCall::Add { key, delta, cl })
    }

    /// Reads `key` through node number `node`.
    fn read(
        &self,
        node: usize,
        key: &CounterKey,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send {
        let key = key.clone();
        self.call(node, DataCall::Read { key, cl })
    }

    /// Deletes `key` (its row or column, or its whole partition) through node number `node`.
    fn delete(
        &self,
        node: usize,
        key: &CounterKey,
        scope: DeleteScope,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send {
        let key = key.clone();
        self.call(node, DataCall::Delete { key, scope, cl })
    }

    /// Reads `key` as node number `node` holds it once the cluster is healed, for the
    /// convergence check: by default a read at ALL through it.
    fn final_read(&self, node: usize, key: &CounterKey) -> impl Future<Output = Outcome> + Send {
        self.read(node, key, ConsistencyLevel::All)
    }

    /// Reads every counter of `partition` through node number `node`.
    fn scan(
        &self,
        node: usize,
        partition: &str,
        cl: ConsistencyLevel,
    ) -> impl Future<Output = Outcome> + Send {
        let partition = partition.to_string();
        self.call(node, DataCall::Scan { partition, cl })
    }
}

/// Talks to nodes over the HTTP API of docs/node-api.md.
pub struct HttpClient {
    data: DataClient,
    nodes: Vec<(String, String)>,
}

impl HttpClient {
    /// A client for nodes given as `(id, host:port)`, giving up on a request after `timeout`.
    pub fn new(nodes: Vec<(String, String)>, timeout: Duration) -> Self {
        HttpClient {
            data: DataClient::new(timeout),
            nodes,
        }
    }

    fn addr(&self, node: usize) -> &str {
        &self.nodes[node % self.nodes.len()].1
    }
}

/// What the answer to `call` means in the history's terms: `raw` is the node's status and
/// body, or why none came.
pub fn outcome_of(call: &DataCall, raw: Result<(u16, Vec<u8>), CallError>) -> Outcome {
    fn decoded<T: DeserializeOwned>(
        raw: Result<(u16, Vec<u8>), CallError>,
    ) -> Result<T, CallError> {
        raw.and_then(|(status, body)| answer(status, &body))
    }
    match call {
        DataCall::Add { delta, .. } => outcome(decoded::<AddResponse>(raw), true, |a| {
            ok(Value::from(*delta), a.node, None)
        }),
        DataCall::Read { .. } => outcome(decoded::<ReadResponse>(raw), false, |r| {
            let value = r.value.map(Value::from).unwrap_or(Value::Null);
            ok(value, r.node, Some(r.tombstones))
        }),
        DataCall::Delete { .. } => outcome(decoded::<AddResponse>(raw), true, |a| {
            ok(Value::Null, a.node, None)
        }),
        DataCall::Scan { .. } => outcome(decoded::<ScanResponse>(raw), false, |r| {
            ok(serde_json::json!(r.cells), r.node, Some(r.tombstones))
        }),
    }
}

/// A call's answer in the history's terms: `may_apply` says whether a request that got no
/// usable answer may still have taken effect (writes) or certainly did not (reads).
fn outcome<T>(
    answer: Result<T, CallError>,
    may_apply: bool,
    ok: impl FnOnce(T) -> Outcome,
) -> Outcome {
    let uncertain = if may_apply {
        OpType::Info
    } else {
        OpType::Fail
    };
    match answer {
        Ok(answer) => ok(answer),
        Err(CallError::NotSent { code }) => Outcome::failed(OpType::Fail, code),
        Err(CallError::NoAnswer { code }) => Outcome::failed(uncertain, code),
        Err(CallError::BadAnswer(_)) => Outcome::failed(uncertain, "bad_response"),
        // 503 never applied; 504, other 5xx and a 408 (the node gave up on a handler that
        // may have acted) may have; other 4xx were refused.
        Err(CallError::Status { status, code }) => {
            let kind = if (status >= 500 && status != 503) || status == 408 {
                uncertain
            } else {
                OpType::Fail
            };
            Outcome::failed(kind, code)
        }
    }
}

/// A request that succeeded: its value, the node that answered, the tombstones it scanned.
pub fn ok(value: Value, node: String, tombstones: Option<u64>) -> Outcome {
    Outcome {
        kind: OpType::Ok,
        value,
        node: Some(node),
        error: None,
        tombstones,
    }
}

impl CounterClient for HttpClient {
    async fn call(&self, node: usize, call: DataCall) -> Outcome {
        outcome_of(&call, self.data.raw(self.addr(node), &call).await)
    }
}

#[cfg(test)]
mod tests {
    use super::Failure;
    use checkers::OpType;

    #[test]
    fn only_a_write_that_may_have_applied_is_info() {
        let unknown = || Failure::Unknown("client_timeout".into());
        assert_eq!(unknown().outcome(true).kind, OpType::Info);
        assert_eq!(unknown().outcome(false).kind, OpType::Fail);
        assert_eq!(unknown().not_applied().outcome(true).kind, OpType::Fail);
        let refused = Failure::NotApplied("etcd_400".into());
        assert_eq!(refused.outcome(true).kind, OpType::Fail);
    }
}
