//! One bundled counter node: a synchronous, deterministic core (shards, cells and tombstones,
//! the store with its memtable, segments, compaction and counter cache; RavenDB's portions)
//! behind a thin HTTP shell that coordinates replicas over real HTTP, with a fault plane.

mod admin;
pub mod api;
mod cache;
pub mod cells;
mod commitlog;
pub mod consistency;
mod coordinator;
mod errors;
pub mod faults;
mod internal;
mod peers;
pub mod raven;
mod raven_http;
pub mod ring;
mod server;
pub mod settings;
pub mod shards;
pub mod store;

pub use server::{serve, NodeConfig};
