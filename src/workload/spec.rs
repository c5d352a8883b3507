//! The workload spec: every field, its default, and how a name or a path becomes a spec.

use super::mix::{KeyDistribution, Mix, Pattern};
use super::nemesis::NemesisSpec;
use super::net::{NetMode, SimNetwork};
use super::phases::Phases;
use super::system::{EtcdSpec, RedisSpec, System};
use crate::api::invalid::{unless, Invalid};
use crate::api::ClusterSettings;
use crate::api::ConsistencyLevel;
use crate::api::DeleteScope;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Why a workload could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// No workload file by that name.
    #[error("no workload `{name}`: looked for {}", tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// The name given.
        name: String,
        /// The files looked for.
        tried: Vec<PathBuf>,
    },
    /// The file could not be read.
    #[error("{}", path.display())]
    Io {
        /// The workload file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not a valid workload (unknown field, wrong type, bad value).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The workload file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// What a client does when an op's outcome is unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RetryPolicy {
    /// Give up on the op (it may or may not have been applied).
    #[default]
    None,
    /// Retry a timed-out add up to N times, as many client drivers do: this overcounts.
    OnTimeout(u32),
    /// Give up on a timed-out add and count it as not done, as an application that drops
    /// timeouts does: this undercounts what was meant when the add was in fact applied.
    Drop,
}

impl FromStr for RetryPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once(':') {
            None if s == "none" => Ok(RetryPolicy::None),
            None if s == "drop" => Ok(RetryPolicy::Drop),
            Some(("on-timeout", n)) => n
                .parse()
                .map(RetryPolicy::OnTimeout)
                .map_err(|_| format!("bad retry count in `{s}`")),
            _ => Err(format!(
                "unknown retry policy `{s}`: expected `none` or `on-timeout:N`"
            )),
        }
    }
}

impl TryFrom<String> for RetryPolicy {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<RetryPolicy> for String {
    fn from(policy: RetryPolicy) -> Self {
        policy.to_string()
    }
}

impl fmt::Display for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryPolicy::None => f.write_str("none"),
            RetryPolicy::Drop => f.write_str("drop"),
            RetryPolicy::OnTimeout(n) => write!(f, "on-timeout:{n}"),
        }
    }
}

