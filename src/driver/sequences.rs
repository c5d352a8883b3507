//! Each client's op sequence as a history records it, and whether two runs of one seed drew
//! the same: what `checker replay` reports. A client's ops come from its own source seeded
//! from (seed, client), so they repeat; where the time limit cuts them does not.

use checkers::history::{HistoryError, JsonlReader};
use checkers::{Op, OpType, Process, F};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// One op a client drew: what, on which key, with which value (an add's delta).
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    f: F,
    key: Option<String>,
    value: Value,
}

/// Each client's drawn ops in order, from the invokes of `history`, or `None` when its
/// processes are not numbered per client (a run by an older checker): client `c` made every
/// op of a process `p` with `p mod concurrency = c`, a process `p` from `concurrency` on
/// taking over after `p - concurrency` ended an op in `info`. Retries are left out: whether
/// an op is retried depends on timing, not on the seed. With `time_keyed` (time buckets),
/// a key's bucket (`-bN`) is left out too: it is the time the op was drawn at.
pub fn per_client(
    history: &Path,
    concurrency: usize,
    time_keyed: bool,
) -> Result<Option<Vec<Vec<Drawn>>>, HistoryError> {
    let n = concurrency.max(1) as u64;
    let mut clients = vec![Vec::new(); n as usize];
    let (mut seen, mut retired) = (HashSet::new(), HashSet::new());
    for op in JsonlReader::open(history)? {
        let op: Op = op?;
        let Process::Client(p) = op.process else {
            continue;
        };
        if !op.process.is_load() {
            continue;
        }
        if op.kind == OpType::Info {
            retired.insert(p);
        }
        if seen.insert(p) && p >= n && !retired.contains(&(p - n)) {
            return Ok(None);
        }
        if op.kind != OpType::Invoke || op.retry_of.is_some() {
            continue;
        }
        let key = match time_keyed {
            true => op.key.as_deref().map(without_bucket),
            false => op.key,
        };
        clients[(p % n) as usize].push(Drawn {
            f: op.f,
            key,
            value: op.value,
        });
    }
    Ok(Some(clients))
}

/// A time-bucket key without its bucket: `views/home-b12` as `views/home`.
fn without_bucket(key: &str) -> String {
    match key.rsplit_once("-b") {
        Some((cell, bucket)) if bucket.bytes().all(|b| b.is_ascii_digit()) => cell.to_string(),
        _ => key.to_string(),
    }
}

/// How two runs' per-client sequences compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreement {
    /// Clients compared.
    pub clients: usize,
    /// Clients whose shorter sequence is a prefix of the longer.
    pub matching: usize,
    /// The first client that differs, and the place of its first differing op.
    pub first_difference: Option<(usize, usize)>,
    /// Ops compared over all clients (the shorter sequence of each).
    pub compared: usize,
}

impl Agreement {
    /// Whether every client drew the same ops in both runs, as far as both went.
    pub fn all_match(&self) -> bool {
        self.matching == self.clients
    }
}

/// Compares two runs' per-client sequences: a client matches when the run that stopped
/// sooner drew a prefix of what the other drew.
pub fn compare(a: &[Vec<Drawn>], b: &[Vec<Drawn>]) -> Agreement {
    let mut agreement = Agreement {
        clients: a.len().max(b.len()),
        matching: 0,
        first_difference: None,
        compared: 0,
    };
    let empty = Vec::new();
    for c in 0..agreement.clients {
        let (x, y) = (a.get(c).unwrap_or(&empty), b.get(c).unwrap_or(&empty));
        let n = x.len().min(y.len());
        agreement.compared += n;
        match (0..n).find(|&i| x[i] != y[i]) {
            None => agreement.matching += 1,
            Some(i) => {
                agreement.first_difference.get_or_insert((c, i));
            }
        }
    }
    agreement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(delta: i64) -> Drawn {
        Drawn {
            f: F::Add,
            key: Some("k/a".to_string()),
            value: Value::from(delta),
        }
    }

    #[test]
    fn a_run_cut_sooner_matches_and_a_different_draw_is_named() {
        let a = vec![vec![add(1), add(2), add(3)], vec![add(1)]];
        let b = vec![vec![add(1), add(2)], vec![add(1), add(5)]];
        let same = compare(&a, &b);
        assert!(same.all_match());
        assert_eq!(same.compared, 3);
        let c = vec![vec![add(1), add(4)], vec![add(1)]];
        let differ = compare(&a, &c);
        assert!(!differ.all_match());
        assert_eq!(differ.first_difference, Some((0, 1)));
        assert_eq!(differ.matching, 1);
    }

    #[test]
    fn processes_map_to_clients_by_remainder_and_retries_and_final_reads_are_left_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("history.jsonl");
        let lines = [
            r#"{"index":0,"time":1,"process":0,"type":"invoke","f":"add","key":"k/a","value":1}"#,
            r#"{"index":1,"time":2,"process":0,"type":"info","f":"add","key":"k/a","value":1}"#,
            r#"{"index":2,"time":3,"process":2,"type":"invoke","f":"add","key":"k/a","value":1,"retry_of":0}"#,
            r#"{"index":3,"time":4,"process":2,"type":"ok","f":"add","key":"k/a","value":1}"#,
            r#"{"index":4,"time":5,"process":2,"type":"invoke","f":"read","key":"k/a","value":null}"#,
            r#"{"index":5,"time":6,"process":1,"type":"invoke","f":"add","key":"k/a","value":2}"#,
            r#"{"index":6,"time":7,"process":2,"type":"ok","f":"read","key":"k/a","value":2}"#,
            r#"{"index":7,"time":8,"process":1,"type":"ok","f":"add","key":"k/a","value":2}"#,
            r#"{"index":8,"time":9,"process":1000000000,"type":"invoke","f":"read","key":"k/a","value":null}"#,
            r#"{"index":9,"time":10,"process":1000000000,"type":"ok","f":"read","key":"k/a","value":3}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        let clients = per_client(&path, 2, false)
            .expect("reads")
            .expect("numbered");
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].len(), 2, "{clients:?}");
        assert_eq!(clients[0][1].f, F::Read);
        assert_eq!(clients[1], vec![add(2)]);
    }

    #[test]
    fn a_history_numbered_otherwise_is_not_compared_and_time_buckets_drop_their_bucket() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("history.jsonl");
        // Process 2 takes over from no retired process 0: numbered by an older checker.
        let lines = [
            r#"{"index":0,"time":1,"process":0,"type":"invoke","f":"add","key":"k/a-b3","value":1}"#,
            r#"{"index":1,"time":2,"process":0,"type":"ok","f":"add","key":"k/a-b3","value":1}"#,
            r#"{"index":2,"time":3,"process":2,"type":"invoke","f":"read","key":"k/a-b4","value":null}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        assert_eq!(per_client(&path, 2, false).expect("reads"), None);
        let clients = per_client(&path, 3, true)
            .expect("reads")
            .expect("numbered");
        assert_eq!(clients[0][0].key.as_deref(), Some("k/a"));
        assert_eq!(clients[2][0].key.as_deref(), Some("k/a"));
        assert_eq!(without_bucket("k/a-bx"), "k/a-bx");
    }
}
