//! The wire contract every part speaks: counter keys, consistency levels, the delete scope,
//! the data plane's and the admin plane's bodies, the cluster's settings, and one typed
//! client for each plane (docs/node-api.md).

pub mod admin;
pub mod admin_client;
pub mod bodies;
pub mod client;
pub mod consistency;
pub mod invalid;
pub mod key;
pub mod scope;
pub mod secret;
pub mod settings;

pub use admin::{Faults, FaultsUpdate, Health, Listening, PeerList};
pub use admin_client::AdminClient;
pub use bodies::{Ack, AddRequest, AddResponse, ClQuery, ErrorBody, ReadResponse, ScanResponse};
pub use client::{CallError, DataCall, DataClient, IDLE_POOL_TIMEOUT};
pub use consistency::ConsistencyLevel;
pub use invalid::Invalid;
pub use key::{CounterKey, KeyError};
pub use scope::DeleteScope;
pub use settings::{ClusterSettings, CommitlogSync, Mode};
