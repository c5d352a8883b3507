//! `--system etcd` and `--system redis`: real clusters started from Debian's packages, the
//! checkers' verdicts on them, and no process left behind. The tests that need the
//! programs skip with a note where they are not installed, except under CI (`CI` set),
//! whose `.ci/run` installs them.

use crate::process::{checker, only_run_folder_of, run};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Whether every program is on PATH; a missing one fails under CI and skips elsewhere.
pub fn installed(programs: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI must install {missing:?} (.ci/run installs etcd-server, redis-server and redis-sentinel)");
    }
    eprintln!("skipped: {missing:?} not installed (apt-get install etcd-server redis-server redis-sentinel)");
    false
}

/// The live processes whose command line names `dir` (a member's data folder or config).
fn processes_in(dir: &Path) -> Vec<u32> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        let zombie = status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(&needle) {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for every process of `dir` to be gone; returns those still alive.
fn left_behind(dir: &Path, limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let alive = processes_in(dir);
        if alive.is_empty() || start.elapsed() > limit {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("JSON")
}

/// Waits until run.json of the only run of `workload` lists its members; the run folder.
fn wait_for_members(results: &Path, workload: &str, limit: Duration) -> PathBuf {
    let start = Instant::now();
    while start.elapsed() < limit {
        let runs = std::fs::read_dir(results.join(workload))
            .into_iter()
            .flatten();
        for entry in runs.flatten() {
            let text = std::fs::read_to_string(entry.path().join("run.json")).unwrap_or_default();
            let run: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if run["system"]["name"].is_string() {
                return entry.path();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the system did not come up within {limit:?}");
}

#[test]
fn a_missing_program_stops_the_run_before_anything_starts_naming_the_package() {
    let results = tempfile::tempdir().expect("temp dir");
    let empty = tempfile::tempdir().expect("an empty PATH");
    for (system, package) in [("etcd", "etcd-server"), ("redis", "redis-server")] {
        let out = checker()
            .args(["run", "--workload", "etcd-counter", "--system", system])
            .args(["--time-limit", "2", "--results"])
            .arg(results.path())
            .env("PATH", empty.path())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(254), "{system}: {stderr}");
        assert!(stderr.contains(package), "{system}: {stderr}");
    }
    let made: Vec<_> = std::fs::read_dir(results.path())
        .expect("results")
        .collect();
    assert!(made.is_empty(), "no run folder before the check: {made:?}");
}

#[test]
fn faults_a_real_system_cannot_have_are_refused_by_name_not_dropped() {
    let results = tempfile::tempdir().expect("temp dir");
    let dir = results.path().to_str().expect("utf-8");
    // hot-counter plays slow links and partitions: on loopback, etcd has neither.
    let out = run(&[
        "run",
        "--workload",
        "hot-counter",
        "--system",
        "etcd",
        "--results",
        dir,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(
        stderr.contains("nemesis.faults") && stderr.contains("--net netns"),
        "{stderr}"
    );
    // The bundled nodes' own calls, on any network.
    let out = run(&[
        "run",
        "--workload",
        "zombie",
        "--system",
        "redis",
        "--results",
        dir,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(stderr.contains("redis"), "{stderr}");
    // A simulation runs the bundled nodes alone.
    let out = run(&[
        "run",
        "--workload",
        "etcd-counter",
        "--sim",
        "--results",
        dir,
    ]);
    assert_eq!(out.status.code(), Some(254), "{out:?}");
}

#[test]
fn etcd_with_members_killed_and_paused_is_valid_and_linearizable_and_leaves_no_process() {
    if !installed(&["etcd"]) {
        return;
    }
    let results = tempfile::tempdir().expect("temp dir");
    let out = checker()
        .args(["run", "--workload", "etcd-counter", "--seed", "1"])
        .args(["--time-limit", "16", "--results"])
        .arg(results.path())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = only_run_folder_of(results.path(), "etcd-counter");
    let results_json = json(&dir.join("results.json"));
    let checkers = &results_json["checkers"];
    assert_eq!(checkers["linearizable"]["valid"], true);
    assert_eq!(checkers["counter"]["undercount"]["reads"], 0);
    assert!(
        checkers["counter"]["reads"].as_u64() > Some(50),
        "{checkers}"
    );
    assert_eq!(checkers["convergence"]["valid"], true);
    let na = &results_json["not_applicable"];
    assert!(
        na["tombstones"]
            .as_str()
            .is_some_and(|s| s.contains("etcd")),
        "{na}"
    );
    assert!(
        stdout.contains("tombstones: not applicable to etcd"),
        "{stdout}"
    );
    let run_json = json(&dir.join("run.json"));
    assert_eq!(run_json["system"]["name"], "etcd");
    assert!(run_json["system"]["version"]
        .as_str()
        .is_some_and(|v| v.contains("3.")));
    // The nemesis killed or paused members, and the history says which.
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    assert!(history.contains("\"f\":\"start-kill\"") || history.contains("\"f\":\"start-pause\""));
    assert_eq!(left_behind(&dir, Duration::from_secs(3)), Vec::<u32>::new());
}

#[test]
fn redis_failover_loses_acknowledged_increments_and_the_history_shows_the_failover() {
    if !installed(&["redis-server", "redis-sentinel"]) {
        return;
    }
    let results = tempfile::tempdir().expect("temp dir");
    let out = checker()
        .args(["run", "--workload", "redis-failover", "--results"])
        .arg(results.path())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = only_run_folder_of(results.path(), "redis-failover");
    let checkers = json(&dir.join("results.json"))["checkers"].clone();
    let under = &checkers["counter"]["undercount"];
    assert!(under["reads"].as_u64() > Some(0), "{checkers}");
    assert!(
        under["max"].as_i64() > Some(100),
        "lost increments: {under}"
    );
    assert_eq!(checkers["counter"]["overcount"]["reads"], 0);
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    assert!(
        history.contains("\"f\":\"failover\""),
        "no failover recorded"
    );
    assert_eq!(json(&dir.join("run.json"))["system"]["name"], "redis");
    assert_eq!(left_behind(&dir, Duration::from_secs(3)), Vec::<u32>::new());
}

#[test]
fn sigterm_or_a_killed_driver_leaves_no_member_of_a_real_system_running() {
    if !installed(&["etcd"]) {
        return;
    }
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        let results = tempfile::tempdir().expect("temp dir");
        let mut child = checker()
            .args(["run", "--workload", "etcd-counter", "--time-limit", "60"])
            .arg("--results")
            .arg(results.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start run");
        let dir = wait_for_members(results.path(), "etcd-counter", Duration::from_secs(40));
        assert_eq!(processes_in(&dir).len(), 3, "{signal}: three members run");
        std::thread::sleep(Duration::from_millis(500));
        kill(Pid::from_raw(child.id() as i32), signal).expect("signal the driver");
        child.wait().expect("the driver exits");
        assert_eq!(
            left_behind(&dir, Duration::from_secs(5)),
            Vec::<u32>::new(),
            "{signal}"
        );
    }
}

#[test]
fn in_namespaces_a_partitioned_etcd_member_serves_stale_serializable_reads_and_only_those() {
    if !crate::netns::netns_available() {
        eprintln!("skipped: --net netns needs root and network namespaces");
        return;
    }
    if !installed(&["etcd"]) {
        return;
    }
    let results = tempfile::tempdir().expect("temp dir");
    let base = include_str!("../workloads/etcd-counter.toml").replace(
        "faults = [\"kill\", \"pause\"]",
        "faults = [\"partition-one\"]",
    );
    let mut verdicts = Vec::new();
    for (name, serializable) in [("etcd-linearizable", false), ("etcd-serializable", true)] {
        let file = results.path().join(format!("{name}.toml"));
        let text = format!("{base}\n[etcd]\nserializable_reads = {serializable}\n");
        std::fs::write(&file, text).expect("workload file");
        let out = checker()
            .args(["run", "--workload"])
            .arg(&file)
            .args([
                "--net",
                "netns",
                "--seed",
                "4",
                "--time-limit",
                "16",
                "--results",
            ])
            .arg(results.path())
            .output()
            .expect("run");
        let dir = only_run_folder_of(results.path(), name);
        let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
        assert!(
            history.contains("\"f\":\"start-partition\""),
            "{name}: no partition"
        );
        let checkers = json(&dir.join("results.json"))["checkers"].clone();
        verdicts.push((
            out.status.code(),
            checkers["counter"]["undercount"]["reads"].clone(),
        ));
        assert_eq!(left_behind(&dir, Duration::from_secs(3)), Vec::<u32>::new());
    }
    // Linearizable reads (etcd's default) are right under the same partitions; reads the
    // isolated member serves from its own state fall behind, and the checker says so.
    assert_eq!(verdicts[0], (Some(0), serde_json::json!(0)), "{verdicts:?}");
    assert_eq!(verdicts[1].0, Some(1), "{verdicts:?}");
    assert!(verdicts[1].1.as_u64() > Some(0), "{verdicts:?}");
}
