//! One real node against clients that misbehave: every error answer is JSON, sizes have
//! limits, idle and slow connections are dropped, a shutdown is bounded, a partial settings
//! change keeps the rest, and a node started by hand cleans up after itself.

use crate::node_api::{block_on, request, spawn_node, start_node, Node};
use crate::process::checker;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long a node lets a connection sit without a complete request head (the bundled
/// clients keep idle connections 4 s, a node 8 s).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(8);

#[test]
fn every_error_answer_is_json_with_its_own_status() {
    let (node, _dir) = start_node("{}", &[]);
    let base = format!("http://{}", node.addr);
    let url = format!("{base}/v1/counters/views/home");
    let huge_body = format!(r#"{{"delta":1,"pad":"{}"}}"#, "x".repeat(70 * 1024));
    let long_query = format!("{url}?cl={}", "Q".repeat(10 * 1024));
    let long_key = format!("{base}/v1/counters/views/{}", "k".repeat(1100));
    let cases: Vec<(&str, String, Option<String>, u16, &str)> = vec![
        ("GET", format!("{base}/nowhere"), None, 404, "not_found"),
        (
            "PUT",
            url.clone(),
            Some("{}".into()),
            405,
            "method_not_allowed",
        ),
        (
            "PATCH",
            format!("{base}/admin/config"),
            None,
            405,
            "method_not_allowed",
        ),
        (
            "POST",
            url.clone(),
            Some(huge_body),
            413,
            "payload_too_large",
        ),
        ("GET", long_query, None, 414, "uri_too_long"),
        ("GET", long_key.clone(), None, 400, "bad_request"),
        (
            "GET",
            format!("{base}/v1/counters/%FF%FE/c"),
            None,
            400,
            "bad_request",
        ),
    ];
    for (method, target, body, status, code) in cases {
        let (got, answer) = request(method, &target, body.as_deref());
        let shown: String = target.chars().take(60).collect();
        assert_eq!(got, status, "{method} {shown}: {answer}");
        assert_eq!(answer["error"].as_str(), Some(code), "{answer}");
        if status == 405 {
            assert!(
                allow(method, &target).is_some(),
                "a 405 keeps its Allow header"
            );
        }
        assert!(answer["message"].is_string(), "{answer}");
    }
    // The key is named, but not echoed whole.
    let (_, answer) = request("POST", &long_key, Some(r#"{"delta":1}"#));
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1024") && message.contains("1106 bytes"),
        "{message}"
    );
    assert!(message.len() < 300, "{} bytes", message.len());
    let (status, _) = request("GET", &url, None);
    assert_eq!(status, 200, "the node still serves");
}

#[test]
fn a_partial_settings_change_keeps_every_field_it_does_not_name() {
    let (node, _dir) = start_node(r#"{"rf": 1, "tombstone_warn_threshold": 7}"#, &[]);
    let config = format!("http://{}/admin/config", node.addr);
    let (status, answer) = request("PUT", &config, Some(r#"{"gc_grace_s": 5}"#));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["gc_grace_s"].as_f64(), Some(5.0));
    assert_eq!(answer["rf"].as_u64(), Some(1), "{answer}");
    assert_eq!(answer["tombstone_warn_threshold"].as_u64(), Some(7));
    for bad in [r#"{"nope": 1}"#, "[1]", r#"{"rf": 0}"#, r#"{"rf": "x"}"#] {
        let (status, answer) = request("PUT", &config, Some(bad));
        assert_eq!(status, 400, "{bad}: {answer}");
    }
    let (_, now) = request("GET", &config, None);
    assert_eq!(
        (now["rf"].as_u64(), now["gc_grace_s"].as_f64()),
        (Some(1), Some(5.0))
    );
}

#[test]
fn idle_and_slow_connections_are_dropped_and_the_node_keeps_serving() {
    let (node, _dir) = start_node("{}", &[]);
    // 100 connections that send nothing, and 20 that send half a request head.
    let mut idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(&node.addr).expect("connect"))
        .collect();
    let mut slow: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(&node.addr).expect("connect");
            s.write_all(b"GET /v1/counters/a/b HTTP/1.1\r\nHost: x\r\n")
                .expect("half a head");
            s
        })
        .collect();
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    assert_eq!(request("GET", &url, None).0, 200, "served while they wait");
    std::thread::sleep(HEADER_READ_TIMEOUT + Duration::from_secs(2));
    for stream in idle.iter_mut().chain(slow.iter_mut()) {
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let mut buf = [0u8; 512];
        // Closed: end of file, or a reset; never a read that times out.
        match stream.read(&mut buf) {
            Ok(n) => assert!(n == 0 || buf.starts_with(b"HTTP/1.1 408"), "{n} bytes"),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "still open: {e}"
            ),
        }
    }
    assert_eq!(request("GET", &url, None).0, 200, "still serving");
}

/// Sends SIGTERM and waits for the node to exit; returns how long that took.
pub fn terminate(node: &mut Node) -> Duration {
    let pid = nix::unistd::Pid::from_raw(node.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if node.child.try_wait().expect("wait").is_some() {
            return start.elapsed();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the node did not stop within 20 s of SIGTERM");
}

#[test]
fn a_node_started_by_hand_removes_its_temporary_folder_when_it_stops() {
    let id = format!("scratch{}", std::process::id());
    let mut command = checker();
    command.args(["node", "--id", &id]);
    let mut node = spawn_node(command);
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    assert_eq!(request("POST", &url, Some(r#"{"delta":1}"#)).0, 200);
    let folder = std::env::temp_dir().join(format!("checker-node-{id}-{}", node.child.id()));
    assert!(folder.join("commitlog.jsonl").exists(), "{folder:?}");
    terminate(&mut node);
    assert!(!folder.exists(), "{folder:?} is left behind");
}

#[test]
fn a_node_stopped_by_sigterm_keeps_every_write_it_acknowledged_in_periodic_mode() {
    // Marked every 100 ms, synced every 10 s: a kill loses the writes since the last mark
    // (`periodic` mode's contract); a SIGTERM drains the log first, as Cassandra's does.
    let settings = r#"{"rf": 1, "commitlog_sync": "periodic:10000"}"#;
    let (mut node, dir) = start_node(settings, &[]);
    let url = |node: &Node| format!("http://{}/v1/counters/views/home", node.addr);
    let mut acknowledged = 0;
    for _ in 0..50 {
        if request("POST", &url(&node), Some(r#"{"delta":1}"#)).0 == 200 {
            acknowledged += 1;
        }
    }
    assert!(acknowledged > 0);
    // At once: the last writes are within the mark interval.
    terminate(&mut node);
    let mut command = checker();
    command
        .args(["node", "--id", "n1", "--settings"])
        .arg(dir.path().join("cluster.json"))
        .arg("--data-dir")
        .arg(dir.path().join("n1"));
    let again = spawn_node(command);
    let (status, read) = request("GET", &format!("{}?cl=ONE", url(&again)), None);
    assert_eq!((status, read["value"].as_i64()), (200, Some(acknowledged)));
}

#[test]
fn a_shutdown_waits_for_requests_in_flight_only_so_long() {
    let (mut node, _dir) = start_node("{}", &[]);
    let faults = format!("http://{}/admin/faults", node.addr);
    assert_eq!(request("PUT", &faults, Some(r#"{"paused": true}"#)).0, 200);
    // A request the paused node holds for as long as it stays paused: its head is sent
    // whole, and given a second to be read, so the node has a request in flight.
    let mut held = TcpStream::connect(&node.addr).expect("connect");
    held.write_all(b"GET /v1/counters/views/home HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("a request");
    std::thread::sleep(Duration::from_secs(1));
    let took = terminate(&mut node);
    // Five seconds of grace, and a little for the process to go.
    assert!(took < Duration::from_secs(8), "stopped after {took:?}");
    assert!(
        took >= Duration::from_secs(4),
        "did not wait at all: {took:?}"
    );
}

/// The `Allow` header of a `method` request to `target`.
fn allow(method: &str, target: &str) -> Option<String> {
    block_on(async {
        let client = reqwest::Client::new();
        let response = (client.request(method.parse().expect("method"), target))
            .send()
            .await
            .expect("node answers");
        let allow = response.headers().get("allow")?;
        allow.to_str().ok().map(str::to_string)
    })
}

#[test]
fn a_body_sent_too_slowly_gets_408() {
    // Timeouts of 100 ms: a handler may take 2 × 100 ms + 1 s.
    let (node, _dir) = start_node(r#"{"write_timeout_ms": 100, "read_timeout_ms": 100}"#, &[]);
    let mut stream = TcpStream::connect(&node.addr).expect("connect");
    stream
        .write_all(
            b"POST /v1/counters/views/home HTTP/1.1\r\nHost: x\r\n\
              content-type: application/json\r\ncontent-length: 40\r\n\r\n{\"delta\"",
        )
        .expect("a head and part of a body");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    let started = Instant::now();
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        answer.extend_from_slice(&buf[..n]);
        if answer.ends_with(b"}") {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#""error":"request_timeout""#), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    assert_eq!(
        request("GET", &url, None).1["value"],
        serde_json::Value::Null
    );
}
