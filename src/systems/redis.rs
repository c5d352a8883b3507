//! Redis with replicas and Sentinel: `n1` starts as the primary, `n2`..`nN` as its
//! replicas (asynchronous replication, no persistence), and sentinels `s1`..`sS` watch
//! them and fail over when the primary goes silent. Each process has a config file in the
//! run folder, which Sentinel rewrites as roles change, so that a member killed and
//! started again comes back in its current role.

use super::{place, wait_until, MemberSpec, Members, SystemError};
use crate::cluster::Network;
use crate::workload::system::RedisSpec;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The name Sentinel knows the primary by.
pub const MASTER: &str = "checker";
/// How long the processes may take to start, replicate and find each other.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one readiness or primary query may take.
const QUERY_TIMEOUT: Duration = Duration::from_millis(500);

/// A started Redis cluster.
pub struct Redis {
    /// Its processes, the sentinels included.
    pub members: Members,
    /// Each Redis process as `(id, host:port)`.
    pub addrs: Vec<(String, String)>,
    /// Each sentinel's `host:port`.
    pub sentinels: Vec<String>,
    /// `redis-server --version`'s first line.
    pub version: String,
    /// The configuration the processes were started with.
    pub config: Value,
}

/// Starts `count` Redis processes and `spec.sentinels` sentinels with their files in
/// `dir` (sentinel `sI` beside Redis `nI`, in its namespace when there is a network), and
/// waits until the replicas are in sync and the sentinels can fail over.
pub async fn start(
    count: usize,
    spec: &RedisSpec,
    dir: &Path,
    network: Option<&Network>,
) -> Result<Redis, SystemError> {
    let mut members = Members::default();
    let mut addrs: Vec<(String, String)> = Vec::new();
    let write = |path: std::path::PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|source| SystemError::Write { path, source })
    };
    for i in 1..=count {
        let id = format!("n{i}");
        let (ip, port, ns) = place(network, &id, 6379).map_err(|e| spawn_error(&id, e))?;
        let data = dir.join(format!("{id}.redis"));
        std::fs::create_dir_all(&data).map_err(|source| SystemError::Write {
            path: data.clone(),
            source,
        })?;
        let mut conf = format!(
            "port {port}\nbind {ip}\ndir {}\nsave \"\"\nappendonly no\nprotected-mode no\nreplica-serve-stale-data yes\n",
            data.display()
        );
        if let Some((_, primary)) = addrs.first() {
            let (host, port) = primary.split_once(':').unwrap_or((primary, "6379"));
            conf.push_str(&format!("replicaof {host} {port}\n"));
        }
        let file = dir.join(format!("{id}.conf"));
        write(file.clone(), conf)?;
        let addr = format!("{ip}:{port}");
        members.spawn(member(&id, "redis-server", &file, ns, dir, &addr))?;
        addrs.push((id, addr));
    }
    let primary = addrs.first().map(|(_, a)| a.clone()).unwrap_or_default();
    let (primary_host, primary_port) = primary.split_once(':').unwrap_or((&primary, "6379"));
    let quorum = spec.sentinels / 2 + 1;
    let mut sentinels = Vec::new();
    for i in 1..=spec.sentinels {
        let id = format!("s{i}");
        // Sentinel sI lives beside Redis nI; with more sentinels than nodes they wrap
        // around, each on a port of its own (26379, 26380, ...).
        let host_id = format!("n{}", (i - 1) % count.max(1) + 1);
        let lap = u16::try_from((i - 1) / count.max(1)).unwrap_or(0);
        let (ip, port, ns) = match network {
            Some(_) => place(network, &host_id, 26379 + lap),
            None => place(None, &id, 0),
        }
        .map_err(|e| spawn_error(&id, e))?;
        let conf = format!(
            "port {port}\nbind {ip}\ndir {}\nprotected-mode no\nsentinel monitor {MASTER} {primary_host} {primary_port} {quorum}\nsentinel down-after-milliseconds {MASTER} {}\nsentinel failover-timeout {MASTER} {}\nsentinel parallel-syncs {MASTER} 1\n",
            dir.display(),
            spec.down_after_ms,
            spec.failover_timeout_ms,
        );
        let file = dir.join(format!("{id}.conf"));
        write(file.clone(), conf)?;
        let addr = format!("{ip}:{port}");
        members.spawn(member(&id, "redis-sentinel", &file, ns, dir, &addr))?;
        sentinels.push(addr);
    }
    for (id, addr) in &addrs {
        let replica = id != "n1";
        wait_until(START_TIMEOUT, || in_sync(addr, replica))
            .await
            .map_err(|reason| not_ready(dir, id, reason))?;
    }
    for (i, addr) in sentinels.iter().enumerate() {
        let id = format!("s{}", i + 1);
        wait_until(START_TIMEOUT, || can_fail_over(addr, count - 1))
            .await
            .map_err(|reason| not_ready(dir, &id, reason))?;
    }
    Ok(Redis {
        members,
        addrs,
        sentinels,
        version: super::version("redis-server", "--version"),
        config: json!({
            "replicas": count.saturating_sub(1),
            "sentinels": spec.sentinels,
            "quorum": quorum,
            "down_after_ms": spec.down_after_ms,
            "failover_timeout_ms": spec.failover_timeout_ms,
            "wait_replicas": spec.wait_replicas,
            "persistence": "none",
        }),
    })
}