/// A workload: the cluster, the load and the client behaviour. Every field has the default
/// shown in [`Workload::default`]; a file need only set what differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// The workload's name (the file name); set by [`load`].
    #[serde(skip_deserializing)]
    pub name: String,
    /// Number of nodes in the cluster.
    pub nodes: usize,
    /// How long the load runs, seconds.
    pub time_limit: f64,
    /// Concurrent clients.
    pub concurrency: usize,
    /// Total ops per second across all clients.
    pub rate: f64,
    /// The most ops the run invokes, whatever the time limit.
    pub ops_limit: u64,
    /// The counters, as `partition/cell`.
    pub keys: Vec<String>,
    /// How ops pick among the keys: `uniform`, `hot` or `zipf`.
    pub key_distribution: KeyDistribution,
    /// With `hot`: the share of ops that go to the first key.
    pub hot_share: f64,
    /// With `zipf`: the exponent.
    pub zipf_exponent: f64,
    /// The access pattern: `counters`, `queue` or `time-buckets`.
    pub pattern: Pattern,
    /// With `time-buckets`: seconds per bucket.
    pub bucket_s: f64,
    /// Shares of adds, reads, deletes and scans.
    pub mix: Mix,
    /// Deltas the adds pick from uniformly (negative ones decrement).
    pub deltas: Vec<i64>,
    /// What a delete op deletes: `row`, `column` or `partition`.
    pub delete_scope: DeleteScope,
    /// Consistency level of adds.
    pub write_cl: ConsistencyLevel,
    /// Consistency level of reads.
    pub read_cl: ConsistencyLevel,
    /// Consistency level of deletes.
    pub delete_cl: ConsistencyLevel,
    /// Consistency level of scans.
    pub scan_cl: ConsistencyLevel,
    /// How long a client waits for an answer before the op's outcome is unknown, ms.
    pub client_timeout_ms: u64,
    /// What a client does after a timeout: `none`, `drop` or `on-timeout:N`.
    pub retry: RetryPolicy,
    /// Warm-up, heal and final reads around the faults.
    pub phases: Phases,
    /// The faults and their schedule.
    pub nemesis: NemesisSpec,
    /// The cluster's settings (Cassandra's and RavenDB's knobs), passed to every node.
    pub cluster: ClusterSettings,
    /// Where the nodes live and who plays network faults: `loopback` or `netns` (root).
    pub net: NetMode,
    /// The simulated network of `--sim` runs.
    pub sim: SimNetwork,
    /// The system under test: `bundled` (our nodes), `etcd` or `redis`.
    pub system: System,
    /// How a run talks to etcd.
    pub etcd: EtcdSpec,
    /// How a run sets up Redis and Sentinel.
    pub redis: RedisSpec,
    /// What a soak run may show and still pass the nightly.
    pub budget: super::budget::Budget,
    /// What the workload exists to show, and the seed that shows it; none for a user's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<super::expect::Expect>,
    /// The target cannot tell an absent counter from one that holds 0: every checker then
    /// reads `null` and `0` as the same value.
    pub absent_is_zero: bool,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            name: String::new(),
            nodes: 3,
            time_limit: 20.0,
            concurrency: 10,
            rate: 200.0,
            ops_limit: 1_000_000,
            keys: vec!["views/home".to_string()],
            key_distribution: KeyDistribution::Uniform,
            hot_share: 0.9,
            zipf_exponent: 1.0,
            pattern: Pattern::Counters,
            bucket_s: 5.0,
            mix: Mix::default(),
            deltas: vec![1],
            delete_scope: DeleteScope::Row,
            write_cl: ConsistencyLevel::Quorum,
            read_cl: ConsistencyLevel::Quorum,
            delete_cl: ConsistencyLevel::Quorum,
            scan_cl: ConsistencyLevel::Quorum,
            client_timeout_ms: 1_000,
            retry: RetryPolicy::None,
            phases: Phases::default(),
            nemesis: NemesisSpec::default(),
            cluster: ClusterSettings::default(),
            net: NetMode::Loopback,
            sim: SimNetwork::default(),
            system: System::Bundled,
            etcd: EtcdSpec::default(),
            redis: RedisSpec::default(),
            budget: super::budget::Budget::default(),
            expect: None,
            absent_is_zero: false,
        }
    }
}

