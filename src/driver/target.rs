//! Someone else's service as the system under test (`--target`): its address checked, a
//! probe that finds out before the load whether it answers the node API and has our fault
//! plane, and the workload's keys moved to a namespace of the run's own.

use super::recorder::Recorder;
use crate::api::{AdminClient, CallError, ConsistencyLevel, CounterKey, DataClient, ReadResponse};
use checkers::history::HistoryError;
use checkers::{Op, OpType, Process, F};
use std::time::Duration;

/// How long the probe waits for each answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A target as given on the command line (`http://HOST:PORT` or `HOST:PORT`), as `HOST:PORT`.
pub fn parse(s: &str) -> Result<String, String> {
    let addr = match s.split_once("://") {
        None => s,
        Some(("http", rest)) => rest,
        Some(("https", _)) => {
            return Err(format!(
                "`{s}`: https targets are not supported (the driver speaks plain HTTP); give http://HOST:PORT"
            ))
        }
        Some((scheme, _)) => {
            return Err(format!(
                "`{s}`: the scheme `{scheme}` is not HTTP; give http://HOST:PORT or HOST:PORT"
            ))
        }
    };
    let addr = addr.trim_end_matches('/');
    match addr.rsplit_once(':') {
        Some((host, port))
            if !host.is_empty() && !host.contains('/') && port.parse::<u16>().is_ok() =>
        {
            Ok(addr.to_string())
        }
        _ => Err(format!("expected http://HOST:PORT or HOST:PORT, got `{s}`")),
    }
}

/// What the probe found at a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Our node, with its id: its `/admin` fault plane answers, so the nemesis can play
    /// through it (cuts and delays name peers by these ids).
    FaultPlane(String),
    /// A service that answers the node API's reads and has no fault plane we can use.
    DataOnly,
}

/// Why a target cannot be driven.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// Nothing answered HTTP there in time.
    #[error("target {addr} is not reachable over HTTP ({reason}); is the service running?")]
    Unreachable {
        /// The target.
        addr: String,
        /// What went wrong.
        reason: String,
    },
    /// It answers, but not as the node API (docs/node-api.md) does.
    #[error("target {addr} does not speak the node API: GET {path} answered {answer}")]
    NotNodeApi {
        /// The target.
        addr: String,
        /// The request that was made.
        path: String,
        /// What came back.
        answer: String,
    },
    /// With `--keys-as-is`, a key's count could not be read at QUORUM before the load.
    #[error("target {addr} could not read `{key}` at QUORUM for the baseline ({answer}): bring its replicas up, or drop --keys-as-is (keys then get a namespace of the run's own)")]
    NoBaseline {
        /// The target.
        addr: String,
        /// The counter.
        key: String,
        /// What came back.
        answer: String,
    },
}

/// Finds out what answers at `addr`: our node's health (`GET /admin/health`), else a read of
/// a counter no workload uses, each given [`PROBE_TIMEOUT`].
pub async fn probe(addr: &str) -> Result<Found, ProbeError> {
    let unreachable = |e: &CallError| ProbeError::Unreachable {
        addr: addr.to_string(),
        reason: e.to_string(),
    };
    match AdminClient::new(PROBE_TIMEOUT).health(addr).await {
        Ok(health) => return Ok(Found::FaultPlane(health.id)),
        Err(e @ (CallError::NotSent { .. } | CallError::NoAnswer { .. })) => {
            return Err(unreachable(&e))
        }
        // Some HTTP answer: not (or not openly) our admin plane; try the data plane.
        Err(CallError::Status { .. } | CallError::BadAnswer(_)) => {}
    }
    let key = CounterKey {
        partition: "checker-probe".to_string(),
        cell: "probe".to_string(),
    };
    let read = DataClient::new(PROBE_TIMEOUT)
        .read(addr, &key, ConsistencyLevel::One)
        .await;
    match read {
        Ok(_) => Ok(Found::DataOnly),
        Err(e @ (CallError::NotSent { .. } | CallError::NoAnswer { .. })) => Err(unreachable(&e)),
        Err(e) => Err(ProbeError::NotNodeApi {
            addr: addr.to_string(),
            path: "/v1/counters/checker-probe/probe?cl=ONE".to_string(),
            answer: e.to_string(),
        }),
    }
}

