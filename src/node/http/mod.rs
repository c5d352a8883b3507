//! The node's HTTP shell: the state shared by handlers, the router that picks the data
//! plane once (Cassandra or RavenDB), the node-to-node and admin planes, and the peer
//! transport (behind a trait, so that a simulated network can stand in for HTTP).

pub mod admin;
pub mod cassandra;
pub mod connections;
pub mod errors;
pub mod guard;
pub mod inbox;
pub mod internal;
pub mod internode;
pub mod leader;
pub mod messages;
pub mod peers;
pub mod plan;
pub mod ravendb;
pub mod read;
pub mod replication;
pub mod request;
pub mod router;
pub mod server;
pub mod state;
pub mod transport;

pub use server::{serve, NodeConfig};
