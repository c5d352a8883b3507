//! The coordinator's side of replication: the peers it knows and the HTTP calls it makes to them.

use super::api::{CounterKey, CounterState, ShardWrite};
use super::shards::Counter;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long a peer that refused a connection counts as down before it is tried again.
const DOWN_FOR: Duration = Duration::from_secs(1);

/// The other replicas, by node id, and a client to reach them.
pub struct Replicas {
    http: reqwest::Client,
    peers: RwLock<BTreeMap<String, String>>,
    down: Arc<Mutex<HashMap<String, Instant>>>,
}

/// Notes a peer as down when it could not be reached, and up when it answered.
fn note(
    down: &Mutex<HashMap<String, Instant>>,
    peer: &str,
    result: &reqwest::Result<reqwest::Response>,
) {
    let mut down = down.lock().unwrap_or_else(|e| e.into_inner());
    match result {
        Err(e) if e.is_connect() => {
            down.insert(peer.to_string(), Instant::now());
        }
        _ => {
            down.remove(peer);
        }
    }
}

impl Replicas {
    /// Peers reached with requests that give up after `timeout`.
    pub fn new(peers: BTreeMap<String, String>, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_millis(500)))
            .build()
            .unwrap_or_default();
        Replicas {
            http,
            peers: RwLock::new(peers),
            down: Arc::default(),
        }
    }

    /// Replicas (this node included) not known to be down: the failure detector's view.
    pub fn alive(&self) -> usize {
        let down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        let peers = self.peers();
        let down_now = peers
            .keys()
            .filter(|p| down.get(*p).is_some_and(|since| since.elapsed() < DOWN_FOR))
            .count();
        1 + peers.len() - down_now
    }

    /// Replaces the peer list.
    pub fn set(&self, peers: BTreeMap<String, String>) {
        *self.peers.write().unwrap_or_else(|e| e.into_inner()) = peers;
    }

    /// The current peers.
    pub fn peers(&self) -> BTreeMap<String, String> {
        self.peers.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sends a leader's shard to every peer; each acknowledgement arrives on the receiver.
    pub fn replicate(&self, write: ShardWrite) -> mpsc::Receiver<()> {
        let (tx, rx) = mpsc::channel(self.peers().len().max(1));
        for (id, addr) in self.peers() {
            let (tx, http, write, down) = (
                tx.clone(),
                self.http.clone(),
                write.clone(),
                self.down.clone(),
            );
            tokio::spawn(async move {
                let url = format!("http://{addr}/internal/shards");
                let sent = http.post(url).json(&write).send().await;
                note(&down, &id, &sent);
                if sent.is_ok_and(|r| r.status().is_success()) {
                    let _ = tx.send(()).await;
                }
            });
        }
        rx
    }

    /// Asks every peer for its version of a counter; each answer arrives on the receiver.
    pub fn fetch(&self, key: &CounterKey) -> mpsc::Receiver<(String, Counter)> {
        let (tx, rx) = mpsc::channel(self.peers().len().max(1));
        for (id, addr) in self.peers() {
            let (tx, http, down) = (tx.clone(), self.http.clone(), self.down.clone());
            let url = key.url(&addr, &["internal", "counters"]);
            tokio::spawn(async move {
                let sent = http.get(url).send().await;
                note(&down, &id, &sent);
                let answer = match sent {
                    Ok(r) if r.status().is_success() => r.json::<CounterState>().await.ok(),
                    _ => None,
                };
                if let Some(state) = answer {
                    let _ = tx.send((id, state.counter)).await;
                }
            });
        }
        rx
    }

    /// Sends a merged counter to a stale peer, without waiting for it.
    pub fn repair(&self, peer: &str, key: &CounterKey, counter: &Counter) {
        let Some(addr) = self.peers().get(peer).cloned() else {
            return;
        };
        let url = key.url(&addr, &["internal", "counters"]);
        let (http, body) = (
            self.http.clone(),
            CounterState {
                counter: counter.clone(),
            },
        );
        tokio::spawn(async move {
            if let Err(e) = http.post(url).json(&body).send().await {
                tracing::debug!(peer = %addr, error = %e, "read repair failed");
            }
        });
    }
}

/// Waits for `needed` items from `rx` or until `deadline`, whichever comes first.
pub async fn gather<T>(mut rx: mpsc::Receiver<T>, needed: usize, deadline: Instant) -> Vec<T> {
    let mut got = Vec::with_capacity(needed);
    while got.len() < needed {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(item)) => got.push(item),
            Ok(None) | Err(_) => break,
        }
    }
    got
}
