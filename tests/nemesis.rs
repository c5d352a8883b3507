//! Each fault of the nemesis, observed from outside the driver: processes, answers, and
//! replication.

use crate::process::{eventually, is_live_node};
use checker::api::ClusterSettings;
use checker::cluster::Cluster;
use checker::driver::{Nemesis, Processes, Recorder};
use checker::workload::nemesis::{Action, FaultKind, PlannedFault};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

struct Rig {
    cluster: Arc<Mutex<Cluster>>,
    nemesis: Arc<Nemesis<Processes>>,
    http: reqwest::Client,
    dir: tempfile::TempDir,
}

async fn rig() -> Rig {
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_checker"));
    let settings = ClusterSettings {
        write_timeout_ms: 300,
        read_timeout_ms: 300,
        ..ClusterSettings::default()
    };
    let cluster = Cluster::start(binary, 3, &settings, dir.path(), 7, None)
        .await
        .expect("cluster");
    let admin = cluster.admin(Duration::from_secs(5));
    let headers = checker::api::secret::headers(Some(cluster.secret()));
    let cluster = Arc::new(Mutex::new(cluster));
    let recorder = Arc::new(Recorder::create(&dir.path().join("history.jsonl")).expect("history"));
    let plane = Arc::new(Processes::new(cluster.clone(), None, admin));
    let nemesis = Arc::new(Nemesis::new(plane, recorder));
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_millis(400))
        .build()
        .expect("client");
    Rig {
        cluster,
        nemesis,
        http,
        dir,
    }
}

impl Rig {
    /// Runs one fault lasting `seconds` in the background.
    fn fault(&self, action: Action, seconds: f64) -> tokio::task::JoinHandle<()> {
        let schedule = vec![PlannedFault {
            at_s: 0.0,
            duration_s: seconds,
            action,
        }];
        let nemesis = self.nemesis.clone();
        tokio::spawn(async move {
            let _ = nemesis
                .run(
                    schedule,
                    tokio::time::Instant::now(),
                    Arc::new(AtomicBool::new(false)),
                )
                .await;
        })
    }

    async fn node(&self, id: &str) -> (String, u32) {
        let cluster = self.cluster.lock().await;
        let node = cluster.nodes().iter().find(|n| n.id == id).expect("node");
        (node.addr.clone(), node.pid)
    }

    async fn answers(&self, id: &str) -> bool {
        let (addr, _) = self.node(id).await;
        self.http
            .get(format!("http://{addr}/admin/health"))
            .send()
            .await
            .is_ok()
    }

    async fn value(&self, id: &str, cl: &str) -> Option<i64> {
        let (addr, _) = self.node(id).await;
        let url = format!("http://{addr}/v1/counters/views/home?cl={cl}");
        let body: serde_json::Value = self.http.get(url).send().await.ok()?.json().await.ok()?;
        body["value"].as_i64()
    }

    async fn delete(&self, id: &str, cl: &str) -> u16 {
        let (addr, _) = self.node(id).await;
        let url = format!("http://{addr}/v1/counters/views/home?cl={cl}");
        self.http
            .delete(url)
            .send()
            .await
            .map_or(0, |r| r.status().as_u16())
    }

    async fn add(&self, id: &str, cl: &str) -> u16 {
        let (addr, _) = self.node(id).await;
        let url = format!("http://{addr}/v1/counters/views/home");
        let body = serde_json::json!({"delta": 1, "cl": cl});
        self.http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_or(0, |r| r.status().as_u16())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_node_is_gone_and_comes_back_with_a_new_process() {
    let rig = rig().await;
    let (_, before) = rig.node("n2").await;
    let fault = rig.fault(Action::Kill { node: "n2".into() }, 2.0);
    let killed = eventually(Duration::from_millis(1500), || async {
        !is_live_node(before)
    })
    .await;
    assert!(killed, "the process was killed");
    assert!(!rig.answers("n2").await);
    fault.await.expect("fault ran");
    let (_, after) = rig.node("n2").await;
    assert_ne!(before, after);
    assert!(
        is_live_node(after) && rig.answers("n2").await,
        "restarted and answering"
    );
    drop(rig.dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_node_answers_nothing_until_resumed() {
    let rig = rig().await;
    let fault = rig.fault(Action::Pause { node: "n3".into() }, 2.0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!rig.answers("n3").await, "a stopped process cannot answer");
    fault.await.expect("fault ran");
    assert!(rig.answers("n3").await, "answers once resumed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partition_stops_replication_between_the_named_nodes_only() {
    let rig = rig().await;
    assert_eq!(rig.add("n1", "ALL").await, 200);
    let cuts = vec![("n1".to_string(), "n2".to_string())];
    let fault = rig.fault(
        Action::Partition {
            kind: FaultKind::PartitionHalves,
            cuts,
        },
        3.0,
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A delete goes from its coordinator to every replica: n1 → n3 arrives, n1 → n2 not.
    assert_eq!(rig.delete("n1", "ONE").await, 200);
    let replicated = eventually(Duration::from_secs(2), || async {
        rig.value("n3", "ONE").await.is_none()
    })
    .await;
    assert!(replicated, "n1 → n3 still replicates");
    assert_eq!(rig.value("n2", "ONE").await, Some(1), "n1 → n2 is cut");
    fault.await.expect("fault ran");
}

#[tokio::test]
async fn a_one_way_partition_loses_the_nodes_messages_but_not_the_others() {
    let rig = rig().await;
    assert_eq!(rig.add("n1", "ALL").await, 200);
    let cuts = vec![("n1".to_string(), "n2".to_string())];
    let fault = rig.fault(
        Action::Partition {
            kind: FaultKind::PartitionOneWay,
            cuts,
        },
        3.0,
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    // n2 → n1 still arrives and is acted on: an add n2 coordinates at ALL reaches n1, though
    // n1's answer is lost and n2 answers a timeout.
    assert_ne!(rig.add("n2", "ALL").await, 200);
    let applied = eventually(Duration::from_secs(2), || async {
        rig.value("n1", "ONE").await == Some(2)
    })
    .await;
    assert!(applied, "n2 → n1 arrives");
    // n1 → n2 is lost: a delete n1 coordinates reaches n3 alone.
    assert_eq!(rig.delete("n1", "ONE").await, 200);
    let replicated = eventually(Duration::from_secs(2), || async {
        rig.value("n3", "ONE").await.is_none()
    })
    .await;
    assert!(replicated, "n1 → n3 still replicates");
    assert!(rig.value("n2", "ONE").await.is_some(), "n1 → n2 is cut");
    fault.await.expect("fault ran");
}
