//! The simulated cluster: each node's state and router in this process, with its data folder
//! on disk as in a real run, killed by dropping it (its commit log keeps what a killed
//! process's would) and started again by recovering that folder.

use super::net::{call_error, request, Sent, SimNet, SimTransport};
use crate::api::{CallError, ClusterSettings};
use crate::cluster::{node_ids, node_seed};
use crate::node::core::clock::Clock;
use crate::node::core::commitlog;
use crate::node::core::durable::Durable;
use crate::node::core::raven_journal::RavenDurable;
use crate::node::core::store::StoreSettings;
use crate::node::http::router::router;
use crate::node::http::server::background;
use crate::node::http::state::{Node, NodeParts};
use crate::store::oracle;
use crate::workload::net::SimNetwork;
use axum::http::Method;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How long an admin call through the simulated network may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Simulated time as a wall clock: a fixed instant (2026-01-01T00:00:00Z) plus the time
/// simulated since the run began.
pub struct SimClock {
    began: Instant,
}

/// 2026-01-01T00:00:00Z, in microseconds since the Unix epoch.
const EPOCH_US: u64 = 1_767_225_600_000_000;

impl SimClock {
    /// A clock at its fixed instant now.
    pub fn new() -> Self {
        SimClock {
            began: Instant::now(),
        }
    }
}

impl Default for SimClock {
    fn default() -> Self {
        SimClock::new()
    }
}

impl Clock for SimClock {
    fn now_micros(&self) -> u64 {
        EPOCH_US + self.began.elapsed().as_micros() as u64
    }
}

/// One simulated node: its state and background tasks while it runs.
struct SimNode {
    id: String,
    running: Option<(Arc<Node>, Vec<JoinHandle<()>>)>,
    /// How many times it was started.
    starts: u64,
}

/// The nodes of one simulated run.
pub struct SimCluster {
    net: Arc<SimNet>,
    nodes: Vec<SimNode>,
    settings: ClusterSettings,
    dir: PathBuf,
    seed: u64,
    clock: Arc<SimClock>,
}

impl SimCluster {
    /// Starts `count` nodes with `settings`, each keeping its data in `dir/<id>/` and seeding
    /// its random choices from `seed` and its id, on a network shaped by `shape` whose
    /// delays come from `seed`.
    pub fn start(
        count: usize,
        settings: &ClusterSettings,
        shape: &SimNetwork,
        dir: &Path,
        seed: u64,
    ) -> std::io::Result<SimCluster> {
        let mut cluster = SimCluster {
            net: SimNet::new(shape, seed ^ 0x005E_ED0F_5111),
            nodes: node_ids(count)
                .into_iter()
                .map(|id| SimNode {
                    id,
                    running: None,
                    starts: 0,
                })
                .collect(),
            settings: settings.clone(),
            dir: dir.to_path_buf(),
            seed,
            clock: Arc::new(SimClock::new()),
        };
        for i in 0..count {
            cluster.boot(i)?;
        }
        Ok(cluster)
    }

    /// The network the nodes are on.
    pub fn net(&self) -> Arc<SimNet> {
        self.net.clone()
    }