/// The primary's `host:port` as the first sentinel that answers says it.
pub async fn primary(sentinels: &[String]) -> Option<String> {
    for sentinel in sentinels {
        let asked = query::<Vec<String>>(
            sentinel,
            redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(MASTER),
        )
        .await;
        if let Ok([host, port]) = asked.as_deref() {
            return Some(format!("{host}:{port}"));
        }
    }
    None
}

/// Sends one command to the process at `addr` on a connection of its own.
pub async fn query<T: redis::FromRedisValue>(addr: &str, cmd: &redis::Cmd) -> Result<T, String> {
    let asked = async {
        let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
        let mut connection = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| e.to_string())?;
        cmd.query_async::<T>(&mut connection)
            .await
            .map_err(|e| e.to_string())
    };
    match tokio::time::timeout(QUERY_TIMEOUT, asked).await {
        Ok(answer) => answer,
        Err(_) => Err(format!("{addr}: no answer in {QUERY_TIMEOUT:?}")),
    }
}

/// Whether the Redis process at `addr` answers, and as a replica, is in sync.
async fn in_sync(addr: &str, replica: bool) -> Result<(), String> {
    let info: String = query(addr, redis::cmd("INFO").arg("replication")).await?;
    if !replica || info.contains("master_link_status:up") {
        Ok(())
    } else {
        Err(format!("{addr}: replication not up yet"))
    }
}

/// Whether the sentinel at `addr` sees `replicas` replicas and a quorum of sentinels.
async fn can_fail_over(addr: &str, replicas: usize) -> Result<(), String> {
    let ok: String = query(addr, redis::cmd("SENTINEL").arg("ckquorum").arg(MASTER)).await?;
    let seen: Vec<redis::Value> =
        query(addr, redis::cmd("SENTINEL").arg("replicas").arg(MASTER)).await?;
    if seen.len() < replicas {
        return Err(format!("{addr} sees {} of {replicas} replicas", seen.len()));
    }
    match ok.starts_with("OK") {
        true => Ok(()),
        false => Err(ok),
    }
}

fn member(
    id: &str,
    program: &str,
    conf: &Path,
    netns: Option<String>,
    dir: &Path,
    addr: &str,
) -> MemberSpec {
    MemberSpec {
        id: id.to_string(),
        program: program.to_string(),
        args: vec![conf.display().to_string()],
        netns,
        log: dir.join(format!("{id}.log")),
        addr: addr.to_string(),
    }
}

fn spawn_error(id: &str, source: std::io::Error) -> SystemError {
    SystemError::Spawn {
        id: id.to_string(),
        program: "redis".into(),
        source,
    }
}

fn not_ready(dir: &Path, id: &str, reason: String) -> SystemError {
    SystemError::NotReady {
        id: id.to_string(),
        reason,
        log: dir.join(format!("{id}.log")),
    }
}
