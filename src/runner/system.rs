//! A run against a real system (etcd, Redis with Sentinel): start its processes in the run
//! folder, drive the load through its client adapter with the nemesis on its processes,
//! and stop every process, whatever happened.

use super::Load;
use crate::driver::etcd::EtcdClient;
use crate::driver::redis::RedisClient;
use crate::driver::system_plane::{watch_failovers, SystemPlane};
use crate::driver::{CounterClient, Recorder};
use crate::error::BadInput;
use crate::store::{NodeRecord, RunFolder, RunRecord, SystemRecord};
use crate::systems::{etcd, redis, Members};
use crate::workload::system::System;
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// What a started system gives the load: its processes and how to reach them.
struct Started {
    members: Members,
    nodes: Vec<(String, String)>,
    sentinels: Vec<String>,
    record: SystemRecord,
}

/// Starts the workload's system, drives the load at it, and stops it; run.json gains its
/// version, configuration and members.
pub async fn run(
    folder: &RunFolder,
    record: &mut RunRecord,
    seed: u64,
    network: Option<Arc<crate::cluster::Network>>,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let w = record.workload.clone();
    let dir = folder.nodes();
    let started = match w.system {
        System::Etcd => {
            let token = format!("checker-{seed}-{}", std::process::id());
            let e = etcd::start(w.nodes, &dir, &token, network.as_deref()).await;
            let e = e.context("starting etcd")?;
            Started {
                record: SystemRecord::new(System::Etcd, e.version, e.config),
                members: e.members,
                nodes: e.addrs,
                sentinels: Vec::new(),
            }
        }
        System::Redis => {
            let r = redis::start(w.nodes, &w.redis, &dir, network.as_deref()).await;
            let r = r.context("starting Redis and Sentinel")?;
            Started {
                record: SystemRecord::new(System::Redis, r.version, r.config),
                members: r.members,
                nodes: r.addrs,
                sentinels: r.sentinels,
            }
        }
        System::Bundled => anyhow::bail!("the bundled nodes are not started here"),
    };
    eprintln!(
        "system: {} ({}), {} members",
        started.record.name,
        started.record.version,
        started.members.all().len()
    );
    record.nodes = started
        .members
        .all()
        .iter()
        .map(|m| NodeRecord {
            id: m.spec.id.clone(),
            addr: m.spec.addr.clone(),
            pid: m.pid,
        })
        .collect();
    record.system = Some(started.record);
    record.write(folder)?;

    let members = Arc::new(Mutex::new(started.members));
    let (nodes, sentinels) = (started.nodes, started.sentinels);
    let plane = Arc::new(SystemPlane::new(
        w.system,
        members.clone(),
        nodes.clone(),
        sentinels.clone(),
        network,
    ));
    let recorder = Arc::new(Recorder::create(&folder.history()).map_err(BadInput::from)?);
    let timeout = Duration::from_millis(w.client_timeout_ms);
    let load = Load {
        workload: &w,
        seed,
        ids: nodes.iter().map(|(id, _)| id.clone()).collect(),
        recorder: recorder.clone(),
        progress: true,
    };
    let with_faults = (!w.nemesis.faults.is_empty()).then(|| plane.clone());
    let drove = match w.system {
        System::Etcd => {
            let client = EtcdClient::new(nodes, timeout, w.etcd.clone());
            drive(load, client, with_faults, interrupted).await
        }
        _ => {
            let watching = Arc::new(AtomicBool::new(false));
            let watcher = tokio::spawn(watch_failovers(
                plane.clone(),
                recorder.clone(),
                watching.clone(),
            ));
            let client = RedisClient::new(nodes, sentinels, timeout, w.redis.wait_replicas);
            let drove = drive(load, client, with_faults, interrupted).await;
            watching.store(true, Ordering::Relaxed);
            let _ = watcher.await;
            drove
        }
    };
    members.lock().await.stop().await;
    drove
}

async fn drive<C: CounterClient>(
    load: Load<'_>,
    client: C,
    plane: Option<Arc<SystemPlane>>,
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    load.drive(Arc::new(client), plane, interrupted).await
}
