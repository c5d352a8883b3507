//! Consistency levels: how many replicas must answer before the coordinator does.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `ONE`, `QUORUM` or `ALL`, as in CQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ConsistencyLevel {
    /// One replica.
    One,
    /// A majority of the replicas.
    #[default]
    Quorum,
    /// Every replica.
    All,
}

/// Why a consistency level was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsistencyError {
    /// `ANY` cannot be used for counters, as in Cassandra.
    #[error("consistency level ANY is not supported for counter writes or reads")]
    Any,
    /// Not a level at all.
    #[error("unknown consistency level `{0}`: expected ONE, QUORUM or ALL")]
    Unknown(String),
}

impl ConsistencyLevel {
    /// How many of `replicas` must acknowledge.
    pub fn block_for(self, replicas: usize) -> usize {
        match self {
            ConsistencyLevel::One => 1,
            ConsistencyLevel::Quorum => replicas / 2 + 1,
            ConsistencyLevel::All => replicas,
        }
    }

    /// The name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsistencyLevel::One => "ONE",
            ConsistencyLevel::Quorum => "QUORUM",
            ConsistencyLevel::All => "ALL",
        }
    }
}

impl FromStr for ConsistencyLevel {
    type Err = ConsistencyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "ONE" => Ok(ConsistencyLevel::One),
            "QUORUM" => Ok(ConsistencyLevel::Quorum),
            "ALL" => Ok(ConsistencyLevel::All),
            "ANY" => Err(ConsistencyError::Any),
            _ => Err(ConsistencyError::Unknown(s.to_string())),
        }
    }
}

impl TryFrom<String> for ConsistencyLevel {
    type Error = ConsistencyError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<ConsistencyLevel> for String {
    fn from(cl: ConsistencyLevel) -> Self {
        cl.as_str().to_string()
    }
}

impl fmt::Display for ConsistencyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ConsistencyLevel::*;
    use super::*;

    #[test]
    fn block_for_three_and_five_replicas() {
        assert_eq!([One, Quorum, All].map(|cl| cl.block_for(3)), [1, 2, 3]);
        assert_eq!([One, Quorum, All].map(|cl| cl.block_for(5)), [1, 3, 5]);
    }

    #[test]
    fn any_is_refused_for_counters() {
        assert_eq!(
            "ANY".parse::<ConsistencyLevel>(),
            Err(ConsistencyError::Any)
        );
        assert!(matches!(
            "TWO".parse::<ConsistencyLevel>(),
            Err(ConsistencyError::Unknown(_))
        ));
        assert_eq!("quorum".parse::<ConsistencyLevel>(), Ok(Quorum));
    }
}
