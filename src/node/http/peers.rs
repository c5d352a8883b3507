//! The node's calls to its peers, through the fault plane (cut links never deliver, slow
//! links wait first), and the failure detector's view of who is up.

use super::transport::{Message, Transport, TransportError};
use crate::api::Faults;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::Instant;

/// How long a peer that could not be reached counts as down before it is tried again.
const DOWN_FOR: Duration = Duration::from_secs(1);

/// Why a call to a peer got no answer.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// No such peer is known.
    #[error("unknown peer {0}")]
    Unknown(String),
    /// The link is cut: nothing was delivered.
    #[error("the link to {0} is cut")]
    Cut(String),
    /// The peer answered with an error status; its JSON body is kept.
    #[error("{peer} answered {status}")]
    Status {
        /// The peer.
        peer: String,
        /// The HTTP status.
        status: u16,
        /// The answer's body.
        body: serde_json::Value,
    },
    /// No answer (refused, timed out, garbled).
    #[error("{peer}: {source}")]
    Transport {
        /// The peer.
        peer: String,
        /// What went wrong.
        source: TransportError,
    },
}

/// The other nodes: their addresses, a client to reach them, and who seems down.
pub struct Peers {
    me: String,
    transport: Arc<dyn Transport>,
    timeout: Duration,
    addrs: RwLock<BTreeMap<String, String>>,
    down: Mutex<HashMap<String, Instant>>,
    faults: Arc<RwLock<Faults>>,
    /// The tasks that carry this node's messages, so that a simulated kill stops them as a
    /// process's death would.
    in_flight: Mutex<Vec<AbortHandle>>,
}

impl Peers {
    /// Peers of node `me`, reached through `transport`; a cut link is noticed after `timeout`.
    pub fn new(
        me: &str,
        addrs: BTreeMap<String, String>,
        timeout: Duration,
        faults: Arc<RwLock<Faults>>,
        transport: Arc<dyn Transport>,
    ) -> Self {
        Peers {
            me: me.to_string(),
            transport,
            timeout,
            addrs: RwLock::new(addrs),
            down: Mutex::new(HashMap::new()),
            faults,
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// Starts a task that carries this node's messages; [`Peers::stop`] stops it.
    pub fn spawn<T: Send + 'static>(
        &self,
        task: impl Future<Output = T> + Send + 'static,
    ) -> JoinHandle<T> {
        let handle = tokio::spawn(task);
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        in_flight.retain(|t| !t.is_finished());
        in_flight.push(handle.abort_handle());
        handle
    }

    /// Stops every task [`Peers::spawn`] started that still runs, as the node's death would.
    pub fn stop(&self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        in_flight.drain(..).for_each(|t| t.abort());
    }

    /// Replaces the peer list.
    pub fn set(&self, addrs: BTreeMap<String, String>) {
        *self.addrs.write().unwrap_or_else(|e| e.into_inner()) = addrs;
    }

    /// The peers by id.
    pub fn addrs(&self) -> BTreeMap<String, String> {
        self.addrs.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The address of `peer`, if known.
    fn addr_of(&self, peer: &str) -> Option<String> {
        let addrs = self.addrs.read().unwrap_or_else(|e| e.into_inner());
        addrs.get(peer).cloned()
    }

    /// Every node of the cluster, this one included, sorted.
    pub fn cluster(&self) -> Vec<String> {
        let addrs = self.addrs.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<String> = addrs.keys().cloned().collect();
        let at = all.partition_point(|id| *id < self.me);
        all.insert(at, self.me.clone());
        all
    }

    /// Whether the failure detector thinks `node` is up: this node always is; a peer is not
    /// for a while after a message to it went unanswered (refused, or lost on a cut link,
    /// noticed only once the message timed out, as gossip notices a partition late).
    pub fn alive(&self, node: &str) -> bool {
        if node == self.me {
            return true;
        }
        let down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        down.get(node)
            .is_none_or(|since| since.elapsed() >= DOWN_FOR)
    }

    /// The peers the failure detector thinks are up.
    pub fn live_peers(&self) -> Vec<String> {
        self.addrs().into_keys().filter(|p| self.alive(p)).collect()
    }

    /// A message arrived from `peer`: it is up (as gossip would say).
    pub fn heard_from(&self, peer: &str) {
        self.note(peer, true);
    }

    fn note(&self, peer: &str, reachable: bool) {
        let mut down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        if reachable {
            down.remove(peer);
        } else {
            down.insert(peer.to_string(), Instant::now());
        }
    }

    /// Calls `path` on `peer` with a JSON body (POST) or none (GET), through the faults.
    pub async fn call<B: Serialize, R: DeserializeOwned>(
        &self,
        peer: &str,
        path: &str,
        body: Option<&B>,
    ) -> Result<R, PeerError> {
        let body = body.map(serde_json::to_vec).transpose();
        let body = body.map_err(|e| PeerError::Transport {
            peer: peer.to_string(),
            source: TransportError::NoAnswer(e.to_string()),
        })?;
        self.call_with(peer, path, body).await
    }

    /// Calls `path` on `peer` with a JSON body already encoded, or none.
    async fn call_with<R: DeserializeOwned>(
        &self,
        peer: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<R, PeerError> {
        let addr = self.addr_of(peer);
        let addr = addr.ok_or_else(|| PeerError::Unknown(peer.to_string()))?;
        let (cut, delay) = {
            let faults = self.faults.read().unwrap_or_else(|e| e.into_inner());
            (faults.sends_nothing_to(peer), faults.delay_to(peer))
        };
        if cut {
            // A partition drops messages: the caller hears nothing until it gives up.
            tokio::time::sleep(self.timeout).await;
            self.note(peer, false);
            return Err(PeerError::Cut(peer.to_string()));
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let transport = |source| PeerError::Transport {
            peer: peer.to_string(),
            source,
        };
        let garbled = |e: serde_json::Error| transport(TransportError::NoAnswer(e.to_string()));
        let message = Message {
            from: self.me.clone(),
            path: path.to_string(),
            body,
        };
        let reply = self.transport.send(&addr, message).await;
        self.note(peer, !matches!(reply, Err(TransportError::NotDelivered(_))));
        let reply = reply.map_err(transport)?;
        if !(200..300).contains(&reply.status) {
            return Err(PeerError::Status {
                peer: peer.to_string(),
                status: reply.status,
                body: serde_json::from_slice(&reply.body).unwrap_or(serde_json::Value::Null),
            });
        }
        serde_json::from_slice(&reply.body).map_err(garbled)
    }

    /// Sends the same body to several peers at once, encoded once; each success arrives on
    /// the receiver (none at all when the body cannot be encoded).
    pub fn broadcast<B, R>(
        self: &Arc<Self>,
        peers: &[String],
        path: &str,
        body: &B,
    ) -> mpsc::Receiver<(String, R)>
    where
        B: Serialize,
        R: DeserializeOwned + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(peers.len().max(1));
        let body = match serde_json::to_vec(body) {
            Ok(body) => body,
            Err(e) => {
                tracing::debug!(error = %e, "a broadcast's body could not be encoded");
                return rx;
            }
        };
        for peer in peers {
            let (tx, me, peer, path, body) = (
                tx.clone(),
                self.clone(),
                peer.clone(),
                path.to_string(),
                body.clone(),
            );
            self.spawn(async move {
                match me.call_with::<R>(&peer, &path, Some(body)).await {
                    Ok(answer) => {
                        let _ = tx.send((peer, answer)).await;
                    }
                    Err(e) => tracing::debug!(error = %e, "peer call failed"),
                }
            });
        }
        rx
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
