//! A counter's key: a partition and a cell, written `partition/cell` in histories and URLs.

/// A counter's key: a partition and a cell, written `partition/cell` in histories.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CounterKey {
    /// The partition (a CQL partition key).
    pub partition: String,
    /// The cell within it (a CQL clustering key).
    pub cell: String,
}

/// The longest key, `partition/cell`, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad counter key `{}`: {reason}", shown(key))]
pub struct KeyError {
    /// The key as given.
    pub key: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl CounterKey {
    /// Checks a partition and a cell taken from a request path.
    pub fn new(partition: &str, cell: &str) -> Result<Self, KeyError> {
        let key = format!("{partition}/{cell}");
        let reason = if partition.is_empty() || cell.is_empty() {
            Some("partition and cell must not be empty")
        } else if partition.contains('/') || cell.contains('/') {
            Some("partition and cell must not contain `/`")
        } else if key.len() > MAX_KEY_BYTES {
            Some("longer than 1024 bytes")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(KeyError { key, reason }),
            None => Ok(CounterKey {
                partition: partition.to_string(),
                cell: cell.to_string(),
            }),
        }
    }
}

/// A key as an error message shows it: cut after 64 bytes, with its length.
fn shown(key: &str) -> String {
    match key.char_indices().nth(64) {
        Some((end, _)) => format!("{}… ({} bytes)", &key[..end], key.len()),
        None => key.to_string(),
    }
}

impl std::str::FromStr for CounterKey {
    type Err = KeyError;

    fn from_str(key: &str) -> Result<Self, Self::Err> {
        match key.split_once('/') {
            Some((partition, cell)) => CounterKey::new(partition, cell),
            None => Err(KeyError {
                key: key.to_string(),
                reason: "expected `partition/cell`",
            }),
        }
    }
}

impl std::fmt::Display for CounterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.partition, self.cell)
    }
}
