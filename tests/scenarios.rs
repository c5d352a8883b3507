//! Each mechanism of the bundled nodes, driven through its scenario on a real cluster
//! (separate processes over HTTP), asserting what a client observes.

use crate::process::eventually;
use checker::api::{ClusterSettings, CommitlogSync, Mode};
use checker::cluster::Cluster;
use serde_json::{json, Value};
use std::time::Duration;

/// A running cluster, an HTTP client and the folder the nodes keep their data in.
struct Harness {
    cluster: Cluster,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Harness {
    async fn start(nodes: usize, settings: ClusterSettings) -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let binary = std::path::Path::new(env!("CARGO_BIN_EXE_checker"));
        let cluster = Cluster::start(binary, nodes, &settings, dir.path(), 7, None)
            .await
            .expect("cluster starts");
        // The cluster's secret opens its admin plane.
        let http = reqwest::Client::builder()
            .default_headers(checker::api::secret::headers(Some(cluster.secret())))
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        Harness {
            cluster,
            http,
            _dir: dir,
        }
    }

    fn url(&self, node: &str, path: &str) -> String {
        let addr = &self
            .cluster
            .nodes()
            .iter()
            .find(|n| n.id == node)
            .expect("node")
            .addr;
        format!("http://{addr}{path}")
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.send().await.expect("the node answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn add(&self, node: &str, key: &str, delta: i64, cl: &str) -> u16 {
        let request = self
            .http
            .post(self.url(node, &format!("/v1/counters/{key}")))
            .json(&json!({"delta": delta, "cl": cl}));
        self.send(request).await.0
    }

    async fn read(&self, node: &str, key: &str, cl: &str) -> (u16, Value) {
        self.send(
            self.http
                .get(self.url(node, &format!("/v1/counters/{key}?cl={cl}"))),
        )
        .await
    }

    async fn value(&self, node: &str, key: &str, cl: &str) -> Option<i64> {
        let (status, body) = self.read(node, key, cl).await;
        assert_eq!(status, 200, "read {key} at {node}: {body}");
        body["value"].as_i64()
    }

    async fn delete(&self, node: &str, path: &str) -> u16 {
        self.send(
            self.http
                .delete(self.url(node, &format!("/v1/counters/{path}"))),
        )
        .await
        .0
    }

    async fn admin(&self, node: &str, path: &str, body: Option<Value>) -> Value {
        let request = match body {
            Some(body) => self.http.put(self.url(node, path)).json(&body),
            None => self.http.post(self.url(node, path)),
        };
        let (status, answer) = self.send(request).await;
        assert_eq!(status, 200, "{path} at {node}: {answer}");
        answer
    }

    /// Cuts the links between `a` and `b`, both ways.
    async fn cut(&self, a: &str, b: &str) {
        self.admin(a, "/admin/faults", Some(json!({"cut": [b]})))
            .await;
        self.admin(b, "/admin/faults", Some(json!({"cut": [a]})))
            .await;
    }

    /// Cuts `node` off from every other node, both ways.
    async fn isolate(&self, node: &str) {
        let others: Vec<String> = self
            .cluster
            .nodes()
            .iter()
            .map(|n| n.id.clone())
            .filter(|n| n != node)
            .collect();
        for other in &others {
            self.cut(node, other).await;
        }
        self.admin(node, "/admin/faults", Some(json!({ "cut": others })))
            .await;
    }

    /// Has `node` send a read to every replica of `key`, so that its failure detector notices
    /// the ones that cannot be reached (as gossip would, later) before the next request.
    async fn notice_unreachable(&self, node: &str, key: &str) {
        let (status, body) = self.read(node, key, "ALL").await;
        assert_ne!(status, 200, "a replica was unreachable: {body}");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }

    async fn heal(&self, nodes: &[&str]) {
        for node in nodes {
            self.admin(
                node,
                "/admin/faults",
                Some(json!({"cut": [], "delay_ms": {}})),
            )
            .await;
        }
    }
}

fn settings() -> ClusterSettings {
    ClusterSettings {
        rf: 3,
        write_timeout_ms: 300,
        read_timeout_ms: 300,
        ..ClusterSettings::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_retry_after_a_write_timeout_overcounts() {
    // n1 leads; its replicas answer slower than the write timeout, so the write times out
    // after n1 applied it. The client retries once: one intended increment, counted twice.
    let h = Harness::start(3, settings()).await;
    h.admin(
        "n1",
        "/admin/faults",
        Some(json!({"delay_ms": {"n2": 600, "n3": 600}})),
    )
    .await;
    assert_eq!(h.add("n1", "views/home", 1, "QUORUM").await, 504);
    assert_eq!(h.add("n1", "views/home", 1, "QUORUM").await, 504);
    h.heal(&["n1"]).await;
    // The delayed replication lands 600 ms after each write.
    let counted_twice = eventually(Duration::from_secs(5), || async {
        h.value("n2", "views/home", "ALL").await == Some(2)
    })
    .await;
    assert!(counted_twice, "one intended increment, counted twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_down_during_a_delete_resurrects_the_counter_after_gc_grace_and_repair() {
    let h = Harness::start(
        3,
        ClusterSettings {
            gc_grace_s: 1.0,
            ..settings()
        },
    )
    .await;
    assert_eq!(h.add("n1", "views/home", 5, "ALL").await, 200);
    h.isolate("n3").await;
    assert_eq!(h.delete("n1", "views/home?cl=QUORUM").await, 200);
    assert_eq!(h.value("n1", "views/home", "QUORUM").await, None);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for node in ["n1", "n2"] {
        let purged = h.admin(node, "/admin/compact", None).await;
        assert_eq!(purged["purged_tombstones"], 1, "{node}");
    }
    h.heal(&["n1", "n2", "n3"]).await;
    h.admin("n3", "/admin/repair", None).await;
    assert_eq!(
        h.value("n1", "views/home", "ALL").await,
        Some(5),
        "the zombie is back"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn repair_inside_gc_grace_spreads_the_delete_instead() {
    let h = Harness::start(
        3,
        ClusterSettings {
            gc_grace_s: 600.0,
            ..settings()
        },
    )
    .await;
    assert_eq!(h.add("n1", "views/home", 5, "ALL").await, 200);
    h.isolate("n3").await;
    assert_eq!(h.delete("n1", "views/home?cl=QUORUM").await, 200);
    h.heal(&["n1", "n2", "n3"]).await;
    h.admin("n3", "/admin/repair", None).await;
    for node in ["n1", "n2", "n3"] {
        h.admin(node, "/admin/compact", None).await;
        assert_eq!(h.value(node, "views/home", "ONE").await, None, "{node}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_cache_brings_a_deleted_count_back() {
    // Cassandra 3.11, RF 1: +6, delete the row, +6 reads 12 with the cache on (the default),
    // 6 with it off.
    for (cache, expected) in [(None, 12), (Some(false), 6)] {
        let defaults = ClusterSettings::default();
        let h = Harness::start(
            1,
            ClusterSettings {
                rf: 1,
                counter_cache: cache.unwrap_or(defaults.counter_cache),
                ..defaults
            },
        )
        .await;
        assert_eq!(h.add("n1", "views/home", 6, "ONE").await, 200);
        assert_eq!(h.delete("n1", "views/home?cl=ONE").await, 200);
        assert_eq!(h.add("n1", "views/home", 6, "ONE").await, 200);
        assert_eq!(
            h.value("n1", "views/home", "ONE").await,
            Some(expected),
            "cache {cache:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn increments_after_a_column_delete_are_acknowledged_but_invisible() {
    let h = Harness::start(3, settings()).await;
    assert_eq!(h.add("n1", "views/home", 5, "ALL").await, 200);
    assert_eq!(h.delete("n2", "views/home?cl=ALL&scope=column").await, 200);
    for delta in [1, 2, 3] {
        assert_eq!(h.add("n3", "views/home", delta, "ALL").await, 200);
    }
    assert_eq!(h.value("n1", "views/home", "ALL").await, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delete_coordinated_by_a_node_whose_clock_is_ahead_hides_later_increments() {
    for delete in ["views/home?cl=ALL", "views?cl=ALL"] {
        let h = Harness::start(3, settings()).await;
        h.admin(
            "n1",
            "/admin/faults",
            Some(json!({"clock_offset_ms": 60_000})),
        )
        .await;
        assert_eq!(h.add("n2", "views/home", 1, "ALL").await, 200);
        assert_eq!(h.delete("n1", delete).await, 200);
        assert_eq!(
            h.add("n2", "views/home", 1, "ALL").await,
            200,
            "acknowledged"
        );
        assert_eq!(
            h.value("n3", "views/home", "ALL").await,
            None,
            "but hidden ({delete})"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn scans_over_the_tombstone_thresholds_warn_then_fail() {
    let s = ClusterSettings {
        rf: 1,
        tombstone_warn_threshold: 3,
        tombstone_failure_threshold: 6,
        ..settings()
    };
    let h = Harness::start(1, s).await;
    let queue = |n: usize| {
        let h = &h;
        async move {
            for i in 0..n {
                assert_eq!(h.add("n1", &format!("queue/item{i}"), 1, "ONE").await, 200);
                assert_eq!(h.delete("n1", &format!("queue/item{i}?cl=ONE")).await, 200);
            }
        }
    };
    queue(5).await;
    let (status, body) = h
        .send(h.http.get(h.url("n1", "/v1/counters/queue?cl=ONE")))
        .await;
    assert_eq!(
        (status, body["tombstones"].as_u64()),
        (200, Some(5)),
        "{body}"
    );
    assert!(
        body["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("warn threshold")),
        "{body}"
    );
    queue(7).await;
    let (status, body) = h
        .send(h.http.get(h.url("n1", "/v1/counters/queue?cl=ONE")))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (500, Some("tombstone_overwhelming")),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_loses_no_acknowledged_write_and_a_power_loss_only_unsynced_ones() {
    // (sync mode, power loss instead of a kill, what a restart reads)
    for (sync, power_loss, expected) in [
        (CommitlogSync::Periodic(60_000), false, Some(5)),
        (CommitlogSync::Periodic(60_000), true, None),
        (CommitlogSync::Batch, true, Some(5)),
    ] {
        let mut h = Harness::start(
            1,
            ClusterSettings {
                rf: 1,
                commitlog_sync: sync,
                ..settings()
            },
        )
        .await;
        assert_eq!(h.add("n1", "views/home", 5, "ONE").await, 200);
        // Past the commit log's 100 ms marker interval: what a replay trusts.
        tokio::time::sleep(Duration::from_millis(400)).await;
        if power_loss {
            h.cluster.power_loss("n1").await.expect("power loss");
        } else {
            h.cluster.kill("n1").await;
        }
        h.cluster.restart("n1").await.expect("restarts");
        assert_eq!(
            h.value("n1", "views/home", "ONE").await,
            expected,
            "{sync:?}, power loss {power_loss}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ravendb_a_delete_racing_an_increment_leaves_the_counter_alive() {
    let h = Harness::start(
        2,
        ClusterSettings {
            mode: Mode::Ravendb,
            rf: 2,
            ..settings()
        },
    )
    .await;
    assert_eq!(h.add("n1", "views/home", 5, "ONE").await, 200);
    let replicated = eventually(Duration::from_secs(3), || async {
        h.value("n2", "views/home", "ONE").await == Some(5)
    })
    .await;
    assert!(replicated, "replicated in the background");
    h.cut("n1", "n2").await;
    assert_eq!(h.delete("n1", "views/home").await, 200);
    assert_eq!(h.add("n2", "views/home", 3, "ONE").await, 200);
    h.heal(&["n1", "n2"]).await;
    // No repair: replication resumes by itself after the heal. The increment wins; the
    // surviving counter carries the pre-delete portion too.
    let agreed = eventually(Duration::from_secs(5), || async {
        h.value("n1", "views/home", "ONE").await == Some(8)
            && h.value("n2", "views/home", "ONE").await == Some(8)
    })
    .await;
    assert!(agreed, "both replicas read 8 within 5 s of the heal");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_off_replica_serves_stale_reads_at_one_but_not_at_quorum() {
    let h = Harness::start(3, settings()).await;
    assert_eq!(h.add("n1", "views/home", 1, "ALL").await, 200);
    h.isolate("n3").await;
    h.notice_unreachable("n1", "views/home").await;
    assert_eq!(h.add("n1", "views/home", 1, "QUORUM").await, 200);
    assert_eq!(
        h.value("n3", "views/home", "ONE").await,
        Some(1),
        "stale at ONE"
    );
    // n3 cannot reach a quorum: the read times out, or fails fast once n3 noticed; either
    // way it returns no stale value.
    let (status, body) = h.read("n3", "views/home", "QUORUM").await;
    assert!(matches!(status, 503 | 504), "{status} {body}");
    assert!(body["value"].is_null(), "{body}");
    assert_eq!(h.value("n1", "views/home", "QUORUM").await, Some(2));
}

/// The counter's shards as `node` holds them, by the id of the node that led them.
async fn shards(h: &Harness, node: &str, key: &str) -> serde_json::Map<String, Value> {
    let (status, oracle) = h.send(h.http.get(h.url(node, "/admin/oracle"))).await;
    assert_eq!(status, 200, "{oracle}");
    oracle["counters"][key]["shards"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_leader_is_a_random_live_replica_not_always_the_coordinator() {
    let h = Harness::start(3, settings()).await;
    for _ in 0..30 {
        assert_eq!(h.add("n1", "views/home", 1, "ALL").await, 200);
    }
    let led: Vec<String> = shards(&h, "n1", "views/home")
        .await
        .keys()
        .cloned()
        .collect();
    assert!(
        led.len() >= 2,
        "30 increments at n1 were all led by {led:?}"
    );
    assert_eq!(h.value("n2", "views/home", "ALL").await, Some(30));
}

/// The one node of three that holds `key` at rf 1.
async fn replica_of(h: &Harness, key: &str) -> String {
    for node in ["n1", "n2", "n3"] {
        if !shards(h, node, key).await.is_empty() {
            return node.to_string();
        }
    }
    panic!("no node holds {key}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_rf_below_the_node_count_a_coordinator_forwards_and_stamps_the_write() {
    let h = Harness::start(
        3,
        ClusterSettings {
            rf: 1,
            ..settings()
        },
    )
    .await;
    assert_eq!(h.add("n1", "views/home", 1, "ONE").await, 200);
    let replica = replica_of(&h, "views/home").await;
    let coordinator = ["n1", "n2", "n3"]
        .into_iter()
        .find(|n| *n != replica)
        .expect("a node that is not the replica");
    // A coordinator that is not a replica forwards to the one that is.
    assert_eq!(h.add(coordinator, "views/home", 2, "ONE").await, 200);
    assert_eq!(h.value(coordinator, "views/home", "ONE").await, Some(3));
    // Its clock 60 s behind: a delete, then its +5 is stamped before the delete and lost,
    // although the leader's own clock is right.
    h.admin(
        coordinator,
        "/admin/faults",
        Some(json!({"clock_offset_ms": -60_000})),
    )
    .await;
    assert_eq!(h.delete(&replica, "views/home?cl=ONE").await, 200);
    assert_eq!(h.add(coordinator, "views/home", 5, "ONE").await, 200);
    assert_eq!(h.value(&replica, "views/home", "ONE").await, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_at_all_repairs_the_stale_replica_it_contacted() {
    let h = Harness::start(3, settings()).await;
    assert_eq!(h.add("n1", "views/home", 1, "ALL").await, 200);
    h.isolate("n3").await;
    h.notice_unreachable("n1", "views/home").await;
    assert_eq!(h.add("n1", "views/home", 1, "QUORUM").await, 200);
    h.heal(&["n1", "n2", "n3"]).await;
    assert_eq!(h.value("n3", "views/home", "ONE").await, Some(1), "stale");
    let healed = eventually(Duration::from_secs(5), || async {
        matches!(h.read("n1", "views/home", "ALL").await, (200, body) if body["value"] == 2)
    })
    .await;
    assert!(healed, "a read at ALL answers once n3 counts as up again");
    assert_eq!(
        h.value("n3", "views/home", "ONE").await,
        Some(2),
        "repaired"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_increments_on_one_leader_serialise_on_the_counters_lock() {
    let h = Harness::start(
        1,
        ClusterSettings {
            rf: 1,
            ..settings()
        },
    )
    .await;
    let url = h.url("n1", "/v1/counters/views/home");
    let mut adds = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let request = h.http.post(&url).json(&json!({"delta": 1, "cl": "ONE"}));
        adds.spawn(async move { request.send().await.map_or(0, |r| r.status().as_u16()) });
    }
    let statuses = adds.join_all().await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    assert_eq!(
        h.value("n1", "views/home", "ONE").await,
        Some(50),
        "none lost"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_asks_a_spare_replica_when_the_first_is_slow() {
    let h = Harness::start(3, settings()).await;
    assert_eq!(h.add("n1", "views/home", 1, "ALL").await, 200);
    // n1's link to n2 is slower than the read timeout (300 ms): a QUORUM read that picked
    // n2 answers only because it asks n3 after `speculative_retry_ms` (50).
    h.admin(
        "n1",
        "/admin/faults",
        Some(json!({"delay_ms": {"n2": 1_000}})),
    )
    .await;
    for _ in 0..16 {
        assert_eq!(h.value("n1", "views/home", "QUORUM").await, Some(1));
    }
}
