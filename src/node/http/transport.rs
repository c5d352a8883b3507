//! How a node's messages reach its peers: a trait, and its HTTP implementation. A
//! simulation implements the trait with a network of its own; nothing else changes.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The header that names the sending node on node-to-node requests.
pub const FROM_HEADER: &str = "x-checker-from";

/// One message to a peer: a POST with a JSON body, or a GET without one.
#[derive(Debug, Clone)]
pub struct Message {
    /// The sending node's id.
    pub from: String,
    /// The path and query, such as `/internal/apply`.
    pub path: String,
    /// The JSON body; none for a GET.
    pub body: Option<Vec<u8>>,
}

/// A peer's answer: its status and JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body, as sent.
    pub body: Vec<u8>,
}

/// Why a message got no answer.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// It certainly never reached the peer (refused, no such address).
    #[error("not delivered: {0}")]
    NotDelivered(String),
    /// It may have reached the peer, but no answer came back in time.
    #[error("no answer: {0}")]
    NoAnswer(String),
}

/// A future a transport answers with.
pub type Sending<'a> = Pin<Box<dyn Future<Output = Result<Reply, TransportError>> + Send + 'a>>;

/// Delivers messages to peers by address.
pub trait Transport: Send + Sync + 'static {
    /// Sends `message` to the peer at `addr` and waits for its answer.
    fn send<'a>(&'a self, addr: &'a str, message: Message) -> Sending<'a>;
}

/// Messages as HTTP requests over real sockets.
pub struct HttpTransport {
    http: reqwest::Client,
}

impl HttpTransport {
    /// A transport whose requests give up after `timeout` and carry the cluster's `secret`.
    pub fn new(timeout: Duration, secret: Option<&str>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .default_headers(crate::api::secret::headers(secret))
            .pool_idle_timeout(crate::api::IDLE_POOL_TIMEOUT)
            .connect_timeout(timeout.min(Duration::from_millis(500)))
            .build()
            .unwrap_or_default();
        HttpTransport { http }
    }
}

impl Transport for HttpTransport {
    fn send<'a>(&'a self, addr: &'a str, message: Message) -> Sending<'a> {
        Box::pin(async move {
            let url = format!("http://{addr}{}", message.path);
            let request = match message.body {
                Some(body) => self
                    .http
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body),
                None => self.http.get(url),
            };
            let failed = |e: reqwest::Error| {
                if e.is_connect() || e.is_builder() {
                    TransportError::NotDelivered(e.to_string())
                } else {
                    TransportError::NoAnswer(e.to_string())
                }
            };
            let response = request
                .header(FROM_HEADER, &message.from)
                .send()
                .await
                .map_err(failed)?;
            let status = response.status().as_u16();
            let body = response.bytes().await.map_err(failed)?;
            Ok(Reply {
                status,
                body: body.to_vec(),
            })
        })
    }
}
