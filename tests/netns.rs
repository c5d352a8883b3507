//! `--net netns`: each node in a network namespace of the run's own, partitions as nftables
//! rules. The same workload and seed on loopback (the nodes' own fault plane) and in
//! namespaces both record the partitions and both see timeouts and retries from them; the
//! namespaced run leaves no namespace, link or node behind, also after its driver is killed.
//! Not as root, `--net netns` is refused before anything starts.

use crate::process::{checker, is_live_node, node_pids, only_run_folder, run};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Root, with the right to make a namespace (a container's root may lack it): the same
/// probe the run makes, by a name no run takes for its own.
pub fn netns_available() -> bool {
    let ip = |args: &[&str]| {
        std::process::Command::new("ip")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("ckprobe-test{}-{n}", std::process::id());
    let made = nix::unistd::geteuid().is_root() && ip(&["netns", "add", &probe]);
    made && ip(&["netns", "del", &probe])
}

/// Runs hot-counter in `mode` into `results`, with `more` flags.
fn hot_counter(mode: &str, results: &Path, more: &[&str]) -> std::process::Output {
    let results = results.to_str().expect("utf-8");
    let mut args = vec!["run", "--workload", "hot-counter", "--net", mode];
    args.extend(more);
    args.extend(["--results", results]);
    run(&args)
}

/// Runs hot-counter with seed 5 for 10 s in `mode`; its exit must be a verdict.
fn run_mode(mode: &str, results: &Path) -> std::path::PathBuf {
    let out = hot_counter(mode, results, &["--seed", "5", "--time-limit", "10"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{mode}: {out:?}");
    only_run_folder(results)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable");
    serde_json::from_str(&text).expect("json")
}

/// The names of the network namespaces, and of the host's links.
fn names() -> Vec<String> {
    let mut all = Vec::new();
    for args in [&["netns", "list"][..], &["-o", "link", "show"][..]] {
        let out = std::process::Command::new("ip")
            .args(args)
            .output()
            .expect("ip runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        all.extend(text.lines().filter_map(|l| {
            let name = match args[0] {
                "netns" => l.split_whitespace().next(),
                _ => l.split(": ").nth(1),
            };
            name.map(|n| n.split('@').next().unwrap_or(n).to_string())
        }));
    }
    all
}

fn left_behind(tag: &str) -> Vec<String> {
    names().into_iter().filter(|n| n.starts_with(tag)).collect()
}

#[test]
fn both_modes_play_the_partitions_and_netns_leaves_nothing_behind() {
    let results = tempfile::tempdir().expect("temp dir");
    if !netns_available() {
        let out = hot_counter("netns", results.path(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(254), "{stderr}");
        assert!(stderr.contains("needs root"), "{stderr}");
        let made = std::fs::read_dir(results.path()).expect("dir").count();
        assert_eq!(made, 0, "refused, yet it made a run folder");
        return;
    }
    refused_to_nobody();
    for mode in ["loopback", "netns"] {
        let results = tempfile::tempdir().expect("temp dir");
        let dir = run_mode(mode, results.path());
        let stats = &read_json(&dir.join("results.json"))["checkers"]["stats"];
        let partitions: Vec<&Value> = stats["faults"]
            .as_array()
            .expect("faults")
            .iter()
            .filter(|f| f["fault"] == "partition")
            .collect();
        assert!(!partitions.is_empty(), "{mode}: no partition recorded");
        let unknown_in_partitions: u64 = partitions
            .iter()
            .map(|f| f["clients"]["info"].as_u64().unwrap_or(0))
            .sum();
        assert!(
            unknown_in_partitions > 0,
            "{mode}: no timeout during a partition"
        );
        assert!(stats["retries"].as_u64() > Some(0), "{mode}: no retry");
        let record = read_json(&dir.join("run.json"));
        let report = std::fs::read_to_string(dir.join("report.html")).expect("report");
        assert!(report.contains(&format!("{mode}: ")), "{mode}: report");
        if mode == "loopback" {
            assert!(record["network"].is_null());
            continue;
        }
        let tag = record["network"]["tag"].as_str().expect("a tag");
        let n1 = &record["network"]["nodes"]["n1"];
        let addr = n1["addr"].as_str().expect("an address");
        assert!(addr.starts_with("10.77."), "{addr}");
        assert!(record["nodes"][0]["addr"]
            .as_str()
            .is_some_and(|a| a.starts_with(addr)));
        assert!(
            report.contains("nftables"),
            "the report says who played the faults"
        );
        assert_eq!(left_behind(tag), Vec::<String>::new(), "left behind");
        assert!(node_pids(&dir).iter().all(|&p| !is_live_node(p)));
    }
}

/// As root, the same binary run as `nobody` (where `setpriv` can, and `nobody` may run it)
/// is refused before anything starts.
fn refused_to_nobody() {
    let as_nobody = || {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"]);
        c.arg(env!("CARGO_BIN_EXE_checker"));
        c
    };
    let runs = as_nobody().arg("--version").output();
    if !runs.is_ok_and(|o| o.status.success()) {
        return;
    }
    // The checkout may sit where `nobody` cannot read: the workload goes where it can.
    let results = tempfile::tempdir().expect("temp dir");
    let readable = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(results.path(), readable).expect("chmod");
    let workload = results.path().join("hot-counter.toml");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/hot-counter.toml");
    std::fs::copy(source, &workload).expect("copied");
    let out = as_nobody()
        .args(["run", "--net", "netns", "--workload"])
        .arg(&workload)
        .arg("--results")
        .arg(results.path().join("runs"))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(stderr.contains("needs root"), "{stderr}");
    assert!(
        !results.path().join("runs").exists(),
        "refused, yet it made a folder"
    );
}

#[test]
fn a_killed_drivers_network_is_removed_by_the_next_run() {
    if !netns_available() {
        return;
    }
    let results = tempfile::tempdir().expect("temp dir");
    let mut driver = checker()
        .args(["run", "--workload", "hot-counter", "--net", "netns"])
        .args(["--time-limit", "30", "--results"])
        .arg(results.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    // Wait until the nodes are up (run.json lists them), then kill the driver.
    let deadline = Instant::now() + Duration::from_secs(30);
    let tag = loop {
        assert!(Instant::now() < deadline, "the nodes never came up");
        std::thread::sleep(Duration::from_millis(200));
        let Some(dir) = std::fs::read_dir(results.path().join("hot-counter"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
        else {
            continue;
        };
        let record = std::fs::read_to_string(dir.path().join("run.json")).unwrap_or_default();
        let record: Value = serde_json::from_str(&record).unwrap_or(Value::Null);
        if record["nodes"].as_array().is_some_and(|n| !n.is_empty()) {
            break record["network"]["tag"]
                .as_str()
                .expect("a tag")
                .to_string();
        }
    };
    driver.kill().expect("killed");
    driver.wait().expect("reaped");
    assert!(
        !left_behind(&tag).is_empty(),
        "a killed driver cleans nothing"
    );
    let next = tempfile::tempdir().expect("temp dir");
    let out = hot_counter("netns", next.path(), &["--time-limit", "2"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    assert_eq!(left_behind(&tag), Vec::<String>::new());
}
