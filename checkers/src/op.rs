//! The operation: the one record the driver, the history file and the checkers share.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// Who performed an operation: a client process number or a named actor such as the nemesis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Process {
    /// A client; a retired client's successor gets a new number.
    Client(u64),
    /// A named actor, `"nemesis"` for the fault injector.
    Named(String),
}

/// The first process number of a run's final readers: `checker run` reads every counter
/// from every node at the end with processes from here on.
pub const FINAL_READERS: u64 = 1_000_000_000;

/// The process that records a `--keys-as-is` run's baseline: the counts its counters held
/// before the load, as adds acknowledged before it.
pub const BASELINE: u64 = 2_000_000_000;

impl Process {
    /// Whether this is one of a run's load clients: neither a final reader nor the baseline.
    pub fn is_load(&self) -> bool {
        matches!(self, Process::Client(p) if *p < FINAL_READERS)
    }

    /// Whether this is the process that records a run's baseline.
    pub fn is_baseline(&self) -> bool {
        *self == Process::Client(BASELINE)
    }

    /// The nemesis process.
    pub fn nemesis() -> Self {
        Process::Named("nemesis".to_string())
    }

    /// Whether this is a client process.
    pub fn is_client(&self) -> bool {
        matches!(self, Process::Client(_))
    }
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Process::Client(n) => write!(f, "{n}"),
            Process::Named(name) => f.write_str(name),
        }
    }
}

/// Where an operation is in its life: called, or completed one of three ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpType {
    /// The call.
    Invoke,
    /// Took effect.
    Ok,
    /// Certainly did not take effect.
    Fail,
    /// May or may not have taken effect (a timeout).
    Info,
}

impl OpType {
    /// The name used in histories.
    pub fn as_str(self) -> &'static str {
        match self {
            OpType::Invoke => "invoke",
            OpType::Ok => "ok",
            OpType::Fail => "fail",
            OpType::Info => "info",
        }
    }
}

/// The function an operation performs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum F {
    /// Add a delta (which may be negative) to a counter.
    Add,
    /// Delete a counter.
    Delete,
    /// Read a counter.
    Read,
    /// Read every counter of a partition.
    Scan,
    /// Anything else, such as the nemesis' `start-partition` or `kill`.
    Other(String),
}

impl F {
    /// The name used in histories.
    pub fn as_str(&self) -> &str {
        match self {
            F::Add => "add",
            F::Delete => "delete",
            F::Read => "read",
            F::Scan => "scan",
            F::Other(name) => name,
        }
    }
}

impl From<String> for F {
    fn from(name: String) -> Self {
        match name.as_str() {
            "add" => F::Add,
            "delete" => F::Delete,
            "read" => F::Read,
            "scan" => F::Scan,
            _ => F::Other(name),
        }
    }
}

impl From<F> for String {
    fn from(f: F) -> Self {
        f.as_str().to_string()
    }
}

impl fmt::Display for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a history, in Jepsen's operation model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Op {
    /// Position in the history: 0, 1, 2, … in file order.
    pub index: u64,
    /// Nanoseconds since the run began.
    pub time: u64,
    /// Who performed it.
    pub process: Process,
    /// Invoke, ok, fail or info.
    #[serde(rename = "type")]
    pub kind: OpType,
    /// What it does.
    pub f: F,
    /// `partition/cell` for a counter, `partition` for a scan; absent for nemesis ops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The delta of an add, the count a read returned, a nemesis op's description.
    #[serde(default)]
    pub value: Value,
    /// The node that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The consistency level asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cl: Option<String>,
    /// Why a `fail` or `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tombstones the read scanned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tombstones: Option<u64>,
    /// The index of the invoke this op retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<u64>,
}

impl Op {
    /// A new op with only the required fields set; the recorder fills in `index` and `time`.
    pub fn new(process: Process, kind: OpType, f: F, key: Option<String>, value: Value) -> Self {
        Op {
            index: 0,
            time: 0,
            process,
            kind,
            f,
            key,
            value,
            node: None,
            cl: None,
            error: None,
            tombstones: None,
            retry_of: None,
        }
    }

    /// The delta of an add.
    pub fn delta(&self) -> Option<i64> {
        self.value.as_i64()
    }

    /// The count an ok read returned: `Some(None)` for an absent counter, `None` when not a count.
    pub fn read_value(&self) -> Option<Option<i64>> {
        match &self.value {
            Value::Null => Some(None),
            v => v.as_i64().map(Some),
        }
    }

    /// Why this op cannot be checked, if its value does not fit its `f` and `type`.
    pub fn shape_error(&self) -> Option<String> {
        if !self.process.is_client() {
            return None;
        }
        let needs_key = matches!(self.f, F::Add | F::Delete | F::Read | F::Scan);
        if needs_key && self.key.as_deref().is_none_or(str::is_empty) {
            return Some(format!("a client `{}` needs a non-empty `key`", self.f));
        }
        match (&self.f, self.kind) {
            (F::Add, _) if self.delta().is_none() => Some(format!(
                "the value of an `add` must be an integer delta, got {}",
                self.value
            )),
            (F::Read, OpType::Ok) if self.read_value().is_none() => Some(format!(
                "the value of an ok `read` must be an integer or null, got {}",
                self.value
            )),
            (F::Scan, OpType::Ok) if !self.value.is_object() => Some(format!(
                "the value of an ok `scan` must be an object of cell to count, got {}",
                self.value
            )),
            _ => None,
        }
    }
}
