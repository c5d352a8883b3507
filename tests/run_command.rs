//! `checker run` on a real 3-node cluster: the run folder, the verdict, and no orphaned nodes
//! after a normal end, Ctrl-C, a panic, or the driver being killed.

use crate::process::{
    checker, node_pids, only_run_folder, only_run_folder_of, run, survivors, wait_for_nodes,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_short_run_leaves_a_complete_run_folder_and_no_node() {
    let results = tempfile::tempdir().expect("temp dir");
    let out = run(&[
        "run",
        "--workload",
        "hot-counter",
        "--time-limit",
        "3",
        "--rate",
        "200",
        "--seed",
        "7",
        "--results",
        results.path().to_str().expect("utf-8"),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = only_run_folder(results.path());
    for file in [
        "history.jsonl",
        "results.json",
        "run.json",
        "nodes/n1.log",
        "nodes/n3.log",
        "plots/latency.png",
        "plots/throughput.png",
        "plots/counter.png",
        "nodes/n1.oracle.json",
    ] {
        assert!(
            dir.join(file).is_file(),
            "{file} missing from {}",
            dir.display()
        );
    }
    let results_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("read"))
            .expect("JSON");
    assert_eq!(results_json["seed"], 7);
    assert_eq!(results_json["workload"], "hot-counter");
    assert!(
        results_json["checkers"]["counter"]["reads"]
            .as_u64()
            .expect("reads")
            > 10
    );
    // The accuracy checkers beyond the counter: resurrections, the final reads after the
    // heal, and the cross-check against the three nodes' own final state.
    let checkers = &results_json["checkers"];
    assert_eq!(
        checkers["resurrection"]["events"], 0,
        "no deletes in hot-counter"
    );
    assert_eq!(
        checkers["convergence"]["keys"], 1,
        "{}",
        checkers["convergence"]
    );
    assert_eq!(checkers["oracle"]["nodes"], 3, "{}", checkers["oracle"]);
    assert_eq!(checkers["oracle"]["unflagged"], 0, "{}", checkers["oracle"]);
    assert!(checkers["stats"]["availability_healthy"]["share_ok"].is_number());
    assert!(stdout.contains("seed 7"), "{stdout}");
    let latest = std::fs::canonicalize(results.path().join("latest")).expect("latest link");
    assert_eq!(latest, std::fs::canonicalize(&dir).expect("run folder"));
    assert_eq!(
        survivors(&node_pids(&dir), Duration::from_secs(2)),
        Vec::<u32>::new()
    );

    // The report page and the index of runs, rebuilt by `checker report`.
    let index = results.path().join("index.html");
    let listed = std::fs::read_to_string(&index).expect("the index of runs");
    let stamp = dir
        .file_name()
        .expect("a stamp")
        .to_string_lossy()
        .into_owned();
    assert!(
        listed.contains(&format!("hot-counter/{stamp}/report.html")),
        "{listed}"
    );
    let page = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(
        page.contains("<svg") && page.contains("seed 7"),
        "charts inline, seed shown"
    );
    std::fs::remove_file(dir.join("report.html")).expect("removed");
    let rebuilt = run(&["report", results.path().to_str().expect("utf-8")]);
    assert_eq!(
        rebuilt.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&rebuilt.stderr)
    );
    assert!(
        dir.join("report.html").is_file(),
        "checker report rebuilt the page"
    );

    // `check` on the folder and on the bare history agrees with the run.
    let expected = out.status.code();
    let on_folder = run(&["check", dir.to_str().expect("utf-8")]);
    let history = dir.join("history.jsonl");
    let on_file = run(&["check", history.to_str().expect("utf-8"), "--json"]);
    assert_eq!(on_folder.status.code(), expected);
    assert_eq!(on_file.status.code(), expected);
    let checked: serde_json::Value =
        serde_json::from_slice(&on_file.stdout).expect("--json prints JSON");
    assert_eq!(checked["valid"], results_json["valid"]);
    assert_eq!(
        checked["checkers"]["counter"]["reads"],
        results_json["checkers"]["counter"]["reads"]
    );
}

#[test]
fn ctrl_c_and_sigterm_stop_the_load_check_what_was_recorded_and_stop_every_node() {
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let results = tempfile::tempdir().expect("temp dir");
        let mut child = checker()
            .args([
                "run",
                "--workload",
                "hot-counter",
                "--time-limit",
                "60",
                "--results",
            ])
            .arg(results.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start run");
        let pids = wait_for_nodes(results.path(), Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(800));
        kill(Pid::from_raw(child.id() as i32), signal).expect("send the signal");
        let status = child.wait().expect("run exits");
        assert!(
            matches!(status.code(), Some(0 | 1)),
            "{signal}: exit {:?}",
            status.code()
        );
        let dir = only_run_folder(results.path());
        let results_json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
        )
        .expect("JSON");
        assert!(
            results_json["ops"].as_u64() > Some(0),
            "{signal}: the history was checked"
        );
        let run_json = std::fs::read_to_string(dir.join("run.json")).expect("run.json");
        assert!(
            run_json.contains("\"interrupted\": true"),
            "{signal}: {run_json}"
        );
        assert_eq!(
            survivors(&pids, Duration::from_secs(2)),
            Vec::<u32>::new(),
            "{signal}"
        );
    }
}

