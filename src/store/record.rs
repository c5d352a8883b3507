//! run.json: the full effective configuration of a run, its seed, the versions and the
//! nodes, written as the run goes and read back by `check`, `report`, `replay` and `soak`.

use super::folder::RunFolder;
use super::json::write_json;
use crate::workload::net::Topology;
use crate::workload::system::System;
use crate::workload::Workload;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;

/// One node of a run: its id, address and process id (0 for a target the run did not start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// The node's id, such as `n1`.
    pub id: String,
    /// `host:port`.
    pub addr: String,
    /// The process id.
    pub pid: u32,
}

/// The real system a run tested: which, its version and its configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemRecord {
    /// `etcd` or `redis`.
    pub name: System,
    /// What the system's binary says of its version.
    pub version: String,
    /// The configuration its processes were started with.
    pub config: serde_json::Value,
}

impl SystemRecord {
    /// The record of `name` at `version` with `config`.
    pub fn new(name: System, version: String, config: serde_json::Value) -> Self {
        SystemRecord {
            name,
            version,
            config,
        }
    }
}

/// run.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The effective workload, with its name.
    #[serde(deserialize_with = "named_workload")]
    pub workload: Workload,
    /// The seed.
    pub seed: u64,
    /// The version of this program that made the run.
    pub checker_version: String,
    /// The command line.
    #[serde(default)]
    pub command: Vec<String>,
    /// When the run began (RFC 3339).
    pub started: String,
    /// When it ended; none while it runs.
    #[serde(default)]
    pub finished: Option<String>,
    /// Ctrl-C stopped the load early.
    #[serde(default)]
    pub interrupted: bool,
    /// The cluster started with no data (true of the bundled cluster).
    #[serde(default)]
    pub cluster_started_empty: bool,
    /// The nodes.
    #[serde(default)]
    pub nodes: Vec<NodeRecord>,
    /// Why the workload's faults were not played, when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults_note: Option<String>,
    /// The cluster ran in this process on a simulated network and clock (`--sim`): the
    /// seed replays the history byte for byte, and its times are simulated time.
    #[serde(default)]
    pub sim: bool,
    /// With `--net netns`: the namespaces, bridge and addresses the run made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Topology>,
    /// The real system the run started (etcd, Redis); none for the bundled nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemRecord>,
}

/// Why run.json could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file is missing or unreadable.
    #[error("{path}: {source}")]
    Read {
        /// run.json.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The file is not a run record.
    #[error("{path}: {source}")]
    Parse {
        /// run.json.
        path: PathBuf,
        /// What is wrong with it.
        source: serde_json::Error,
    },
}

impl RunRecord {
    /// A new run of `workload` with `seed`, begun now.
    pub fn new(workload: Workload, seed: u64) -> Self {
        RunRecord {
            workload,
            seed,
            checker_version: env!("CARGO_PKG_VERSION").to_string(),
            command: std::env::args().collect(),
            started: chrono::Local::now().to_rfc3339(),
            finished: None,
            interrupted: false,
            cluster_started_empty: true,
            nodes: Vec::new(),
            faults_note: None,
            sim: false,
            network: None,
            system: None,
        }
    }

    /// Writes the record into its run folder, replacing what was there.
    pub fn write(&self, folder: &RunFolder) -> anyhow::Result<()> {
        write_json(&folder.record(), self)
    }

    /// Reads a run folder's record.
    pub fn read(folder: &RunFolder) -> Result<Self, RecordError> {
        let path = folder.record();
        let text = std::fs::read_to_string(&path).map_err(|source| RecordError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| RecordError::Parse { path, source })
    }
}

/// A workload as run.json holds it: its fields and its `name`, which a workload file never
/// names itself (it is the file's name).
fn named_workload<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Workload, D::Error> {
    let mut fields = serde_json::Map::deserialize(deserializer)?;
    let name = match fields.remove("name") {
        Some(serde_json::Value::String(name)) => name,
        _ => String::new(),
    };
    let mut workload: Workload = serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(serde::de::Error::custom)?;
    workload.name = name;
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_it_was_written_name_included() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let folder = RunFolder::open(dir.path());
        let mut workload = Workload {
            name: "hot-counter".to_string(),
            ..Workload::default()
        };
        workload.cluster.tombstone_warn_threshold = 7;
        let mut record = RunRecord::new(workload, 42);
        record.nodes.push(NodeRecord {
            id: "n1".into(),
            addr: "127.0.0.1:1".into(),
            pid: 9,
        });
        record.write(&folder)?;
        assert_eq!(RunRecord::read(&folder)?, record);
        Ok(())
    }

    #[test]
    fn a_missing_or_foreign_record_is_an_error_naming_the_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let folder = RunFolder::open(dir.path());
        assert!(matches!(
            RunRecord::read(&folder),
            Err(RecordError::Read { .. })
        ));
        std::fs::write(
            folder.record(),
            r#"{"workload": {"nodes": "three"}, "seed": 1}"#,
        )?;
        let error = RunRecord::read(&folder).expect_err("not a record");
        assert!(error.to_string().contains("run.json"), "{error}");
        Ok(())
    }
}
