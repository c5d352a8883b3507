//! One bundled counter node: a synchronous, deterministic core (shards, cells and tombstones,
//! the store with its memtable, segments, compaction and counter cache; RavenDB's portions)
//! behind a thin HTTP shell that coordinates replicas over real HTTP, with a fault plane.

pub mod core;
pub mod http;

pub use http::{serve, NodeConfig};
