//! The simulated network: a message, from a client to a node or between nodes, is a call of
//! the receiving node's own router in this process. Each way takes a delay drawn from the
//! run's seeded source, so that messages overtake one another, and a share of the messages
//! between nodes arrives twice; a killed node refuses what is sent to it and drops what it
//! was handling; a paused node's messages, both ways, wait until it resumes.

use crate::api::CallError;
use crate::node::http::inbox::{Inbox, PeerRequest};
use crate::node::http::state::Node;
use crate::node::http::transport::{Message, Reply, Sending, Transport, TransportError};
use crate::workload::net::SimNetwork;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request};
use axum::Router;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;
use tower::ServiceExt;

/// Why a message got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undelivered {
    /// It certainly never reached the node (it is down, or the sender died first).
    Refused,
    /// It may have reached the node, which died before answering.
    Lost,
}

/// What is sent to a node.
pub enum Sent {
    /// A client's HTTP request, for the node's router.
    Client(Request<Body>),
    /// A peer's message, for the node's inbox, as a link hands it over.
    Peer(Message),
}

/// One node's place on the network.
struct Host {
    /// What answers its peers while it runs (its router answers clients); none once killed.
    inbox: Option<Inbox>,
    /// Which life of the node this is: a kill ends it.
    life: watch::Sender<u64>,
    /// Whether it is paused.
    paused: watch::Sender<bool>,
}

/// The network of one simulated cluster.
pub struct SimNet {
    hosts: Mutex<BTreeMap<String, Host>>,
    rng: Mutex<StdRng>,
    /// The fewest and most microseconds one way of a message takes.
    delay_us: (u64, u64),
    /// The share of node-to-node messages delivered twice.
    duplicate: f64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SimNet {
    /// An empty network shaped by `shape`, its delays and duplicates drawn from `seed`.
    pub fn new(shape: &SimNetwork, seed: u64) -> Arc<Self> {
        let us = |ms: f64| (ms * 1_000.0).round() as u64;
        Arc::new(SimNet {
            hosts: Mutex::new(BTreeMap::new()),
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
            delay_us: (us(shape.min_delay_ms), us(shape.max_delay_ms)),
            duplicate: shape.duplicate,
        })
    }

    /// Node `id`'s next life (1 for its first): a transport made for it now sends as it.
    pub fn next_life(&self, id: &str) -> u64 {
        lock(&self.hosts)
            .get(id)
            .map_or(1, |h| *h.life.borrow() + 1)
    }

    /// Puts `node` on the network as `id`, answering with `router`, in life `life`.
    pub fn attach(&self, id: &str, node: Arc<Node>, router: Router, life: u64) {
        let inbox = Inbox::new(router, Some(node));
        let mut hosts = lock(&self.hosts);
        match hosts.get_mut(id) {
            Some(host) => {
                host.inbox = Some(inbox);
                host.life.send_replace(life);
                host.paused.send_replace(false);
            }
            None => {
                let host = Host {
                    inbox: Some(inbox),
                    life: watch::channel(life).0,
                    paused: watch::channel(false).0,
                };
                hosts.insert(id.to_string(), host);
            }
        }
    }

    /// Takes node `id` off the network, as its process dying would: what it was handling is
    /// dropped, what it sends from now on goes nowhere, and what is sent to it is refused.
    pub fn detach(&self, id: &str) {
        if let Some(host) = lock(&self.hosts).get_mut(id) {
            host.inbox = None;
            host.life.send_modify(|life| *life += 1);
            host.paused.send_replace(false);
        }
    }

    /// Pauses node `id` (its messages wait, both ways) or resumes it.
    pub fn pause(&self, id: &str, paused: bool) {
        if let Some(host) = lock(&self.hosts).get(id) {
            host.paused.send_replace(paused);
        }
    }

    /// Whether node `id` is down (killed and not started again).
    pub fn is_down(&self, id: &str) -> bool {
        lock(&self.hosts).get(id).is_some_and(|h| h.inbox.is_none())
    }

    fn delay(&self) -> Duration {
        let us = lock(&self.rng).gen_range(self.delay_us.0..=self.delay_us.1);
        Duration::from_micros(us)
    }

    /// Whether the next message between nodes also arrives a second time.
    fn duplicates(&self) -> bool {
        self.duplicate > 0.0 && lock(&self.rng).gen_bool(self.duplicate)
    }

    /// Node `id`'s life, pause and inbox, as they are now.
    fn host(
        &self,
        id: &str,
    ) -> Option<(watch::Receiver<u64>, watch::Receiver<bool>, Option<Inbox>)> {
        let hosts = lock(&self.hosts);
        let host = hosts.get(id)?;
        Some((
            host.life.subscribe(),
            host.paused.subscribe(),
            host.inbox.clone(),
        ))
    }

    /// Waits while node `id` is paused; `false` if it is no longer in life `life`.
    async fn awake(&self, id: &str, life: u64) -> bool {
        let Some((lives, mut paused, _)) = self.host(id) else {
            return false;
        };
        let _ = paused.wait_for(|p| !p).await;
        let now = *lives.borrow();
        now == life
    }

    /// Delivers `sent` to node `to` and brings back its status and body; `from` is the
    /// sending node and its life, none for a client.
    pub async fn deliver(
        &self,
        from: Option<(&str, u64)>,
        to: &str,
        sent: Sent,
    ) -> Result<(u16, Vec<u8>), Undelivered> {
        if let Some((sender, life)) = from {
            if !self.awake(sender, life).await {
                return Err(Undelivered::Refused);
            }
        }
        tokio::time::sleep(self.delay()).await;
        let Some((mut lives, _, Some(inbox))) = self.host(to) else {
            return Err(Undelivered::Refused);
        };
        let life = *lives.borrow_and_update();
        if !self.awake(to, life).await {
            return Err(Undelivered::Lost);
        }
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        let handled = async {
            match sent {
                Sent::Client(mut request) => {
                    request.extensions_mut().insert(ConnectInfo(loopback));
                    let response = inbox
                        .router()
                        .clone()
                        .oneshot(request)
                        .await
                        .map_err(|_| Undelivered::Lost)?;
                    let status = response.status().as_u16();
                    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await;
                    Ok((status, body.map_err(|_| Undelivered::Lost)?.to_vec()))
                }
                Sent::Peer(message) => {
                    let request = PeerRequest {
                        from: &message.from,
                        path: &message.path,
                        body: message.body.map(Into::into),
                        addr: loopback,
                        secret: None,
                    };
                    let (status, body) = inbox.answer(request).await;
                    Ok((status, body.to_vec()))
                }
            }
        };
        let answer = tokio::select! {
            biased;
            _ = lives.changed() => Err(Undelivered::Lost),
            answer = handled => answer,
        };
        // A node paused meanwhile sends its answer once it resumes.
        if !self.awake(to, life).await {
            return Err(Undelivered::Lost);
        }
        tokio::time::sleep(self.delay()).await;
        answer
    }
}

/// A request to a node's router: `method` on `path_and_query`, with a JSON `body` if any.
pub fn request(method: Method, path_and_query: &str, body: Option<Vec<u8>>) -> Request<Body> {
    let builder = Request::builder().method(method).uri(path_and_query);
    let built = match body {
        Some(body) => builder
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(body)),
        None => builder.body(Body::empty()),
    };
    built.unwrap_or_else(|_| Request::new(Body::empty()))
}

