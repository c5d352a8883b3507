//! Benchmark of the bundled nodes: increments per second and p50 / p99 latency at RF 1 and at
//! RF 3 QUORUM, next to the requests per second of a bare hello endpoint on the same HTTP
//! stack (axum server, reqwest client) measured in the same run: the ceiling on this machine.
//! Then the driver itself (generator, pacing, recording the history) at an unreachable rate,
//! against a stub that answers the node API at once and against an RF 3 cluster: the driver
//! is not the bottleneck when its rate against the stub is far above the cluster's.
//! The increments run with the commit log in `periodic` mode, and once more at RF 3 in `batch`
//! mode (every write synced before it is acknowledged), to show what durability costs. The
//! ceiling is measured first and last, and the better of the two taken. For the loads on
//! nodes, the CPU the node processes spent per op is printed too: it moves far less with the
//! machine's other load than the rates do.
//! Run with `cargo bench --bench node_throughput` (`BENCH_SECONDS`, `BENCH_CLIENTS` to tune).

use checker::api::ConsistencyLevel;
use checker::api::CounterKey;
use checker::api::{ClusterSettings, CommitlogSync};
use checker::cluster::Cluster;
use checker::driver::{CounterClient, HttpClient, Recorder};
use checkers::OpType;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Throughput and latency of one measured load.
struct Measured {
    ops: usize,
    failed: usize,
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// CPU the nodes spent per op, in microseconds (none for loads without nodes).
    node_cpu_us: Option<f64>,
}

/// CPU seconds the processes `pids` have used so far, user and system, from `/proc`
/// (whose clock ticks are Linux's fixed `USER_HZ` of 100 a second).
fn cpu_seconds(pids: &[u32]) -> f64 {
    let ticks = |pid: &u32| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command name, which ends with the last ')'.
        let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        field(11).unwrap_or(0) + field(12).unwrap_or(0)
    };
    pids.iter().map(ticks).sum::<u64>() as f64 / 100.0
}

/// Runs `op` from `clients` concurrent loops for `seconds`; every loop stops by itself.
async fn load<F, Fut>(clients: usize, seconds: f64, op: F) -> Measured
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let op = Arc::new(op);
    let failed = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (op, failed) = (op.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = client;
            while Instant::now() < deadline {
                let t = Instant::now();
                if !op(i).await {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                latencies.push(t.elapsed());
                i += clients;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap_or_default());
    }
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort();
    let quantile = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    Measured {
        ops: latencies.len(),
        failed: failed.load(Ordering::Relaxed),
        per_second: latencies.len() as f64 / elapsed,
        p50_ms: quantile(0.5),
        p99_ms: quantile(0.99),
        node_cpu_us: None,
    }
}

/// A bare endpoint on the same stack, on 127.0.0.1.
async fn hello_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let app = axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn increments(
    nodes: usize,
    rf: usize,
    cl: ConsistencyLevel,
    commitlog_sync: CommitlogSync,
    clients: usize,
    seconds: f64,
) -> Measured {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = ClusterSettings {
        rf,
        commitlog_sync,
        ..ClusterSettings::default()
    };
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_checker"));
    let mut cluster = Cluster::start(binary, nodes, &settings, dir.path(), 7, None)
        .await
        .expect("cluster");
    let addrs = cluster.addrs();
    let client = Arc::new(HttpClient::new(addrs, Duration::from_secs(2)));
    let key: CounterKey = "views/home".parse().expect("key");
    let pids: Vec<u32> = cluster.nodes().iter().map(|n| n.pid).collect();
    let cpu_before = cpu_seconds(&pids);
    let mut measured = load(clients, seconds, move |i| {
        let (client, key) = (client.clone(), key.clone());
        async move { client.add(i % nodes, &key, 1, cl).await.kind == OpType::Ok }
    })
    .await;
    let cpu = cpu_seconds(&pids) - cpu_before;
    measured.node_cpu_us = Some(cpu * 1e6 / measured.ops.max(1) as f64);
    cluster.stop().await;
    measured
}

