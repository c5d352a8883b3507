//! The driver's client of etcd, through its v3 JSON gateway (`/v3/kv/...`): a counter is a
//! key holding a decimal number; an increment reads the key and writes the sum in a
//! transaction that compares the key's mod revision, retried on conflict; a delete deletes
//! the key; a read is linearizable, or serializable when the workload asks.

use super::client::{ok, CounterClient, Failure, Outcome};
use crate::api::{ConsistencyLevel, CounterKey, DataCall};
use crate::workload::system::EtcdSpec;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use checkers::OpType;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// Talks to etcd members given as `(id, host:port)`.
pub struct EtcdClient {
    http: reqwest::Client,
    members: Vec<(String, String)>,
    timeout: Duration,
    spec: EtcdSpec,
}

impl EtcdClient {
    /// A client of `members`, giving up on an op after `timeout`.
    pub fn new(members: Vec<(String, String)>, timeout: Duration, spec: EtcdSpec) -> Self {
        let http = reqwest::Client::builder()
            .pool_idle_timeout(crate::api::IDLE_POOL_TIMEOUT)
            .build()
            .unwrap_or_default();
        EtcdClient {
            http,
            members,
            timeout,
            spec,
        }
    }

    fn member(&self, node: usize) -> &(String, String) {
        &self.members[node % self.members.len()]
    }

    /// `POST /v3/kv/{path}` with `body` on `addr`, by `deadline`.
    async fn post(
        &self,
        addr: &str,
        path: &str,
        body: Value,
        deadline: Instant,
    ) -> Result<Value, Failure> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::NotApplied("client_timeout".into()));
        }
        let url = format!("http://{addr}/v3/kv/{path}");
        let sent = self.http.post(url).json(&body).timeout(left).send().await;
        let response = sent.map_err(|e| match e.is_connect() {
            true => Failure::NotApplied("connection_refused".into()),
            false if e.is_timeout() => Failure::Unknown("client_timeout".into()),
            false => Failure::Unknown("connection_lost".into()),
        })?;
        let status = response.status().as_u16();
        let body: Value = response
            .json()
            .await
            .map_err(|_| Failure::Unknown("bad_response".into()))?;
        if (200..300).contains(&status) {
            return Ok(body);
        }
        let message = body.get("error").and_then(Value::as_str).unwrap_or("");
        let code = format!("etcd_{status}: {message}");
        // A request etcd gave up on ("request timed out", "leader changed") may yet be
        // committed; what it refused (4xx) was not.
        match status >= 500 {
            true => Err(Failure::Unknown(code)),
            false => Err(Failure::NotApplied(code)),
        }
    }

    /// The key's value and mod revision (0 when absent), read as asked.
    async fn range(
        &self,
        addr: &str,
        key: &str,
        serializable: bool,
        deadline: Instant,
    ) -> Result<(Option<i64>, i64), Failure> {
        let body = json!({ "key": B64.encode(key), "serializable": serializable });
        let answer = self.post(addr, "range", body, deadline).await?;
        let Some(kv) = answer.get("kvs").and_then(|k| k.get(0)) else {
            return Ok((None, 0));
        };
        let revision = number(kv.get("mod_revision")).unwrap_or(0);
        let value = kv
            .get("value")
            .and_then(Value::as_str)
            .and_then(|v| B64.decode(v).ok())
            .and_then(|v| String::from_utf8(v).ok());
        match value.map(|v| v.parse::<i64>()) {
            Some(Ok(v)) => Ok((Some(v), revision)),
            _ => Err(Failure::NotApplied("not_a_counter".into())),
        }
    }

    /// Adds `delta` by compare-and-swap on the key's mod revision, retried on conflict.
    async fn add(&self, addr: &str, key: &str, delta: i64) -> Result<(), Failure> {
        let deadline = Instant::now() + self.timeout;
        for _ in 0..=self.spec.cas_retries {
            // Every txn before this one was refused, and a range writes nothing: a failed
            // range leaves the add unapplied, whatever the cause.
            let read = self.range(addr, key, false, deadline).await;
            let (value, revision) = read.map_err(Failure::not_applied)?;
            let sum = value.unwrap_or(0).checked_add(delta);
            let sum = sum.ok_or_else(|| Failure::NotApplied("overflow".into()))?;
            let txn = json!({
                "compare": [{
                    "key": B64.encode(key),
                    "target": "MOD",
                    "result": "EQUAL",
                    "mod_revision": revision.to_string(),
                }],
                "success": [{
                    "request_put": { "key": B64.encode(key), "value": B64.encode(sum.to_string()) }
                }],
            });
            let answer = self.post(addr, "txn", txn, deadline).await?;
            if answer.get("succeeded").and_then(Value::as_bool) == Some(true) {
                return Ok(());
            }
        }
        Err(Failure::NotApplied("cas_conflicts".into()))
    }
}

/// An int64 as the gateway writes it: a JSON string of digits (or a number).
fn number(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::String(s) => s.parse().ok(),
        v => v.as_i64(),
    }
}

impl CounterClient for EtcdClient {
    async fn call(&self, node: usize, call: DataCall) -> Outcome {
        let (id, addr) = self.member(node).clone();
        match call {
            DataCall::Add { key, delta, .. } => {
                match self.add(&addr, &key.to_string(), delta).await {
                    Ok(()) => ok(Value::from(delta), id, None),
                    Err(f) => f.outcome(true),
                }
            }
            DataCall::Read { key, cl } => {
                let serializable = self.spec.serializable_reads || cl == ConsistencyLevel::One;
                let deadline = Instant::now() + self.timeout;
                match self
                    .range(&addr, &key.to_string(), serializable, deadline)
                    .await
                {
                    Ok((value, _)) => ok(value.map_or(Value::Null, Value::from), id, None),
                    Err(f) => f.outcome(false),
                }
            }
            DataCall::Delete { key, .. } => {
                let body = json!({ "key": B64.encode(key.to_string()) });
                let deadline = Instant::now() + self.timeout;
                match self.post(&addr, "deleterange", body, deadline).await {
                    Ok(_) => ok(Value::Null, id, None),
                    Err(f) => f.outcome(true),
                }
            }
            DataCall::Scan { .. } => Outcome::failed(OpType::Fail, "scan_not_supported_by_etcd"),
        }
    }

    /// The member's own state, serializable: whether every member holds the same.
    async fn final_read(&self, node: usize, key: &CounterKey) -> Outcome {
        let (id, addr) = self.member(node).clone();
        let deadline = Instant::now() + self.timeout;
        match self.range(&addr, &key.to_string(), true, deadline).await {
            Ok((value, _)) => ok(value.map_or(Value::Null, Value::from), id, None),
            Err(f) => f.outcome(false),
        }
    }
}
