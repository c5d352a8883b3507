//! Starts, supervises and stops the node processes of one run.
//!
//! Every node is a child process of this binary (`checker node ...`) in its own process
//! group, so a Ctrl-C reaches the driver, which stops the nodes itself. Nodes are killed
//! when the [`Cluster`] is dropped (a panic or an error unwinds through it), and each node
//! exits by itself when its parent is gone (the driver was killed with SIGKILL). With a
//! [`Network`] (`--net netns`), each node runs in its namespace, on its address there.

pub mod netns;

use crate::api::secret::{new_secret, settings_file as settings_file_text};
use crate::api::ClusterSettings;
use crate::api::{AdminClient, Listening};
use crate::node::core::commitlog;
use crate::store::oracle;
pub use netns::Network;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a node may take to start listening and answer.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a node may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);

/// Why the cluster could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A node process could not be spawned.
    #[error("could not start node {id} ({binary})", binary = binary.display())]
    Spawn {
        /// The node's id.
        id: String,
        /// The program started.
        binary: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A node did not come up; its log says why.
    #[error("node {id} did not start: {reason} (see {log})", log = log.display())]
    NotReady {
        /// The node's id.
        id: String,
        /// What went wrong.
        reason: String,
        /// The node's log file.
        log: PathBuf,
    },
}

/// One running node process.
pub struct NodeProcess {
    /// The node's id, `n1`, `n2`, ...
    pub id: String,
    /// Where it listens, `127.0.0.1:PORT`.
    pub addr: String,
    /// The process id.
    pub pid: u32,
    child: Child,
}

/// The nodes of one run.
pub struct Cluster {
    nodes: Vec<NodeProcess>,
    binary: PathBuf,
    dir: PathBuf,
    seed: u64,
    admin: AdminClient,
    secret: String,
    /// The namespaces the nodes run in, if any; dropped after the nodes.
    network: Option<Arc<Network>>,
    /// Worker threads each node runs on.
    threads: usize,
}

impl Cluster {
    /// Starts `count` nodes of `binary` with `settings`, each keeping its data in
    /// `dir/<id>/` and its log in `dir/<id>.log`, each seeding its random choices from `seed`
    /// and its id, and waits until each answers with every peer known. With `network`, node
    /// `nI` runs in its namespace there.
    pub async fn start(
        binary: &Path,
        count: usize,
        settings: &ClusterSettings,
        dir: &Path,
        seed: u64,
        network: Option<Arc<Network>>,
    ) -> Result<Cluster, ClusterError> {
        let settings_file = dir.join("cluster.json");
        let secret = new_secret();
        let text = settings_file_text(settings, Some(&secret));
        write_private(&settings_file, &text).map_err(|source| ClusterError::Spawn {
            id: "all".into(),
            binary: settings_file.clone(),
            source,
        })?;
        let mut cluster = Cluster {
            nodes: Vec::new(),
            binary: binary.to_path_buf(),
            dir: dir.to_path_buf(),
            seed,
            admin: AdminClient::with_secret(Duration::from_secs(2), Some(&secret)),
            secret,
            network,
            threads: node_threads(count),
        };
        for id in node_ids(count) {
            let place = cluster.place(&id, None);
            let node = spawn(binary, &id, &place, dir, node_seed(seed, &id)).await?;
            cluster.nodes.push(node);
        }
        for node in &cluster.nodes {
            introduce(&cluster.admin, node, cluster.peers_of(&node.id), dir).await?;
        }
        Ok(cluster)
    }

    /// Where node `id` runs: its namespace, if any, and the address it listens on (`addr`
    /// when it had one, so that a restart keeps it).
    fn place(&self, id: &str, addr: Option<&str>) -> Place {
        let netns = self.network.as_ref().and_then(|n| n.namespace(id));
        let ip = self.network.as_ref().and_then(|n| n.addr(id));
        Place {
            threads: self.threads,
            netns: netns.map(str::to_string),
            listen: match (addr, ip) {
                (Some(addr), _) => addr.to_string(),
                (None, Some(ip)) => format!("{ip}:0"),
                (None, None) => "127.0.0.1:0".to_string(),
            },
        }
    }

    /// The namespaces the nodes run in, with `--net netns`.
    pub fn network(&self) -> Option<Arc<Network>> {
        self.network.clone()
    }

    /// The cluster's secret, which its internal and admin planes require.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// A client of the nodes' admin plane that carries the cluster's secret.
    pub fn admin(&self, timeout: Duration) -> AdminClient {
        AdminClient::with_secret(timeout, Some(&self.secret))
    }