#[test]
fn a_panic_in_the_driver_exits_255_and_stops_every_node() {
    let results = tempfile::tempdir().expect("temp dir");
    let out = checker()
        .args([
            "run",
            "--workload",
            "hot-counter",
            "--panic-after-start",
            "--results",
        ])
        .arg(results.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(255));
    let pids = node_pids(&only_run_folder(results.path()));
    assert_eq!(pids.len(), 3);
    assert_eq!(survivors(&pids, Duration::from_secs(2)), Vec::<u32>::new());
}

#[test]
fn nodes_exit_by_themselves_when_the_driver_is_killed() {
    let results = tempfile::tempdir().expect("temp dir");
    let mut child = checker()
        .args([
            "run",
            "--workload",
            "hot-counter",
            "--time-limit",
            "60",
            "--results",
        ])
        .arg(results.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start run");
    let pids = wait_for_nodes(results.path(), Duration::from_secs(30));
    let dir = only_run_folder(results.path());
    // Killed before any client op completes, the history would be empty, which
    // `check` rightly refuses; wait for one so the check below has work to do.
    let first_op = Instant::now();
    while !has_client_completion(&dir.join("history.jsonl")) {
        assert!(
            first_op.elapsed() < Duration::from_secs(30),
            "no client op completed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL the driver");
    child.wait().expect("reaped");
    assert_eq!(survivors(&pids, Duration::from_secs(3)), Vec::<u32>::new());
    // What the killed run recorded is still readable.
    let checked = run(&["check", dir.join("history.jsonl").to_str().expect("utf-8")]);
    assert!(matches!(checked.status.code(), Some(0..=2)), "{checked:?}");
}

#[test]
fn an_unknown_workload_or_a_bad_flag_exits_254() {
    let results = tempfile::tempdir().expect("temp dir");
    let dir = results.path().to_str().expect("utf-8");
    let out = run(&["run", "--workload", "no-such-workload", "--results", dir]);
    assert_eq!(out.status.code(), Some(254));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-workload"));
    let out = run(&[
        "run",
        "--workload",
        "hot-counter",
        "--nodes",
        "0",
        "--results",
        dir,
    ]);
    assert_eq!(out.status.code(), Some(254));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nodes"));
    let out = run(&["run", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(254));
}

#[test]
fn serve_answers_the_index_and_the_pages_on_loopback() {
    use std::io::{BufRead, Read, Write};
    let results = tempfile::tempdir().expect("temp dir");
    let run = results.path().join("w/20260101T000000");
    std::fs::create_dir_all(&run).expect("run folder");
    std::fs::write(run.join("history.jsonl"), "").expect("history");
    std::fs::write(run.join("report.html"), "<p>the page</p>").expect("page");
    let outside = tempfile::tempdir().expect("a folder outside");
    std::fs::write(outside.path().join("secret.txt"), "not for serving").expect("secret");
    std::os::unix::fs::symlink(outside.path(), results.path().join("escape")).expect("link");
    std::os::unix::fs::symlink(&run, results.path().join("latest")).expect("latest");
    let secret = outside.path().join("secret.txt");
    std::os::unix::fs::symlink(&secret, results.path().join("file-link")).expect("link");
    let other_run = results.path().join("w/20260102T000000");
    std::fs::create_dir_all(&other_run).expect("run folder");
    std::os::unix::fs::symlink(&secret, other_run.join("index.html")).expect("index link");
    let mut child = crate::process::checker()
        .args([
            "serve",
            "--port",
            "0",
            "--dir",
            results.path().to_str().expect("utf-8"),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("checker serve starts");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the address line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("an address")
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    let get = |path: &str| {
        let mut stream = std::net::TcpStream::connect(&addr).expect("connects");
        write!(stream, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    };
    let index = get("/");
    let page = get("/w/20260101T000000/report.html");
    let missing = get("/nothing-here.html");
    let escaped = get("/escape/secret.txt");
    let slashed = get("/file-link/");
    let indexed = get("/w/20260102T000000/");
    let latest = get("/latest/report.html");
    // SIGTERM stops it in order, as Ctrl-C does.
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).expect("send SIGTERM");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait().expect("poll serve") {
            Some(status) => break status,
            None if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                panic!("serve ignored SIGTERM");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    assert_eq!(status.code(), Some(0));
    assert!(
        index.starts_with("HTTP/1.0 200") && index.contains("1 runs"),
        "{index}"
    );
    assert!(page.contains("the page"), "{page}");
    assert!(missing.starts_with("HTTP/1.0 404"), "{missing}");
    assert!(escaped.starts_with("HTTP/1.0 403"), "{escaped}");
    assert!(!escaped.contains("not for serving"), "{escaped}");
    for refused in [&slashed, &indexed] {
        assert!(!refused.contains("not for serving"), "{refused}");
    }
    assert!(
        latest.contains("the page"),
        "a link inside the folder serves: {latest}"
    );
}

#[test]
fn a_soak_runs_workloads_back_to_back_holds_budgets_prunes_and_replays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let soak = dir.path().join("soak");
    // delete-race brings deleted counts back through the counter cache, hot-counter's retries
    // overcount: each budget here allows what its workload shows.
    let budget = dir.path().join("budget.toml");
    let lenient = "[delete-race]\novercount_share = 1.0\nundercount_share = 1.0\n\
                   resurrections = 1000000\nconverge = false\n";
    std::fs::write(&budget, lenient).expect("budget file");
    let args = |budget: &std::path::Path, out: &std::path::Path| {
        vec![
            "soak".to_string(),
            // Two runs of 2.5 s fit with room to spare: a loaded CI machine once took 11.9 s
            // for the first (the cluster's start and the check with it), and 13 s left no
            // room for a second.
            "--duration".into(),
            "20s".into(),
            "--workloads".into(),
            "delete-race,hot-counter".into(),
            "--run-time".into(),
            "2.5".into(),
            "--seed".into(),
            "5".into(),
            "--keep".into(),
            "1".into(),
            "--budget".into(),
            budget.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let out = crate::process::checker()
        .args(args(&budget, &soak))
        .output()
        .expect("soak runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(soak.join("summary.json")).expect("summary"))
            .expect("JSON");
    let runs = summary["runs"].as_array().expect("runs");
    assert!(runs.len() >= 2, "{summary}");
    assert_eq!(runs[0]["workload"], "delete-race");
    assert_eq!(runs[1]["workload"], "hot-counter");
    assert_eq!(runs[0]["seed"], checker::soak::derive_seed(5, 0));
    assert_ne!(runs[0]["seed"], runs[1]["seed"]);
    // --keep 1: every folder but the last is gone, its figures kept.
    let last = runs.len() - 1;
    for (i, run) in runs.iter().enumerate() {
        let folder = std::path::Path::new(run["folder"].as_str().expect("folder"));
        assert_eq!(run["pruned"], i != last, "{run}");
        assert_eq!(folder.exists(), i == last, "{}", folder.display());
        assert!(run["figures"]["reads"].as_u64().is_some());
    }
    let junit = std::fs::read_to_string(soak.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("<testsuites") && junit.contains("classname=\"hot-counter\""),
        "{junit}"
    );
    assert!(junit.contains("failures=\"0\""), "{junit}");
    assert!(soak.join("trend.png").is_file() && soak.join("index.html").is_file());

    // A budget nothing meets fails the soak, and JUnit says how to replay the run.
    let strict = dir.path().join("strict.toml");
    std::fs::write(&strict, "[delete-race]\novercount_share = -1.0\n").expect("budget file");
    let failing = dir.path().join("failing");
    let mut strict_args = args(&strict, &failing);
    strict_args[2] = "4s".into();
    let out = crate::process::checker()
        .args(strict_args)
        .output()
        .expect("soak runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let junit = std::fs::read_to_string(failing.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("<failure type=\"budget\"") && junit.contains("checker replay "),
        "{junit}"
    );

    // replay: the kept run again, with its seed and its whole configuration.
    let kept = runs[last]["folder"].as_str().expect("folder");
    let replays = dir.path().join("replays");
    let out = run(&[
        "replay",
        kept,
        "--results",
        replays.to_str().expect("utf-8"),
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The soak's last run is of either workload, as the time allowed.
    let workload = runs[last]["workload"].as_str().expect("workload");
    let again = only_run_folder_of(&replays, workload);
    let read = |dir: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("run.json"))
            .expect("JSON")
    };
    let (before, after) = (read(std::path::Path::new(kept)), read(&again));
    assert_eq!(before["seed"], after["seed"]);
    assert_eq!(before["workload"], after["workload"]);
}

#[test]
fn sigterm_ends_a_soak_after_checking_the_current_run_exits_130_and_says_so() {
    let soak = tempfile::tempdir().expect("temp dir");
    let mut child = checker()
        .args([
            "soak",
            "--duration",
            "10m",
            "--workloads",
            "hot-counter",
            "--seed",
            "3",
            "--out",
        ])
        .arg(soak.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start soak");
    let pids = wait_for_nodes(soak.path(), Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(800));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).expect("send SIGTERM");
    let status = child.wait().expect("soak exits");
    assert_eq!(status.code(), Some(130));
    let junit = std::fs::read_to_string(soak.path().join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("stopped by a signal after 1 runs"),
        "{junit}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(soak.path().join("summary.json")).expect("summary"),
    )
    .expect("JSON");
    assert_eq!(summary["interrupted"], true, "{summary}");
    assert_eq!(
        summary["runs"].as_array().map(Vec::len),
        Some(1),
        "{summary}"
    );
    assert!(summary["finished"].is_string());
    assert_eq!(survivors(&pids, Duration::from_secs(2)), Vec::<u32>::new());
}

#[test]
fn tombstone_queue_fails_scans_at_its_default_length_and_still_gets_a_verdict() {
    let results = tempfile::tempdir().expect("temp dir");
    let out = run(&[
        "run",
        "--workload",
        "tombstone-queue",
        "--seed",
        "11",
        "--results",
        results.path().to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let runs = results.path().join("tombstone-queue/latest/results.json");
    let results_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs).expect("results.json")).expect("JSON");
    let tombstones = &results_json["checkers"]["tombstones"];
    assert!(
        tombstones["failed_reads"].as_u64().expect("failed reads") > 0,
        "scans failed for tombstones: {tombstones}"
    );
    let convergence = &results_json["checkers"]["convergence"];
    assert_eq!(convergence["valid"], true, "{convergence}");
    assert_eq!(convergence["unanswered"], 0, "{convergence}");
    assert!(convergence["from_dumps"].as_u64().expect("from dumps") > 0);
}

/// Whether the history at `path` holds a client op's completion (`ok`, `fail` or `info`).
fn has_client_completion(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().any(|line| {
        let op: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        op["process"].is_u64() && op["type"].as_str().is_some_and(|t| t != "invoke")
    })
}
