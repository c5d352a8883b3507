//! `checker run --target`: runs against one long-lived node, a target that is down or does
//! not speak the node API, and keys used as they are.

use crate::node_api::{request, spawn_node, start_node, Node};
use crate::process::checker;
use crate::process::run;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Runs hot-counter against `target` with seed 3 and `extra` flags, into `results`.
fn run_against(target: &str, results: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--workload",
        "hot-counter",
        "--seed",
        "3",
        "--time-limit",
        "4",
        "--rate",
        "200",
        "--target",
        target,
        "--results",
        results.to_str().expect("utf-8"),
    ];
    args.extend(extra);
    run(&args)
}

/// The run folders under `results/hot-counter/`, oldest first.
fn run_folders(results: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(results.join("hot-counter")) else {
        return Vec::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .map(|e| e.expect("entry").path())
        .filter(|p| !p.is_symlink())
        .collect();
    runs.sort();
    runs
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

#[test]
fn runs_against_one_long_lived_node_are_all_valid_and_play_its_fault_plane() {
    let (node, _data) = start_node(r#"{"rf": 1}"#, &[]);
    let results = tempfile::tempdir().expect("temp dir");
    let target = format!("http://{}", node.addr);
    let mut keys = Vec::new();
    for round in 0..3 {
        // Each run in a folder of its own (run folders are named by the second).
        let results = results.path().join(round.to_string());
        let out = run_against(&target, &results, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {round}: every run against a correct node is valid\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = run_folders(&results).pop().expect("a run folder");
        let record = json(&dir.join("run.json"));
        assert_eq!(record["nodes"][0]["addr"], node.addr.as_str());
        keys.push(record["workload"]["keys"].to_string());
        let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
        assert!(history.contains("\"ok\""), "the service was driven");
        assert!(
            history.contains("\"start-partition\"") && history.contains("\"heal\""),
            "the nemesis played through the node's fault plane and healed it"
        );
    }
    assert_ne!(keys[0], keys[1], "each run has keys of its own");
    assert_ne!(keys[1], keys[2], "each run has keys of its own");
}

#[test]
fn a_target_that_is_down_or_is_not_the_node_api_stops_the_run_before_it_starts() {
    let results = tempfile::tempdir().expect("temp dir");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let down = closed.local_addr().expect("address").to_string();
    drop(closed);
    let out = run_against(&down, results.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(
        stderr.contains(&down) && stderr.contains("not reachable"),
        "{stderr}"
    );

    // A web server that is not a counter node: 404 to everything.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let web = listener.local_addr().expect("address").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 2048];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found",
            );
        }
    });
    let out = run_against(&web, results.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(stderr.contains("does not speak the node API"), "{stderr}");

    let out = run_against("ftp://127.0.0.1:21", results.path(), &[]);
    assert_eq!(out.status.code(), Some(254));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not HTTP"));
    assert!(run_folders(results.path()).is_empty(), "no run started");
}

#[test]
fn keys_used_as_they_are_are_judged_from_the_counts_they_held_before_the_run() {
    let (node, _data) = start_node(r#"{"rf": 1}"#, &[]);
    let results = tempfile::tempdir().expect("temp dir");
    let first = run_against(&node.addr, &results.path().join("a"), &["--keys-as-is"]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let dir = run_folders(&results.path().join("a"))[0].clone();
    let record = json(&dir.join("run.json"));
    assert_eq!(record["workload"]["keys"][0], "views/home");
    let left = json(&dir.join("results.json"))["checkers"]["convergence"]["keys"].clone();
    assert_eq!(left, 1, "the final reads read the counter");
    // The same counter again: the second run starts from what the first left, so it is as
    // VALID as the first; judged from absent, every read would overcount.
    let second = run_against(&node.addr, &results.path().join("b"), &["--keys-as-is"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("baseline: 1 of the workload's counters"),
        "{stderr}"
    );
    let again = run_folders(&results.path().join("b"))[0].clone();
    let history = std::fs::read_to_string(again.join("history.jsonl")).expect("history");
    let first_op: serde_json::Value =
        serde_json::from_str(history.lines().next().expect("an op")).expect("JSON");
    assert_eq!(first_op["process"], 2_000_000_000, "{first_op}");
    assert_eq!(first_op["f"], "add");
    assert!(
        first_op["value"].as_i64().is_some_and(|v| v > 0),
        "{first_op}"
    );
    let checked = json(&again.join("results.json"));
    assert_eq!(checked["checkers"]["counter"]["overcount"]["reads"], 0);
    // A pattern that writes cells its keys do not name has no baseline to read.
    let queue = run(&[
        "run",
        "--workload",
        "tombstone-queue",
        "--target",
        &node.addr,
        "--keys-as-is",
        "--results",
        results.path().join("c").to_str().expect("utf-8"),
    ]);
    let stderr = String::from_utf8_lossy(&queue.stderr);
    assert_eq!(queue.status.code(), Some(254), "{stderr}");
    assert!(stderr.contains("`queue` pattern"), "{stderr}");
}

#[test]
fn a_target_without_an_open_fault_plane_is_driven_without_faults_and_says_so() {
    // A node whose admin plane wants a secret the run does not know.
    let (node, _data) = start_node(r#"{"rf": 1, "secret": "not-yours"}"#, &[]);
    let results = tempfile::tempdir().expect("temp dir");
    let out = run_against(&node.addr, results.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no faults: the target has no fault plane")
    );
    let dir = run_folders(results.path()).pop().expect("a run folder");
    let record = json(&dir.join("run.json"));
    let note = record["faults_note"].as_str().expect("a faults note");
    assert!(note.starts_with("no faults"), "{note}");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    assert!(!history.contains("\"start-"), "no fault was played");
    let report = std::fs::read_to_string(dir.join("report.html")).expect("report");
    assert!(report.contains("no faults: the target has no fault plane"));
}

/// Three of our nodes started by hand as one cluster (RF 3), peered through `/admin/peers`.
fn start_cluster() -> (Vec<Node>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = dir.path().join("cluster.json");
    std::fs::write(&settings, r#"{"rf": 3}"#).expect("settings");
    let ids = ["n1", "n2", "n3"];
    let nodes: Vec<Node> = ids
        .iter()
        .map(|id| {
            let mut command = checker();
            command
                .args(["node", "--id", id, "--listen", "127.0.0.1:0", "--settings"])
                .arg(&settings)
                .arg("--data-dir")
                .arg(dir.path().join(id));
            spawn_node(command)
        })
        .collect();
    for (i, node) in nodes.iter().enumerate() {
        let peers: serde_json::Map<String, serde_json::Value> = (ids.iter().zip(&nodes))
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (id, other))| (id.to_string(), other.addr.clone().into()))
            .collect();
        let body = serde_json::json!({ "peers": peers }).to_string();
        let url = format!("http://{}/admin/peers", node.addr);
        let (status, answer) = request("PUT", &url, Some(&body));
        assert_eq!(status, 200, "{answer}");
    }
    (nodes, dir)
}

#[test]
fn partitions_against_a_cluster_of_our_nodes_name_the_peers_it_knows() {
    let (nodes, _data) = start_cluster();
    let results = tempfile::tempdir().expect("temp dir");
    let targets: Vec<String> = nodes.iter().map(|n| n.addr.clone()).collect();
    let out = run_against(&targets.join(","), results.path(), &[]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let dir = run_folders(results.path()).pop().expect("a run folder");
    let record = json(&dir.join("run.json"));
    let ids: Vec<&str> = (record["nodes"].as_array().expect("nodes").iter())
        .map(|n| n["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        ["n1", "n2", "n3"],
        "named as the nodes name each other"
    );
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    let partition = (history.lines())
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .find(|op| op["f"] == "start-partition")
        .expect("a partition was played");
    let cuts = partition["value"]["cuts"].as_array().expect("cuts");
    assert!(!cuts.is_empty(), "{partition}");
    for cut in cuts {
        for node in cut.as_array().expect("a pair") {
            assert!(ids.contains(&node.as_str().expect("an id")), "{partition}");
        }
    }
}