impl Workload {
    /// Parses a workload file's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, WorkloadError> {
        let workload: Workload = toml::from_str(text).map_err(|e| WorkloadError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        workload.validate().map_err(|e| WorkloadError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(workload)
    }

    /// Checks values that parse but make no sense, naming the field.
    pub fn validate(&self) -> Result<(), Invalid> {
        let positive = |x: f64| x > 0.0 && x.is_finite();
        unless(
            self.nodes == 0 || self.nodes > 32,
            "nodes",
            "must be between 1 and 32",
        )?;
        unless(
            !(self.time_limit > 0.0 && self.time_limit <= 7.0 * 86_400.0),
            "time_limit",
            "must be above 0 and at most a week of seconds",
        )?;
        unless(
            self.concurrency == 0 || self.concurrency > 1_000,
            "concurrency",
            "must be between 1 and 1000",
        )?;
        unless(
            !(self.rate > 0.0 && self.rate <= 1_000_000.0),
            "rate",
            "must be above 0 and at most 1000000",
        )?;
        unless(self.ops_limit == 0, "ops_limit", "must be at least 1")?;
        unless(
            self.keys.is_empty(),
            "keys",
            "must name at least one counter",
        )?;
        unless(
            !(0.0..=1.0).contains(&self.hot_share),
            "hot_share",
            "must be between 0 and 1",
        )?;
        unless(
            !positive(self.zipf_exponent),
            "zipf_exponent",
            "must be above 0",
        )?;
        unless(!positive(self.bucket_s), "bucket_s", "must be above 0")?;
        unless(
            self.deltas.is_empty(),
            "deltas",
            "must hold at least one delta",
        )?;
        unless(
            self.client_timeout_ms == 0,
            "client_timeout_ms",
            "must be at least 1",
        )?;
        self.cluster.validate(self.nodes)?;
        self.mix.validate()?;
        self.phases.validate()?;
        self.nemesis.validate()?;
        self.sim.validate()?;
        self.redis.validate(self.nodes)?;
        for key in &self.keys {
            if let Err(e) = key.parse::<crate::api::CounterKey>() {
                return Err(Invalid {
                    field: "keys",
                    rule: e.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// The folder the bundled workloads are read from: `./workloads`, else the source tree's.
fn workload_dirs() -> [PathBuf; 2] {
    [
        PathBuf::from("workloads"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads"),
    ]
}

/// Every bundled workload: its name and the first line of its header comment.
pub fn list() -> Vec<(String, String)> {
    let Some(dir) = workload_dirs().into_iter().find(|d| d.is_dir()) else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let first = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches('#')
                .trim();
            let summary = first
                .split_once(": ")
                .map_or(first, |(_, rest)| rest)
                .to_string();
            (name, summary)
        })
        .collect();
    found.sort();
    found
}

/// Loads a workload by name (`workloads/NAME.toml`) or by path.
pub fn load(name_or_path: &str) -> Result<Workload, WorkloadError> {
    let given = Path::new(name_or_path);
    let candidates = if name_or_path.ends_with(".toml") || given.components().count() > 1 {
        vec![given.to_path_buf()]
    } else {
        let file = format!("{name_or_path}.toml");
        vec![
            Path::new("workloads").join(&file),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("workloads")
                .join(&file),
        ]
    };
    let Some(path) = candidates.iter().find(|p| p.is_file()) else {
        return Err(WorkloadError::NotFound {
            name: name_or_path.to_string(),
            tried: candidates,
        });
    };
    let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
        path: path.clone(),
        source,
    })?;
    let mut workload = Workload::parse(&text, path)?;
    workload.name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name_or_path.to_string());
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_gives_the_defaults() {
        let w = Workload::parse("", Path::new("w.toml")).expect("valid");
        assert_eq!(w, Workload::default());
    }

    #[test]
    fn an_unknown_field_is_named_with_the_file() {
        let err = Workload::parse("concurency = 3\n", Path::new("w.toml"))
            .expect_err("typo")
            .to_string();
        assert!(err.starts_with("w.toml: "), "{err}");
        assert!(err.contains("concurency"), "{err}");
    }

    #[test]
    fn a_bad_value_is_named() {
        let err = Workload::parse("hot_share = 1.5\n", Path::new("w.toml"))
            .expect_err("out of range")
            .to_string();
        assert!(err.contains("hot_share"), "{err}");
        let err = Workload::parse("write_cl = \"ANY\"\n", Path::new("w.toml"))
            .expect_err("ANY")
            .to_string();
        assert!(err.contains("ANY"), "{err}");
    }

    #[test]
    fn the_network_mode_is_a_field_and_a_bad_one_is_named() {
        let w = Workload::parse("net = \"netns\"\n", Path::new("w.toml")).expect("valid");
        assert_eq!(w.net, NetMode::Netns);
        let err = Workload::parse("net = \"docker\"\n", Path::new("w.toml"))
            .expect_err("unknown mode")
            .to_string();
        assert!(err.contains("docker"), "{err}");
    }

    #[test]
    fn retry_policies_parse_and_print_back() {
        for text in ["none", "drop", "on-timeout:3"] {
            assert_eq!(text.parse::<RetryPolicy>().expect(text).to_string(), text);
        }
        assert!("on-timeout:x".parse::<RetryPolicy>().is_err());
        assert!("always".parse::<RetryPolicy>().is_err());
    }

    #[test]
    fn the_bundled_workloads_load_and_list_with_their_summaries() {
        let listed = list();
        assert!(listed.len() >= 12, "{listed:?}");
        for (name, summary) in &listed {
            let w = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&w.name, name);
            assert!(!summary.is_empty(), "{name} has no header comment");
        }
        let w = load("hot-counter").expect("bundled workload");
        assert_eq!(w.name, "hot-counter");
        assert!(matches!(
            load("no-such-workload"),
            Err(WorkloadError::NotFound { .. })
        ));
    }
}