    /// The nodes' ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.id.clone()).collect()
    }

    /// Starts node `i` from its data folder: it recovers its segments and commit log.
    fn boot(&mut self, i: usize) -> std::io::Result<()> {
        let id = self.nodes[i].id.clone();
        let data_dir = self.dir.join(&id);
        let (data, _) = Durable::open(
            &id,
            StoreSettings::of(&self.settings),
            self.settings.commitlog_sync,
            &data_dir,
        )?;
        let life = self.net.next_life(&id);
        let timeout = self
            .settings
            .write_timeout()
            .max(self.settings.read_timeout());
        let transport = SimTransport::new(self.net.clone(), &id, life, timeout);
        let starts = self.nodes[i].starts;
        let peers = self.ids().into_iter().filter(|p| *p != id);
        let node = Arc::new(Node::new(NodeParts {
            id: id.clone(),
            settings: self.settings.clone(),
            data,
            raven: RavenDurable::open(&id, &data_dir)?,
            peers: peers.map(|p| (p.clone(), p)).collect(),
            transport: Arc::new(transport),
            clock: self.clock.clone(),
            seed: node_seed(self.seed, &id).wrapping_add(starts),
            secret: None,
            inline_io: true,
        }));
        self.net
            .attach(&id, node.clone(), router(node.clone()), life);
        let tasks = background(node.clone());
        self.nodes[i].running = Some((node, tasks));
        self.nodes[i].starts += 1;
        Ok(())
    }

    fn index(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// Kills node `id` as SIGKILL would: its tasks stop, its messages go nowhere, and its
    /// commit log keeps what a killed process's keeps; with `power_loss`, only what was
    /// synced. Returns the bytes of log lost.
    pub fn kill(&mut self, id: &str, power_loss: bool) -> std::io::Result<u64> {
        let Some(i) = self.index(id) else {
            return Ok(0);
        };
        self.net.detach(id);
        if let Some((node, tasks)) = self.nodes[i].running.take() {
            tasks.iter().for_each(JoinHandle::abort);
            node.stop();
        }
        match power_loss {
            true => commitlog::lose_unsynced(&self.dir.join(id)),
            false => Ok(0),
        }
    }

    /// Starts killed node `id` again on its data folder.
    pub fn restart(&mut self, id: &str) -> std::io::Result<()> {
        match self.index(id) {
            Some(i) if self.nodes[i].running.is_none() => self.boot(i),
            _ => Ok(()),
        }
    }

    /// The nodes killed and not started again.
    pub fn dead(&self) -> Vec<String> {
        let dead = self.nodes.iter().filter(|n| n.running.is_none());
        dead.map(|n| n.id.clone()).collect()
    }

    /// Calls node `id`'s admin plane: `method` on `path`, with a JSON `body` if any.
    pub async fn admin(
        &self,
        id: &str,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Vec<u8>), CallError> {
        admin(&self.net, id, method, path, body).await
    }

    /// Saves each node's oracle dump as `dir/<id>.oracle.json`, as a real run does; a node
    /// that does not answer is skipped with a warning.
    pub async fn save_oracles(&self) -> std::io::Result<()> {
        for id in self.ids() {
            match self.admin(&id, Method::GET, "/admin/oracle", None).await {
                Ok((200, body)) => {
                    let dump: serde_json::Value = serde_json::from_slice(&body)?;
                    oracle::save(&self.dir, &id, &dump)?;
                }
                other => tracing::warn!(node = %id, answer = ?other.map(|a| a.0), "no oracle dump"),
            }
        }
        Ok(())
    }

    /// Stops every node.
    pub fn stop(&mut self) {
        for id in self.ids() {
            let _ = self.kill(&id, false);
        }
    }
}

