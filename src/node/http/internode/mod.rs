//! Internode messaging: node-to-node requests over one long-lived TCP connection per peer
//! (a link), as Cassandra's nodes talk over their own messaging port rather than per-request
//! HTTP. A link carries many requests at once, each with an id, and the frames that wait are
//! written together. The requests are the internal plane's own (path, sender, JSON body),
//! served by the same router, guard and handlers as over HTTP; only the framing differs.
//!
//! The link shares the node's HTTP port: its first byte is [`MAGIC`], which no HTTP request
//! starts with. Then come length-delimited frames: a hello with the cluster's secret, then
//! requests one way and replies the other.

pub mod client;
pub mod server;
mod wire;

pub use client::LinkTransport;
pub use server::serve_link;

/// The first byte a link sends: HTTP requests start with a method name, never a zero byte.
pub const MAGIC: u8 = 0;

#[cfg(test)]
mod tests;
