//! An etcd cluster of N members, `n1`..`nN`, each with its data folder in the run folder,
//! started as a fresh cluster with a token of the run's own; a member killed and started
//! again rejoins from its data folder.

use super::{place, wait_until, MemberSpec, Members, SystemError};
use crate::cluster::Network;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// How long the cluster may take to elect a leader and answer on every member.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// etcd's heartbeat interval, ms (its default).
const HEARTBEAT_MS: u64 = 100;
/// etcd's election timeout, ms (its default).
const ELECTION_MS: u64 = 1_000;

/// A started etcd cluster.
pub struct Etcd {
    /// Its processes.
    pub members: Members,
    /// Each member as `(id, host:port)` of its client URL.
    pub addrs: Vec<(String, String)>,
    /// `etcd --version`'s first line.
    pub version: String,
    /// The configuration every member was started with.
    pub config: Value,
}

/// Starts `count` members keeping their data in `dir/<id>.etcd` and their logs in
/// `dir/<id>.log`, in `network`'s namespaces when there is one, and waits until each
/// answers `/health` with a leader elected.
pub async fn start(
    count: usize,
    dir: &Path,
    token: &str,
    network: Option<&Network>,
) -> Result<Etcd, SystemError> {
    let ids: Vec<String> = (1..=count).map(|i| format!("n{i}")).collect();
    let mut places = Vec::new();
    for id in &ids {
        let not_placed = |e: std::io::Error| SystemError::Spawn {
            id: id.clone(),
            program: "etcd".into(),
            source: e,
        };
        let (ip, client, ns) = place(network, id, 2379).map_err(not_placed)?;
        let (_, peer, _) = place(network, id, 2380).map_err(not_placed)?;
        places.push((id.clone(), ip, client, peer, ns));
    }
    let initial = places
        .iter()
        .map(|(id, ip, _, peer, _)| format!("{id}=http://{ip}:{peer}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut members = Members::default();
    let mut addrs = Vec::new();
    for (id, ip, client, peer, ns) in places {
        let client_url = format!("http://{ip}:{client}");
        let peer_url = format!("http://{ip}:{peer}");
        let data = dir.join(format!("{id}.etcd"));
        let args = [
            ("--name", id.clone()),
            ("--data-dir", data.display().to_string()),
            ("--listen-client-urls", client_url.clone()),
            ("--advertise-client-urls", client_url),
            ("--listen-peer-urls", peer_url.clone()),
            ("--initial-advertise-peer-urls", peer_url),
            ("--initial-cluster", initial.clone()),
            ("--initial-cluster-state", "new".into()),
            ("--initial-cluster-token", token.to_string()),
            ("--heartbeat-interval", HEARTBEAT_MS.to_string()),
            ("--election-timeout", ELECTION_MS.to_string()),
            ("--logger", "zap".into()),
            ("--log-outputs", "stderr".into()),
        ];
        let args = args
            .into_iter()
            .map(|(flag, value)| format!("{flag}={value}"))
            .collect();
        let addr = format!("{ip}:{client}");
        members.spawn(MemberSpec {
            id: id.clone(),
            program: "etcd".into(),
            args,
            netns: ns,
            log: dir.join(format!("{id}.log")),
            addr: addr.clone(),
        })?;
        addrs.push((id, addr));
    }
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap_or_default();
    for (id, addr) in &addrs {
        wait_until(START_TIMEOUT, || healthy(&http, addr))
            .await
            .map_err(|reason| SystemError::NotReady {
                id: id.clone(),
                reason,
                log: dir.join(format!("{id}.log")),
            })?;
    }
    Ok(Etcd {
        members,
        addrs,
        version: super::version("etcd", "--version"),
        config: json!({
            "members": count,
            "heartbeat_interval_ms": HEARTBEAT_MS,
            "election_timeout_ms": ELECTION_MS,
            "initial_cluster": initial,
        }),
    })
}

/// Whether the member at `addr` says it is healthy (it has a leader).
async fn healthy(http: &reqwest::Client, addr: &str) -> Result<(), String> {
    let url = format!("http://{addr}/health");
    let answer = http.get(url).send().await.map_err(|e| e.to_string())?;
    let body: Value = answer.json().await.map_err(|e| e.to_string())?;
    match body.get("health").and_then(Value::as_str) {
        Some("true") => Ok(()),
        _ => Err(format!("/health says {body}")),
    }
}
