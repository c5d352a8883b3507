//! One real node over HTTP: the data plane answers as docs/node-api.md says, bad input included.

use crate::process::checker;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

/// A node started by hand, killed when dropped.
pub struct Node {
    pub child: Child,
    pub addr: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a node with `settings` (JSON of the `[cluster]` table) and extra flags.
pub fn start_node(settings: &str, extra: &[&str]) -> (Node, tempfile::TempDir) {
    start_node_on("127.0.0.1:0", settings, extra)
}

/// Starts a node listening on `listen` with `settings` and extra flags.
pub fn start_node_on(listen: &str, settings: &str, extra: &[&str]) -> (Node, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("cluster.json");
    std::fs::write(&file, settings).expect("settings");
    let mut command = checker();
    command
        .args(["node", "--id", "n1", "--listen", listen, "--settings"])
        .arg(&file)
        .arg("--data-dir")
        .arg(dir.path().join("n1"))
        .args(extra);
    (spawn_node(command), dir)
}

/// Spawns a `checker node` command and reads the address from its listening line.
pub fn spawn_node(mut command: std::process::Command) -> Node {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start node");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let listening: serde_json::Value = serde_json::from_str(&line).expect("JSON line");
    let addr = listening["addr"].as_str().expect("addr").to_string();
    Node { child, addr }
}

pub fn request(method: &str, url: &str, body: Option<&str>) -> (u16, serde_json::Value) {
    request_with(method, url, body, None)
}

/// Runs `future` to its end on a runtime of its own.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(future)
}

/// `request`, carrying `secret` in the cluster-secret header when given.
fn request_with(
    method: &str,
    url: &str,
    body: Option<&str>,
    secret: Option<&str>,
) -> (u16, serde_json::Value) {
    block_on(async {
        let client = reqwest::Client::new();
        let mut req = client.request(method.parse().expect("method"), url);
        if let Some(secret) = secret {
            req = req.header("x-checker-secret", secret);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let resp = req.send().await.expect("node answers");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        )
    })
}

