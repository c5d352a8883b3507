//! The disk fills up: a node acknowledges no write it could not log (in `batch` mode, where
//! each write goes to the file, and in `periodic` mode, where the room for the writes of a
//! mark interval is reserved ahead), and a run whose history cannot be appended stops with an error that says the disk is full,
//! keeping what it wrote. Each test mounts a small tmpfs, which needs root: CI runs as root
//! and fails if it cannot; elsewhere the tests say they were skipped.

use crate::node_api::{request, spawn_node};
use crate::process::{checker, node_pids, only_run_folder, survivors};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A tmpfs of a given size, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts one, or says why not (and fails under CI, which runs as root).
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("temp dir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(Tmpfs { dir }),
            other => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI runs as root and must be able to mount a tmpfs: {other:?}"
                );
                eprintln!("skipped: mounting a tmpfs needs root ({other:?})");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the file system of `dir` to the last byte; returns the filler, to remove later.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).expect("filler");
    let block = vec![0u8; 4096];
    while file.write_all(&block).is_ok() {}
    while file.write_all(&block[..1]).is_ok() {}
    path
}

/// A node of its own on `disk`, its commit log in mode `sync` (`batch`, `periodic:<ms>`).
fn start_node_on(disk: &Tmpfs, sync: &str) -> crate::node_api::Node {
    let settings = disk.path().join("cluster.json");
    let text = format!(r#"{{"rf": 1, "commitlog_sync": "{sync}"}}"#);
    std::fs::write(&settings, text).expect("settings");
    let mut command = checker();
    command
        .args(["node", "--id", "n1", "--settings"])
        .arg(&settings)
        .arg("--data-dir")
        .arg(disk.path().join("n1"));
    spawn_node(command)
}

/// Adds 1 at `url` until a write is refused (at most `limit` tries): the writes
/// acknowledged, and the refusal's status and answer.
fn add_until_refused(url: &str, limit: usize) -> (i64, u16, serde_json::Value) {
    let mut acknowledged = 0;
    for _ in 0..limit {
        match request("POST", url, Some(r#"{"delta":1}"#)) {
            (200, _) => acknowledged += 1,
            (status, answer) => return (acknowledged, status, answer),
        }
    }
    panic!("no write was refused in {limit} tries once the disk was full");
}

#[test]
fn on_a_full_disk_a_batch_mode_node_acknowledges_no_increment_it_could_not_log() {
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    let node = start_node_on(&disk, "batch");
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    assert_eq!(request("POST", &url, Some(r#"{"delta":1}"#)).0, 200);

    let filler = fill(disk.path());
    // Writes that fit in the log's last page still land; the first that needs a new page
    // is refused, and none is acknowledged that the log did not take.
    let (more, status, answer) = add_until_refused(&url, 500);
    let acknowledged = 1 + more;
    assert_eq!(status, 500, "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("No space left on device"), "{message}");
    let (_, read) = request("GET", &url, None);
    assert_eq!(
        read["value"].as_i64(),
        Some(acknowledged),
        "the refused write is not applied"
    );

    // With room again the log stays stopped until a restart (commit_failure_policy: stop).
    std::fs::remove_file(filler).expect("free the disk");
    let (status, answer) = request("POST", &url, Some(r#"{"delta":7}"#));
    assert_eq!(status, 500, "{answer}");
    assert!(answer["message"]
        .to_string()
        .contains("commit_failure_policy"));
    let read = request("GET", &url, None).1;
    assert_eq!(read["value"].as_i64(), Some(acknowledged));
}

#[test]
fn on_a_full_disk_a_periodic_mode_node_refuses_the_write_that_meets_it_and_loses_no_other() {
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    let node = start_node_on(&disk, "periodic:10000");
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    assert_eq!(request("POST", &url, Some(r#"{"delta":1}"#)).0, 200);

    let filler = fill(disk.path());
    // Periodic mode writes the log at each mark, into room reserved ahead: the write that
    // finds no room left to reserve is refused, before it is acknowledged.
    let (more, status, answer) = add_until_refused(&url, 5000);
    let acknowledged = 1 + more;
    assert_eq!(status, 500, "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("No space left on device"), "{message}");
    assert!(
        more > 0,
        "the room reserved before the disk filled was used"
    );

    // Marks go on over the acknowledged writes; after a kill every one of them replays.
    std::thread::sleep(Duration::from_millis(500));
    drop(node);
    std::fs::remove_file(filler).expect("free the disk");
    let node = start_node_on(&disk, "periodic:10000");
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    let read = request("GET", &url, None).1;
    assert_eq!(read["value"].as_i64(), Some(acknowledged), "{read}");
}

#[test]
fn a_run_whose_history_cannot_be_appended_stops_with_an_error_that_says_the_disk_is_full() {
    let Some(disk) = Tmpfs::mount("3m") else {
        return;
    };
    let results = disk.path().join("results");
    let out = checker()
        .args(["run", "--workload", "hot-counter", "--time-limit", "60"])
        .args(["--rate", "2000", "--seed", "3", "--results"])
        .arg(&results)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("history.jsonl"), "{stderr}");
    let run_dir = only_run_folder(&results);
    let history = std::fs::read(run_dir.join("history.jsonl")).expect("history kept");
    assert!(history.len() > 100_000, "{} bytes kept", history.len());
    assert_eq!(
        history.last(),
        Some(&b'\n'),
        "the history ends with a whole line"
    );
    let pids = node_pids(&run_dir);
    assert!(survivors(&pids, Duration::from_secs(5)).is_empty());
}