/// What a client makes of a message that got no answer, as a real client would say it.
pub fn call_error(undelivered: Option<Undelivered>) -> CallError {
    match undelivered {
        Some(Undelivered::Refused) => CallError::NotSent {
            code: "connection_refused",
        },
        Some(Undelivered::Lost) => CallError::NoAnswer {
            code: "transport_error",
        },
        None => CallError::NoAnswer {
            code: "client_timeout",
        },
    }
}

/// A node's messages to its peers over the simulated network.
pub struct SimTransport {
    net: Arc<SimNet>,
    me: String,
    life: u64,
    timeout: Duration,
}

impl SimTransport {
    /// The transport of node `me` in life `life`, giving up on an answer after `timeout`.
    pub fn new(net: Arc<SimNet>, me: &str, life: u64, timeout: Duration) -> Self {
        SimTransport {
            net,
            me: me.to_string(),
            life,
            timeout,
        }
    }
}

impl Transport for SimTransport {
    fn send<'a>(&'a self, addr: &'a str, message: Message) -> Sending<'a> {
        Box::pin(async move {
            if self.net.duplicates() {
                // The copy goes its own way, at its own delay; nobody waits for its answer.
                let (net, me, life, to) = (
                    self.net.clone(),
                    self.me.clone(),
                    self.life,
                    addr.to_string(),
                );
                let copy = Sent::Peer(message.clone());
                tokio::spawn(async move { net.deliver(Some((&me, life)), &to, copy).await });
            }
            let sent = Sent::Peer(message);
            let delivered = self.net.deliver(Some((&self.me, self.life)), addr, sent);
            match tokio::time::timeout(self.timeout, delivered).await {
                Ok(Ok((status, body))) => Ok(Reply { status, body }),
                Ok(Err(Undelivered::Refused)) => {
                    Err(TransportError::NotDelivered(format!("{addr} refused")))
                }
                Ok(Err(Undelivered::Lost)) => Err(TransportError::NoAnswer(format!("{addr} died"))),
                Err(_) => Err(TransportError::NoAnswer(format!("{addr}: timed out"))),
            }
        })
    }
}