    /// Every node as `(id, host:port)`, in id order.
    pub fn addrs(&self) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .map(|n| (n.id.clone(), n.addr.clone()))
            .collect()
    }

    fn peers_of(&self, id: &str) -> BTreeMap<String, String> {
        self.addrs().into_iter().filter(|(n, _)| n != id).collect()
    }

    /// The nodes whose process has exited (killed and not restarted).
    pub async fn dead(&mut self) -> Vec<String> {
        let mut dead = Vec::new();
        for node in &mut self.nodes {
            if !matches!(node.child.try_wait(), Ok(None)) {
                dead.push(node.id.clone());
            }
        }
        dead
    }

    /// Kills a node with SIGKILL, as a crash would, and waits until it is gone.
    pub async fn kill(&mut self, id: &str) {
        if let Some(node) = self.nodes.iter_mut().find(|n| n.id == id) {
            let _ = node.child.kill().await;
        }
    }

    /// The machine under a node loses power: the process dies with SIGKILL and the commit
    /// log keeps only what was synced to the disk. Returns the bytes of log lost.
    pub async fn power_loss(&mut self, id: &str) -> std::io::Result<u64> {
        self.kill(id).await;
        commitlog::lose_unsynced(&self.dir.join(id))
    }

    /// Starts a killed node again on its old address and data folder: it replays its
    /// commit log and segments.
    pub async fn restart(&mut self, id: &str) -> Result<(), ClusterError> {
        let Some(i) = self.nodes.iter().position(|n| n.id == id) else {
            return Ok(());
        };
        let _ = self.nodes[i].child.kill().await;
        let place = self.place(id, Some(&self.nodes[i].addr));
        let seed = node_seed(self.seed, id).wrapping_add(1);
        self.nodes[i] = spawn(&self.binary, id, &place, &self.dir, seed).await?;
        introduce(&self.admin, &self.nodes[i], self.peers_of(id), &self.dir).await
    }

    /// Saves each node's oracle dump (its true shards, tombstones and cache) as
    /// `dir/<id>.oracle.json`; a node that does not answer is skipped with a warning.
    pub async fn save_oracles(&self) -> std::io::Result<()> {
        for node in &self.nodes {
            match self.admin.oracle(&node.addr).await {
                Ok(dump) => oracle::save(&self.dir, &node.id, &dump)?,
                Err(e) => tracing::warn!(node = %node.id, error = %e, "no oracle dump"),
            }
        }
        Ok(())
    }

    /// The running nodes, in id order.
    pub fn nodes(&self) -> &[NodeProcess] {
        &self.nodes
    }

    /// Stops every node: SIGTERM, then SIGKILL for those still running after a grace period.
    pub async fn stop(&mut self) {
        for node in &self.nodes {
            let pid = nix::unistd::Pid::from_raw(node.pid as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
        for node in &mut self.nodes {
            match tokio::time::timeout(STOP_TIMEOUT, node.child.wait()).await {
                Ok(_) => {}
                Err(_) => {
                    tracing::warn!(node = %node.id, "did not stop after SIGTERM; killing it");
                    let _ = node.child.kill().await;
                }
            }
        }
        self.nodes.clear();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.child.start_kill();
        }
    }
}

/// The ids of a cluster of `count` nodes: `n1`, `n2`, ...
pub fn node_ids(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("n{i}")).collect()
}

/// Worker threads for each node of a cluster of `count` on this machine: its cores shared
/// among them, at least one. Nodes that each had every core would spend them waking each
/// other's idle threads.
pub fn node_threads(count: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / count.max(1)).max(1)
}

/// The seed of node `id`'s random choices, from the run's seed.
pub fn node_seed(seed: u64, id: &str) -> u64 {
    id.bytes().fold(seed ^ 0x9E37_79B9_7F4A_7C15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Where a node runs: its network namespace, if any, and the address it listens on.
struct Place {
    netns: Option<String>,
    listen: String,
    /// Worker threads for the node's runtime.
    threads: usize,
}

async fn spawn(
    binary: &Path,
    id: &str,
    place: &Place,
    dir: &Path,
    seed: u64,
) -> Result<NodeProcess, ClusterError> {
    let log = dir.join(format!("{id}.log"));
    let spawn_error = |source| ClusterError::Spawn {
        id: id.to_string(),
        binary: binary.to_path_buf(),
        source,
    };
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(spawn_error)?;
    // `ip netns exec` enters the namespace and execs the node: the process stays ours.
    let mut command = match &place.netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(binary);
            c
        }
        None => Command::new(binary),
    };
    let mut child = command
        .args([
            "node",
            "--id",
            id,
            "--listen",
            &place.listen,
            "--exit-with-parent",
        ])
        .arg("--settings")
        .arg(dir.join("cluster.json"))
        .arg("--data-dir")
        .arg(dir.join(id))
        .arg("--seed")
        .arg(seed.to_string())
        .arg("--threads")
        .arg(place.threads.to_string())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(spawn_error)?;
    let not_ready = |reason: String| ClusterError::NotReady {
        id: id.to_string(),
        reason,
        log: log.clone(),
    };
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| not_ready("no stdout".into()))?;
    let mut lines = BufReader::new(stdout).lines();
    let line = match tokio::time::timeout(START_TIMEOUT, lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) => return Err(not_ready("it exited before listening".into())),
        Ok(Err(e)) => return Err(not_ready(e.to_string())),
        Err(_) => return Err(not_ready(format!("not listening after {START_TIMEOUT:?}"))),
    };
    let listening: Listening = serde_json::from_str(&line)
        .map_err(|e| not_ready(format!("unexpected first line {line:?}: {e}")))?;
    Ok(NodeProcess {
        id: id.to_string(),
        addr: listening.addr,
        pid: child.id().unwrap_or_default(),
        child,
    })
}

/// Tells a node its peers and waits until its health check says it knows them.
async fn introduce(
    admin: &AdminClient,
    node: &NodeProcess,
    peers: BTreeMap<String, String>,
    log_dir: &Path,
) -> Result<(), ClusterError> {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    let mut last_error = String::new();
    while tokio::time::Instant::now() < deadline {
        match admin.set_peers(&node.addr, peers.clone()).await {
            Ok(health) if health.peers == peers => return Ok(()),
            Ok(health) => last_error = format!("knows peers {:?}", health.peers),
            Err(e) => last_error = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(ClusterError::NotReady {
        id: node.id.clone(),
        reason: format!("did not accept its peers: {last_error}"),
        log: log_dir.join(format!("{}.log", node.id)),
    })
}

/// Writes `text` to `path`, readable by its owner only (the file holds the secret).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}
