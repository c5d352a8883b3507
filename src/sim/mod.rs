//! Deterministic simulation: the whole cluster in this process, on a simulated network
//! ([`net`]) and a simulated clock, run on one thread with tokio's paused clock, so that one
//! seed gives one history, byte for byte. The nodes are the very nodes of a real run: the
//! same router, state and store, with their clock, peer transport and disk work injected.
//! Faults play through the nodes' own fault plane as on loopback; kill and pause act on the
//! simulated processes ([`cluster`]).

pub mod client;
pub mod cluster;
pub mod net;
pub mod plane;

pub use client::SimClient;
pub use cluster::{SimClock, SimCluster};
pub use plane::SimPlane;
