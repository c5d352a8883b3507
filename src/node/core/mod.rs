//! The node's synchronous core: the rules of Cassandra's and RavenDB's counters, with the
//! time passed in, so that every rule is a plain function tested without a network.

pub mod cache;
pub mod cells;
pub mod clock;
pub mod commitlog;
pub mod durable;
pub mod raven;
pub mod raven_journal;
pub mod ring;
pub mod shards;
pub mod store;
