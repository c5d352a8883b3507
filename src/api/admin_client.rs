//! The typed client of a node's admin plane: health, peers, faults, flush, compaction,
//! repair, settings and the oracle dump.

use super::admin::{Compacted, Faults, FaultsUpdate, Flushed, Health, PeerList, Repaired};
use super::client::{call, url, CallError};
use super::settings::ClusterSettings;
use std::collections::BTreeMap;
use std::time::Duration;

/// Talks to nodes' admin plane over HTTP.
#[derive(Debug, Clone)]
pub struct AdminClient {
    http: reqwest::Client,
}

impl AdminClient {
    /// A client whose requests give up after `timeout`, for a node without a secret.
    pub fn new(timeout: Duration) -> Self {
        Self::with_secret(timeout, None)
    }

    /// A client whose requests give up after `timeout` and carry the cluster's `secret`.
    pub fn with_secret(timeout: Duration, secret: Option<&str>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .default_headers(super::secret::headers(secret))
            .pool_idle_timeout(super::IDLE_POOL_TIMEOUT)
            .build()
            .unwrap_or_default();
        AdminClient { http }
    }

    /// `GET /admin/health`.
    pub async fn health(&self, addr: &str) -> Result<Health, CallError> {
        call(self.http.get(url(addr, &["admin", "health"]))).await
    }

    /// `PUT /admin/peers`: the node's peers, by id.
    pub async fn set_peers(
        &self,
        addr: &str,
        peers: BTreeMap<String, String>,
    ) -> Result<Health, CallError> {
        let body = PeerList { peers };
        call(self.http.put(url(addr, &["admin", "peers"])).json(&body)).await
    }

    /// `GET /admin/faults`.
    pub async fn faults(&self, addr: &str) -> Result<Faults, CallError> {
        call(self.http.get(url(addr, &["admin", "faults"]))).await
    }

    /// `PUT /admin/faults`: the fields given replace the node's.
    pub async fn set_faults(&self, addr: &str, update: &FaultsUpdate) -> Result<Faults, CallError> {
        call(self.http.put(url(addr, &["admin", "faults"])).json(update)).await
    }

    /// `POST /admin/flush`.
    pub async fn flush(&self, addr: &str) -> Result<Flushed, CallError> {
        call(self.http.post(url(addr, &["admin", "flush"]))).await
    }

    /// `POST /admin/compact`.
    pub async fn compact(&self, addr: &str) -> Result<Compacted, CallError> {
        call(self.http.post(url(addr, &["admin", "compact"]))).await
    }

    /// `POST /admin/repair`.
    pub async fn repair(&self, addr: &str) -> Result<Repaired, CallError> {
        call(self.http.post(url(addr, &["admin", "repair"]))).await
    }

    /// `GET /admin/config`.
    pub async fn config(&self, addr: &str) -> Result<ClusterSettings, CallError> {
        call(self.http.get(url(addr, &["admin", "config"]))).await
    }

    /// `GET /admin/oracle`: the node's true state, as it dumps it.
    pub async fn oracle(&self, addr: &str) -> Result<serde_json::Value, CallError> {
        call(self.http.get(url(addr, &["admin", "oracle"]))).await
    }
}
