//! How a node's messages reach its peers: a trait (`internode::LinkTransport` over real
//! sockets; a simulation implements it with a network of its own; nothing else changes).

use std::future::Future;
use std::pin::Pin;

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