/// Calls node `id`'s admin plane through `net`, as a client would.
pub async fn admin(
    net: &SimNet,
    id: &str,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
) -> Result<(u16, Vec<u8>), CallError> {
    let sent = net.deliver(None, id, Sent::Client(request(method, path, body)));
    match tokio::time::timeout(ADMIN_TIMEOUT, sent).await {
        Ok(answer) => answer.map_err(|e| call_error(Some(e))),
        Err(_) => Err(call_error(None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ConsistencyLevel, CounterKey};
    use crate::driver::CounterClient;
    use crate::sim::SimClient;
    use checkers::OpType;
    use serde_json::Value;

    fn nodes(count: usize, dir: &Path) -> (SimCluster, SimClient) {
        let settings = ClusterSettings {
            rf: count,
            write_timeout_ms: 300,
            read_timeout_ms: 300,
            ..ClusterSettings::default()
        };
        let shape = SimNetwork::default();
        let cluster = SimCluster::start(count, &settings, &shape, dir, 3).expect("a cluster");
        let client = SimClient::new(cluster.net(), cluster.ids(), Duration::from_secs(5));
        (cluster, client)
    }

    fn one_node(dir: &Path) -> (SimCluster, SimClient) {
        nodes(1, dir)
    }

    /// What node `id` holds for counter `key`, from its oracle dump.
    async fn held(cluster: &SimCluster, id: &str, key: &str) -> Value {
        let (status, body) =
            (cluster.admin(id, Method::GET, "/admin/oracle", None).await).expect("an oracle dump");
        assert_eq!(status, 200);
        let dump: Value = serde_json::from_slice(&body).expect("JSON");
        dump["values"][key].clone()
    }

    async fn read(client: &SimClient, key: &CounterKey) -> Value {
        let read = client.read(0, key, ConsistencyLevel::One).await;
        assert_eq!(read.kind, OpType::Ok, "{read:?}");
        read.value
    }

    #[tokio::test(start_paused = true)]
    async fn a_kill_keeps_the_marked_log_and_a_power_loss_only_what_was_synced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut cluster, client) = one_node(dir.path());
        let key = CounterKey::new("p", "c").expect("a key");
        let one = ConsistencyLevel::One;
        assert_eq!(client.add(0, &key, 5, one).await.kind, OpType::Ok);
        // Past a mark interval, the write is in what a replay trusts.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(cluster.kill("n1", false).expect("a kill"), 0);
        assert_eq!(cluster.dead(), ["n1"]);
        let refused = client.add(0, &key, 1, one).await;
        assert_eq!(refused.kind, OpType::Fail, "{refused:?}");
        assert_eq!(refused.error.as_deref(), Some("connection_refused"));
        cluster.restart("n1").expect("a restart");
        assert!(cluster.dead().is_empty());
        assert_eq!(read(&client, &key).await, 5);
        assert_eq!(client.add(0, &key, 3, one).await.kind, OpType::Ok);
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Periodic sync every 10 s: nothing was synced, so a power loss loses it all.
        let lost = cluster.kill("n1", true).expect("a power loss");
        assert!(lost > 0, "{lost}");
        cluster.restart("n1").expect("a restart");
        assert_eq!(read(&client, &key).await, Value::Null);
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_node_answers_once_resumed_and_a_kill_loses_what_it_handled() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut cluster, client) = one_node(dir.path());
        let client = Arc::new(client);
        let key = CounterKey::new("p", "c").expect("a key");
        let net = cluster.net();
        net.pause("n1", true);
        let pending = {
            let (client, key) = (client.clone(), key.clone());
            tokio::spawn(async move { client.add(0, &key, 2, ConsistencyLevel::One).await })
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(!pending.is_finished());
        net.pause("n1", false);
        let answered = pending.await.expect("the add");
        assert_eq!(answered.kind, OpType::Ok, "{answered:?}");
        // Killed while the request waits on the paused node: its outcome is unknown.
        net.pause("n1", true);
        let pending = {
            let (client, key) = (client.clone(), key.clone());
            tokio::spawn(async move { client.add(0, &key, 2, ConsistencyLevel::One).await })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        cluster.kill("n1", false).expect("a kill");
        let lost = pending.await.expect("the add");
        assert_eq!(lost.kind, OpType::Info, "{lost:?}");
        assert_eq!(lost.error.as_deref(), Some("transport_error"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_node_cut_one_way_acts_on_what_it_gets_but_its_answers_are_lost() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (cluster, client) = nodes(2, dir.path());
        let cut = crate::api::FaultsUpdate {
            cut_to: Some(["n2".to_string()].into()),
            ..crate::api::FaultsUpdate::default()
        };
        let body = serde_json::to_vec(&cut).expect("JSON");
        let set = cluster
            .admin("n1", Method::PUT, "/admin/faults", Some(body))
            .await;
        assert_eq!(set.map(|a| a.0), Ok(200));
        let key = CounterKey::new("p", "c").expect("a key");
        // Through n2 at ALL: n1 takes the write, but n2 never hears that it did.
        let add = client.add(1, &key, 2, ConsistencyLevel::All).await;
        assert_eq!(add.kind, OpType::Info, "{add:?}");
        assert_eq!(held(&cluster, "n1", "p/c").await, 2);
        // Through n1 at ALL: its message to n2 is lost, so n2 holds at most the first add.
        let add = client.add(0, &key, 5, ConsistencyLevel::All).await;
        assert_eq!(add.kind, OpType::Info, "{add:?}");
        assert_eq!(held(&cluster, "n1", "p/c").await, 7);
        assert!(held(&cluster, "n2", "p/c").await.as_i64() < Some(7));
    }

    #[tokio::test(start_paused = true)]
    async fn a_killed_node_sends_nothing_more_even_what_it_had_started_to_send() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut cluster, client) = nodes(2, dir.path());
        let key = CounterKey::new("p", "c").expect("a key");
        let add = client.add(0, &key, 3, ConsistencyLevel::All).await;
        assert_eq!(add.kind, OpType::Ok, "{add:?}");
        // n1's delete reaches n1 alone at first: its message to n2 waits for n2 to resume.
        cluster.net().pause("n2", true);
        let delete = crate::api::DeleteScope::Row;
        let deleted = client.delete(0, &key, delete, ConsistencyLevel::One).await;
        assert_eq!(deleted.kind, OpType::Ok, "{deleted:?}");
        cluster.kill("n1", false).expect("a kill");
        cluster.net().pause("n2", false);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            held(&cluster, "n2", "p/c").await,
            3,
            "a dead node's message arrived"
        );
    }
}