/// The counts the counters of `keys` already hold at `addr` (read at QUORUM), for a run
/// that uses its keys as they are: recorded at the start of the history as acknowledged adds
/// ([`record_baseline`]), so that every checker starts each counter from them. Absent
/// counters are left out, and with `absent_is_zero` (a target that cannot tell absent from
/// 0) so are those at 0.
pub async fn baseline(
    addr: &str,
    keys: &[String],
    absent_is_zero: bool,
) -> Result<Vec<(String, i64)>, ProbeError> {
    let client = DataClient::new(PROBE_TIMEOUT);
    let mut held = Vec::new();
    for key in keys {
        let Ok(parsed) = key.parse::<CounterKey>() else {
            continue;
        };
        match client.read(addr, &parsed, ConsistencyLevel::Quorum).await {
            Ok(ReadResponse {
                value: Some(value), ..
            }) if !(absent_is_zero && value == 0) => held.push((key.clone(), value)),
            Ok(_) => {}
            Err(e @ (CallError::NotSent { .. } | CallError::NoAnswer { .. })) => {
                return Err(ProbeError::Unreachable {
                    addr: addr.to_string(),
                    reason: e.to_string(),
                })
            }
            // The node API, but not enough replicas answered at QUORUM.
            Err(
                e @ CallError::Status {
                    status: 503 | 504, ..
                },
            ) => {
                return Err(ProbeError::NoBaseline {
                    addr: addr.to_string(),
                    key: key.clone(),
                    answer: e.to_string(),
                })
            }
            Err(e) => {
                return Err(ProbeError::NotNodeApi {
                    addr: addr.to_string(),
                    path: format!("/v1/counters/{key}?cl=QUORUM"),
                    answer: e.to_string(),
                })
            }
        }
    }
    Ok(held)
}

/// Records each `(key, count)` of a baseline as an add of that count acknowledged before the
/// load: a counter that held a count when the run began is judged from it.
pub fn record_baseline(recorder: &Recorder, counts: &[(String, i64)]) -> Result<(), HistoryError> {
    for (key, count) in counts {
        let mut invoke = Op::new(
            Process::Client(checkers::op::BASELINE),
            OpType::Invoke,
            F::Add,
            Some(key.clone()),
            (*count).into(),
        );
        invoke.node = Some("baseline".to_string());
        recorder.record(invoke.clone())?;
        invoke.kind = OpType::Ok;
        recorder.record(invoke)?;
    }
    Ok(())
}

/// The workload's keys moved into the run's own namespace: each partition prefixed with
/// `namespace`, so that counters a target kept from earlier runs are never read as this
/// run's. Keys that are not `partition/cell` are left as they are (the workload's own check
/// reports them).
pub fn namespaced(keys: &[String], namespace: &str) -> Vec<String> {
    keys.iter()
        .map(|k| match k.split_once('/') {
            Some((partition, cell)) => format!("{namespace}{partition}/{cell}"),
            None => k.clone(),
        })
        .collect()
}

/// A namespace no earlier run used: `r` and 8 random hex digits, then `-`.
pub fn fresh_namespace() -> String {
    format!("r{:08x}-", rand::random::<u32>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_targets_are_taken() {
        assert_eq!(parse("127.0.0.1:8080"), Ok("127.0.0.1:8080".to_string()));
        assert_eq!(parse("http://node:80/"), Ok("node:80".to_string()));
        let ftp = parse("ftp://127.0.0.1:21").unwrap_err();
        assert!(ftp.contains("`ftp` is not HTTP"), "{ftp}");
        let https = parse("https://127.0.0.1:443").unwrap_err();
        assert!(https.contains("https targets are not supported"), "{https}");
        assert!(parse("127.0.0.1").is_err());
        assert!(parse("127.0.0.1:99999").is_err());
        assert!(parse(":80").is_err());
        assert!(parse("http://a/b:80").is_err());
    }

    #[test]
    fn namespacing_prefixes_the_partition() {
        let keys = vec!["views/home".to_string(), "q/1".to_string()];
        assert_eq!(
            namespaced(&keys, "r0000002a-"),
            vec!["r0000002a-views/home", "r0000002a-q/1"]
        );
        assert_ne!(fresh_namespace(), fresh_namespace());
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable_at_once() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = listener.local_addr().expect("its address").to_string();
        drop(listener);
        let err = probe(&addr).await.unwrap_err();
        assert!(matches!(err, ProbeError::Unreachable { .. }), "{err}");
        assert!(err.to_string().contains(&addr), "{err}");
    }
}
