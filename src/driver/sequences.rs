//! Each client's op sequence as a history records it, and whether two runs of one seed drew
//! the same: what `checker replay` reports. A client's ops come from its own source seeded
//! from (seed, client), so they repeat; where the time limit cuts them does not.

use checkers::history::{HistoryError, JsonlReader};
use checkers::{Op, OpType, Process, F};
use serde_json::Value;
use std::path::Path;

/// Processes from here on are the final readers, not clients.
const FINAL_READERS: u64 = 1_000_000_000;

/// One op a client drew: what, on which key, with which value (an add's delta).
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    f: F,
    key: Option<String>,
    value: Value,
}

/// Each client's drawn ops in order, from the invokes of `history`: client `c` made every op
/// of a process `p` with `p mod concurrency = c`. Retries are left out: whether an op is
/// retried depends on timing, not on the seed.
pub fn per_client(history: &Path, concurrency: usize) -> Result<Vec<Vec<Drawn>>, HistoryError> {
    let n = concurrency.max(1) as u64;
    let mut clients = vec![Vec::new(); n as usize];
    for op in JsonlReader::open(history)? {
        let op: Op = op?;
        let Process::Client(p) = op.process else {
            continue;
        };
        if op.kind != OpType::Invoke || op.retry_of.is_some() || p >= FINAL_READERS {
            continue;
        }
        clients[(p % n) as usize].push(Drawn {
            f: op.f,
            key: op.key,
            value: op.value,
        });
    }
    Ok(clients)
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
        let clients = per_client(&path, 2).expect("reads");
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].len(), 2, "{clients:?}");
        assert_eq!(clients[0][1].f, F::Read);
        assert_eq!(clients[1], vec![add(2)]);
    }
}