/// A service that answers the node API at once, to measure the driver alone.
async fn stub_server() -> String {
    use axum::routing::post;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let app = axum::Router::new().route(
        "/v1/counters/{partition}/{cell}",
        post(|| async { axum::Json(serde_json::json!({"node": "stub"})) }).get(|| async {
            axum::Json(serde_json::json!({"value": 0, "tombstones": 0, "node": "stub"}))
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Ops per second the whole driver records against `addrs`.
async fn driver_rate(addrs: Vec<(String, String)>, clients: usize, seconds: f64) -> f64 {
    use checker::driver::drive;
    use checker::workload::Workload;
    let dir = tempfile::tempdir().expect("temp dir");
    let recorder = Arc::new(Recorder::create(&dir.path().join("history.jsonl")).expect("history"));
    let nodes = addrs.len();
    let workload = Workload {
        nodes,
        concurrency: clients,
        rate: 1_000_000.0,
        time_limit: seconds,
        ..Workload::default()
    };
    let client = Arc::new(HttpClient::new(addrs, Duration::from_secs(2)));
    let start = Instant::now();
    drive(
        client,
        &workload,
        1,
        recorder.clone(),
        Arc::new(std::sync::atomic::AtomicBool::new(false)),
    )
    .await
    .expect("drives");
    let done = recorder.tally.ok.load(Ordering::Relaxed)
        + recorder.tally.fail.load(Ordering::Relaxed)
        + recorder.tally.info.load(Ordering::Relaxed);
    done as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let clients: usize = std::env::var("BENCH_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let addr = hello_server().await;
        let hello = || {
            let http = reqwest::Client::new();
            let url = Arc::new(format!("http://{addr}/hello"));
            load(clients, seconds, move |_| {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    http.get(url.as_str())
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success())
                }
            })
        };
        let hello_first = hello().await;
        let periodic = CommitlogSync::Periodic(1000);
        let (one, quorum) = (ConsistencyLevel::One, ConsistencyLevel::Quorum);
        let rf1 = increments(1, 1, one, periodic, clients, seconds).await;
        let rf3 = increments(3, 3, quorum, periodic, clients, seconds).await;
        let batch = CommitlogSync::Batch;
        let rf3_batch = increments(3, 3, quorum, batch, clients, seconds).await;
        // This machine's ceiling wanders between runs: the better of two measures is taken.
        let hello_last = hello().await;
        let hello = match hello_last.per_second > hello_first.per_second {
            true => hello_last,
            false => hello_first,
        };
        let stub = stub_server().await;
        let against_stub = driver_rate(vec![("stub".into(), stub)], clients, seconds).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let binary = std::path::Path::new(env!("CARGO_BIN_EXE_checker"));
        let settings = ClusterSettings {
            commitlog_sync: CommitlogSync::Periodic(1000),
            ..ClusterSettings::default()
        };
        let mut cluster = Cluster::start(binary, 3, &settings, dir.path(), 7, None)
            .await
            .expect("cluster");
        let addrs = cluster.addrs();
        let against_cluster = driver_rate(addrs, clients, seconds).await;
        cluster.stop().await;
        println!("{clients} concurrent clients, {seconds} s each, all on 127.0.0.1\n");
        println!(
            "{:<28} {:>9} {:>7} {:>10} {:>9} {:>9} {:>10} {:>12}",
            "load", "ops", "failed", "ops/s", "p50 ms", "p99 ms", "of hello", "node CPU/op"
        );
        for (name, m) in [
            ("hello endpoint (ceiling)", &hello),
            ("increments, RF 1, ONE", &rf1),
            ("increments, RF 3, QUORUM", &rf3),
            ("RF 3, QUORUM, batch log", &rf3_batch),
        ] {
            let cpu = m
                .node_cpu_us
                .map_or("-".to_string(), |us| format!("{us:.0} µs"));
            println!(
                "{name:<28} {:>9} {:>7} {:>10.0} {:>9.2} {:>9.2} {:>9.1}% {cpu:>12}",
                m.ops,
                m.failed,
                m.per_second,
                m.p50_ms,
                m.p99_ms,
                100.0 * m.per_second / hello.per_second
            );
        }
        println!("\nthe driver (generator, pacing, history), 80% adds / 20% reads:");
        println!("  against a stub service:   {against_stub:>9.0} ops/s");
        println!(
            "  against RF 3 QUORUM:      {against_cluster:>9.0} ops/s ({:.1}x headroom)",
            against_stub / against_cluster.max(1.0)
        );
    });
}
