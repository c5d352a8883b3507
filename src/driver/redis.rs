//! The driver's client of Redis with Sentinel, over the `redis` crate: the clients share one
//! connection to the primary that the sentinels name, keep it until it fails (a timeout, a
//! lost connection, or `READONLY` from a demoted primary), and then ask the sentinels
//! again, as Sentinel-aware client libraries do. `INCRBY` adds, `DEL` deletes, `GET` reads;
//! with `wait_replicas`, each write is followed by `WAIT`.

use super::client::{ok, CounterClient, Failure, Outcome};
use crate::api::{CounterKey, DataCall};
use crate::systems::redis::primary;
use checkers::OpType;
use redis::aio::MultiplexedConnection;
use serde_json::Value;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::{timeout_at, Instant};

/// Talks to the primary of a Redis cluster that sentinels watch.
pub struct RedisClient {
    members: Vec<(String, String)>,
    sentinels: Vec<String>,
    timeout: Duration,
    wait_replicas: u32,
    /// The primary's address and the connection to it, once found.
    primary: Mutex<Option<(String, MultiplexedConnection)>>,
}

impl RedisClient {
    /// A client of the Redis processes `members` (`(id, host:port)`) whose primary the
    /// `sentinels` name, giving up on an op after `timeout`.
    pub fn new(
        members: Vec<(String, String)>,
        sentinels: Vec<String>,
        timeout: Duration,
        wait_replicas: u32,
    ) -> Self {
        RedisClient {
            members,
            sentinels,
            timeout,
            wait_replicas,
            primary: Mutex::new(None),
        }
    }

    /// The id of the member at `addr` (the address itself when it is none of them).
    fn id_of(&self, addr: &str) -> String {
        let found = self.members.iter().find(|(_, a)| a == addr);
        found.map_or_else(|| addr.to_string(), |(id, _)| id.clone())
    }

    /// The connection to the primary, found through the sentinels when there is none.
    async fn connection(&self) -> Result<(String, MultiplexedConnection), Failure> {
        let mut held = self.primary.lock().await;
        if let Some((addr, connection)) = held.as_ref() {
            return Ok((addr.clone(), connection.clone()));
        }
        let addr = primary(&self.sentinels).await;
        let addr = addr.ok_or_else(|| Failure::NotApplied("no_primary".into()))?;
        let connection = connect(&addr).await?;
        *held = Some((addr.clone(), connection.clone()));
        Ok((addr, connection))
    }

    /// Forgets the connection to `addr`, so that the next op asks the sentinels again.
    async fn forget(&self, addr: &str) {
        let mut held = self.primary.lock().await;
        if held.as_ref().is_some_and(|(a, _)| a == addr) {
            *held = None;
        }
    }

    /// Runs `cmd` on the primary by `deadline`: its answer and the primary's address.
    async fn on_primary<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
        deadline: Instant,
    ) -> Result<(T, String), Failure> {
        let found = timeout_at(deadline, self.connection()).await;
        let (addr, mut connection) = match found {
            Ok(found) => found?,
            Err(_) => return Err(Failure::NotApplied("client_timeout".into())),
        };
        let answer = match timeout_at(deadline, cmd.query_async::<T>(&mut connection)).await {
            Ok(Ok(answer)) => return Ok((answer, addr)),
            Ok(Err(e)) => failure(&e),
            Err(_) => Failure::Unknown("client_timeout".into()),
        };
        self.forget(&addr).await;
        Err(answer)
    }

    /// A write on the primary, then `WAIT` when asked: the primary's id.
    async fn write(&self, cmd: &redis::Cmd) -> Result<String, Failure> {
        let deadline = Instant::now() + self.timeout;
        if self.wait_replicas == 0 {
            let (_, addr) = self.on_primary::<redis::Value>(cmd, deadline).await?;
            return Ok(self.id_of(&addr));
        }
        // `WAIT` counts the replicas that have this connection's writes, and holds the
        // connection meanwhile: such a write gets a connection of its own.
        let timed_out = || Failure::NotApplied("client_timeout".into());
        let found = timeout_at(deadline, self.connection()).await;
        let (addr, _) = found.map_err(|_| timed_out())??;
        let own = timeout_at(deadline, connect(&addr)).await;
        let mut own = own.map_err(|_| timed_out())??;
        let written = match timeout_at(deadline, cmd.query_async::<redis::Value>(&mut own)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(failure(&e)),
            Err(_) => Err(Failure::Unknown("client_timeout".into())),
        };
        if let Err(e) = written {
            self.forget(&addr).await;
            return Err(e);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let mut wait = redis::cmd("WAIT");
        wait.arg(self.wait_replicas)
            .arg(left.as_millis().max(1) as u64);
        let acked = timeout_at(deadline, wait.query_async::<u64>(&mut own)).await;
        // Applied on the primary, not known to survive it: the outcome is unknown.
        match acked {
            Ok(Ok(n)) if n >= u64::from(self.wait_replicas) => Ok(self.id_of(&addr)),
            _ => Err(Failure::Unknown("not_replicated".into())),
        }
    }
}

