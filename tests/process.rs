//! Helpers to start the `checker` binary and to see which of its node processes still live.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The `checker` binary under test.
pub fn checker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_checker"))
}

/// Runs `checker` with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    checker().args(args).output().expect("start checker")
}

/// The only run folder under `results/hot-counter/`.
pub fn only_run_folder(results: &Path) -> PathBuf {
    only_run_folder_of(results, "hot-counter")
}

/// The only run folder under `results/WORKLOAD/`.
pub fn only_run_folder_of(results: &Path, workload: &str) -> PathBuf {
    let workload = results.join(workload);
    let runs: Vec<PathBuf> = std::fs::read_dir(&workload)
        .expect("workload folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| !p.is_symlink())
        .collect();
    assert_eq!(runs.len(), 1, "runs: {runs:?}");
    runs[0].clone()
}

/// The pids run.json says the run's nodes had.
pub fn node_pids(run_dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(run_dir.join("run.json")).expect("run.json");
    let run: serde_json::Value = serde_json::from_str(&text).expect("run.json is JSON");
    run["nodes"]
        .as_array()
        .expect("nodes listed")
        .iter()
        .map(|n| n["pid"].as_u64().expect("pid") as u32)
        .collect()
}

/// Whether a pid is a live `checker node` process (not a zombie, not a reused pid).
pub fn is_live_node(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let zombie = status
        .lines()
        .any(|l| l.starts_with("State:") && l.contains('Z'));
    let is_node = String::from_utf8_lossy(&cmdline).contains("node\0--id");
    is_node && !zombie
}

/// Waits up to `limit` for every pid to be gone; returns the ones still alive.
pub fn survivors(pids: &[u32], limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|p| is_live_node(*p)).collect();
        if alive.is_empty() || start.elapsed() > limit {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until run.json lists the nodes (the cluster is up); returns their pids.
pub fn wait_for_nodes(results: &Path, limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let workload = results.join("hot-counter");
        if let Ok(entries) = std::fs::read_dir(&workload) {
            for entry in entries.flatten() {
                let text =
                    std::fs::read_to_string(entry.path().join("run.json")).unwrap_or_default();
                if let Ok(run) = serde_json::from_str::<serde_json::Value>(&text) {
                    if run["nodes"].as_array().is_some_and(|n| !n.is_empty()) {
                        return node_pids(&entry.path());
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the cluster did not come up within {limit:?}");
}

/// Polls `check` every 50 ms until it holds or `limit` passes; returns whether it held.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if check().await {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
