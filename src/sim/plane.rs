//! The nemesis's faults in a simulation: kill, power loss and pause act on the simulated
//! processes; partitions, slow links, clocks, flush, compaction and repair go through the
//! nodes' own fault plane, as on loopback.

use super::cluster::{admin, SimCluster};
use super::net::SimNet;
use crate::api::FaultsUpdate;
use crate::driver::Plane;
use crate::workload::nemesis::FaultKind;
use axum::http::Method;
use std::sync::Arc;
use tokio::sync::Mutex;

/// A simulated cluster as the nemesis sees it.
pub struct SimPlane {
    cluster: Arc<Mutex<SimCluster>>,
    net: Arc<SimNet>,
    ids: Vec<String>,
}

impl SimPlane {
    /// The plane of `cluster`.
    pub fn new(cluster: Arc<Mutex<SimCluster>>, net: Arc<SimNet>, ids: Vec<String>) -> Self {
        SimPlane { cluster, net, ids }
    }

    async fn admin(
        &self,
        node: &str,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(), String> {
        match admin(&self.net, node, method, path, body).await {
            Ok((status, _)) if (200..300).contains(&status) => Ok(()),
            Ok((status, body)) => Err(format!("{status} {}", String::from_utf8_lossy(&body))),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl Plane for SimPlane {
    async fn nodes(&self) -> Vec<String> {
        self.ids.clone()
    }

    async fn set_faults(&self, node: &str, update: &FaultsUpdate) -> Result<(), String> {
        let body = serde_json::to_vec(update).map_err(|e| e.to_string())?;
        self.admin(node, Method::PUT, "/admin/faults", Some(body))
            .await
    }

    async fn maintain(&self, node: &str, kind: FaultKind) -> Result<(), String> {
        let path = match kind {
            FaultKind::Flush => "/admin/flush",
            FaultKind::Compact => "/admin/compact",
            _ => "/admin/repair",
        };
        self.admin(node, Method::POST, path, None).await
    }

    async fn pause(&self, node: &str, paused: bool) {
        self.net.pause(node, paused);
    }

    async fn kill(&self, node: &str, power_loss: bool) -> Result<u64, String> {
        let mut cluster = self.cluster.lock().await;
        cluster.kill(node, power_loss).map_err(|e| e.to_string())
    }

    async fn restart(&self, node: &str) -> Result<(), String> {
        let mut cluster = self.cluster.lock().await;
        cluster.restart(node).map_err(|e| e.to_string())
    }

    async fn dead(&self) -> Vec<String> {
        self.cluster.lock().await.dead()
    }
}