/// Opens a connection to `addr` (no commands sent yet but the handshake).
async fn connect(addr: &str) -> Result<MultiplexedConnection, Failure> {
    let client = redis::Client::open(format!("redis://{addr}/"))
        .map_err(|e| Failure::NotApplied(format!("bad_address: {e}")))?;
    // No response timeout of the crate's own (500 ms): the op's deadline is the workload's.
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let connection = client
        .get_multiplexed_async_connection_with_config(&config)
        .await;
    connection.map_err(|_| Failure::NotApplied("connection_refused".into()))
}

/// What an error from a sent command means: one the server answered was not applied;
/// a lost connection may have been.
fn failure(error: &redis::RedisError) -> Failure {
    match error.code() {
        Some(code) => Failure::NotApplied(format!("redis_{}", code.to_lowercase())),
        None if error.is_connection_refusal() => Failure::NotApplied("connection_refused".into()),
        None => Failure::Unknown("connection_lost".into()),
    }
}

impl CounterClient for RedisClient {
    async fn call(&self, _node: usize, call: DataCall) -> Outcome {
        match call {
            DataCall::Add { key, delta, .. } => {
                let mut cmd = redis::cmd("INCRBY");
                cmd.arg(key.to_string()).arg(delta);
                match self.write(&cmd).await {
                    Ok(id) => ok(Value::from(delta), id, None),
                    Err(f) => f.outcome(true),
                }
            }
            DataCall::Delete { key, .. } => {
                let mut cmd = redis::cmd("DEL");
                cmd.arg(key.to_string());
                match self.write(&cmd).await {
                    Ok(id) => ok(Value::Null, id, None),
                    Err(f) => f.outcome(true),
                }
            }
            DataCall::Read { key, .. } => {
                let mut cmd = redis::cmd("GET");
                cmd.arg(key.to_string());
                let deadline = Instant::now() + self.timeout;
                match self.on_primary::<Option<i64>>(&cmd, deadline).await {
                    Ok((value, addr)) => ok(
                        value.map_or(Value::Null, Value::from),
                        self.id_of(&addr),
                        None,
                    ),
                    Err(f) => f.outcome(false),
                }
            }
            DataCall::Scan { .. } => Outcome::failed(OpType::Fail, "scan_not_supported_by_redis"),
        }
    }

    /// `GET` on member `node` itself, primary or replica: whether every member holds the
    /// same once the cluster is healed.
    async fn final_read(&self, node: usize, key: &CounterKey) -> Outcome {
        let (id, addr) = self.members[node % self.members.len()].clone();
        let mut cmd = redis::cmd("GET");
        cmd.arg(key.to_string());
        let asked = tokio::time::timeout(self.timeout, async {
            let mut connection = connect(&addr).await?;
            let value = cmd.query_async::<Option<i64>>(&mut connection).await;
            value.map_err(|e| failure(&e))
        });
        match asked.await {
            Ok(Ok(value)) => ok(value.map_or(Value::Null, Value::from), id, None),
            Ok(Err(f)) => f.outcome(false),
            Err(_) => Outcome::failed(OpType::Fail, "client_timeout"),
        }
    }
}
