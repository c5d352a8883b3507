//! One bundled counter node: a synchronous core (shards, store, consistency rules) behind a
//! thin HTTP shell that coordinates replicas over real HTTP.

pub mod api;
pub mod consistency;
mod errors;
mod internal;
mod replicas;
mod server;
pub mod shards;
pub mod store;

pub use server::{serve, NodeConfig};