#[test]
fn a_single_node_counts_reads_and_refuses_bad_input_with_json_errors() {
    let (node, _dir) = start_node("{}", &[]);
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    let (status, body) = request("GET", &url, None);
    assert_eq!(
        (status, body["value"].clone()),
        (200, serde_json::Value::Null)
    );
    for delta in [5, -2] {
        let (status, _) = request(
            "POST",
            &url,
            Some(&format!(r#"{{"delta":{delta},"cl":"ONE"}}"#)),
        );
        assert_eq!(status, 200);
    }
    let (status, body) = request("GET", &format!("{url}?cl=ALL"), None);
    assert_eq!((status, body["value"].as_i64()), (200, Some(3)));

    let (status, body) = request("POST", &url, Some(r#"{"delta":1,"cl":"ANY"}"#));
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_request")));
    assert!(body["message"].as_str().expect("message").contains("ANY"));
    let (status, body) = request("POST", &url, Some(r#"{"delta":"x"}"#));
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_request")));
    let (status, body) = request("GET", &format!("{url}?cl=TWO"), None);
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_request")));
    let (status, body) = request("GET", &format!("http://{}/nowhere", node.addr), None);
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
}

#[test]
fn a_write_that_cannot_reach_its_replicas_times_out_with_504() {
    // Peers that do not exist: the leader (a random replica) is this node, which applies the
    // write and hears no acknowledgement, or a dead peer, which never gets it. Either way
    // 504, and the failure detector then answers 503 for ALL until the peers could be back.
    let (node, _dir) = start_node(
        r#"{"write_timeout_ms": 200}"#,
        &["--peers", "n2=127.0.0.1:9,n3=127.0.0.1:9"],
    );
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    let (status, body) = request("POST", &url, Some(r#"{"delta":1,"cl":"QUORUM"}"#));
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"], "write_timeout");
    let received = body["received"].as_u64();
    assert!(matches!(received, Some(0 | 1)), "{body}");
    assert_eq!(body["block_for"].as_u64(), Some(2));
    let (status, body) = request("POST", &url, Some(r#"{"delta":1,"cl":"ALL"}"#));
    assert_eq!((status, body["error"].as_str()), (503, Some("unavailable")));
    // Led here, the timed-out write was applied: a read at ONE sees it; led elsewhere, not.
    let (status, body) = request("GET", &format!("{url}?cl=ONE"), None);
    let expected = if received == Some(1) { Some(1) } else { None };
    assert_eq!((status, body["value"].as_i64()), (200, expected), "{body}");
}

#[test]
fn bad_input_gets_a_json_4xx_naming_the_problem_and_the_node_keeps_serving() {
    let (node, _dir) = start_node("{}", &[]);
    let url = format!("http://{}/v1/counters/views/home", node.addr);
    let huge = format!(r#"{{"delta":1,"cl":"{}"}}"#, "Q".repeat(70 * 1024));
    let long_key = format!(
        "http://{}/v1/counters/views/{}",
        node.addr,
        "c".repeat(1100)
    );
    let cases: Vec<(&str, String, Option<String>, &str)> = vec![
        ("POST", url.clone(), Some("{}".into()), "delta"),
        (
            "POST",
            url.clone(),
            Some(r#"{"delta":1,"extra":2}"#.into()),
            "extra",
        ),
        (
            "POST",
            url.clone(),
            Some(r#"{"delta":99999999999999999999}"#.into()),
            "delta",
        ),
        (
            "POST",
            url.clone(),
            Some(r#"{"delta":1.5}"#.into()),
            "delta",
        ),
        ("POST", url.clone(), Some("not json".into()), ""),
        ("POST", url.clone(), Some(huge), ""),
        ("POST", long_key, Some(r#"{"delta":1}"#.into()), "1024"),
        ("DELETE", format!("{url}?scope=everything"), None, "scope"),
    ];
    for (method, target, body, names) in cases {
        let (status, answer) = request(method, &target, body.as_deref());
        assert!((400..500).contains(&status), "{method} {status} {answer}");
        assert!(answer["error"].is_string(), "{answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(names), "{message:?} should name {names:?}");
    }
    let (status, _) = request("GET", &url, None);
    assert_eq!(status, 200, "the node still serves");
}

#[test]
fn a_cell_delete_refuses_the_partition_scope_and_a_running_node_keeps_its_mode() {
    let (node, _dir) = start_node(r#"{"rf": 1}"#, &[]);
    let base = format!("http://{}", node.addr);
    let (status, body) = request(
        "DELETE",
        &format!("{base}/v1/counters/views/home?scope=partition"),
        None,
    );
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_request")));
    let (status, _) = request(
        "DELETE",
        &format!("{base}/v1/counters/views/home?scope=column"),
        None,
    );
    assert_eq!(status, 200);
    let (status, config) = request("GET", &format!("{base}/admin/config"), None);
    assert_eq!((status, config["mode"].as_str()), (200, Some("cassandra")));
    let mut ravendb = config.clone();
    ravendb["mode"] = serde_json::json!("ravendb");
    let (status, body) = request(
        "PUT",
        &format!("{base}/admin/config"),
        Some(&ravendb.to_string()),
    );
    assert_eq!(status, 400, "{body}");
    let mut longer = config.clone();
    longer["write_timeout_ms"] = serde_json::json!(750);
    let (status, body) = request(
        "PUT",
        &format!("{base}/admin/config"),
        Some(&longer.to_string()),
    );
    assert_eq!(
        (status, body["write_timeout_ms"].as_u64()),
        (200, Some(750))
    );
}

#[test]
fn without_the_cluster_secret_the_internal_and_admin_planes_answer_401_and_change_nothing() {
    let secret = "0123456789abcdef0123456789abcdef";
    let (node, _dir) = start_node(&format!(r#"{{"secret": "{secret}"}}"#), &[]);
    let base = format!("http://{}", node.addr);
    // A forged shard table, and a pause, from a caller that does not know the secret.
    let forged = r#"{"partitions": {"views": {"rows": {"home": {"counter": {"counter": {"shards": {"n9": {"clock": 1, "count": 1000}}}, "timestamp": 1}}}}}}"#;
    for (method, path, body) in [
        ("POST", "/internal/apply", Some(forged)),
        ("PUT", "/admin/faults", Some(r#"{"paused": true}"#)),
        ("GET", "/admin/config", None),
    ] {
        for wrong in [None, Some("not-the-secret")] {
            let (status, reply) = request_with(method, &format!("{base}{path}"), body, wrong);
            assert_eq!(
                (status, reply["error"].as_str()),
                (401, Some("unauthorized")),
                "{path}"
            );
        }
    }
    let (status, faults) = request_with("GET", &format!("{base}/admin/faults"), None, Some(secret));
    assert_eq!(
        (status, faults["paused"].as_bool()),
        (200, Some(false)),
        "{faults}"
    );
    let (status, body) = request("GET", &format!("{base}/v1/counters/views/home"), None);
    assert_eq!(
        (status, body["value"].clone()),
        (200, serde_json::Value::Null)
    );
    // The same table, from the cluster itself, is applied: the refusal was what kept it out.
    let (status, _) = request_with(
        "POST",
        &format!("{base}/internal/apply"),
        Some(forged),
        Some(secret),
    );
    assert_eq!(status, 200);
    let (_, body) = request(
        "GET",
        &format!("{base}/v1/counters/views/home?cl=ONE"),
        None,
    );
    assert_eq!(body["value"].as_i64(), Some(1000), "{body}");
}

#[test]
fn a_node_listening_on_every_ipv6_address_knows_its_own_loopback_callers() {
    // Bound to [::], a node sees 127.0.0.1 as ::ffff:127.0.0.1: still loopback.
    let (node, _dir) = start_node_on("[::]:0", "{}", &[]);
    let port = node.addr.rsplit(':').next().expect("port");
    let (status, _) = request(
        "GET",
        &format!("http://127.0.0.1:{port}/admin/health"),
        None,
    );
    assert_eq!(status, 200);
    let (status, _) = request("GET", &format!("http://[::1]:{port}/admin/health"), None);
    assert_eq!(status, 200);
}
