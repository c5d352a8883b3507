//! The operation: the one record the driver, the history file and the checkers share.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// Who performed an operation: a client process number or a named actor such as the nemesis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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

/// A number or a name, read without buffering the value first (as `untagged` would).
impl<'de> Deserialize<'de> for Process {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Process;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a process: a non-negative integer or a name")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Process, E> {
                Ok(Process::Client(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Process, E> {
                u64::try_from(n)
                    .map(Process::Client)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Process, E> {
                Ok(Process::Named(name.to_string()))
            }
        }
        deserializer.deserialize_any(Visitor)
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

impl From<&str> for F {
    fn from(name: &str) -> Self {
        match name {
            "add" => F::Add,
            "delete" => F::Delete,
            "read" => F::Read,
            "scan" => F::Scan,
            _ => F::Other(name.to_string()),
        }
    }
}

impl From<String> for F {
    fn from(name: String) -> Self {
        match F::from(name.as_str()) {
            F::Other(_) => F::Other(name),
            known => known,
        }
    }
}

impl From<F> for String {
    fn from(f: F) -> Self {
        f.as_str().to_string()
    }
}

/// Its name, as a string.
impl Serialize for F {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Any name; one of ours without allocating.
impl<'de> Deserialize<'de> for F {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = F;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a function name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<F, E> {
                Ok(F::from(name))
            }
        }
        deserializer.deserialize_str(Visitor)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_and_functions_read_back_as_written() {
        let line = r#"{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-partition","value":null}"#;
        let op: Op = serde_json::from_str(line).expect("a nemesis op");
        assert_eq!(op.process, Process::nemesis());
        assert_eq!(op.f, F::Other("start-partition".into()));
        assert_eq!(serde_json::to_string(&op).expect("serializes"), line);
        let line =
            r#"{"index":1,"time":5,"process":7,"type":"invoke","f":"add","key":"c/a","value":2}"#;
        let op: Op = serde_json::from_str(line).expect("a client add");
        assert_eq!(
            (op.process.clone(), op.f.clone()),
            (Process::Client(7), F::Add)
        );
        assert_eq!(serde_json::to_string(&op).expect("serializes"), line);
    }

    #[test]
    fn a_negative_or_fractional_process_is_refused() {
        for process in ["-1", "1.5", "true", "[1]"] {
            let line = format!(
                r#"{{"index":0,"time":0,"process":{process},"type":"invoke","f":"read","key":"c/a"}}"#
            );
            let error = serde_json::from_str::<Op>(&line).expect_err(process);
            assert!(error.to_string().contains("process"), "{process}: {error}");
        }
    }
}
