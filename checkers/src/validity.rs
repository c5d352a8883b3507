//! A checker's verdict: valid, invalid, or unknown, and how verdicts combine.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `true`, `false` or `"unknown"` in results.json.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Validity {
    /// The history satisfies the checker.
    Valid,
    /// The history violates it.
    Invalid,
    /// The checker ran out of time or the history cannot decide.
    #[default]
    Unknown,
}

impl Validity {
    /// Invalid when a checker found something wrong, else unknown when it could not decide
    /// something, else valid.
    pub fn from_findings(wrong: bool, undecided: bool) -> Validity {
        match (wrong, undecided) {
            (true, _) => Validity::Invalid,
            (false, true) => Validity::Unknown,
            (false, false) => Validity::Valid,
        }
    }

    /// Combines verdicts: any invalid wins, then unknown.
    pub fn combine(self, other: Validity) -> Validity {
        use Validity::*;
        match (self, other) {
            (Invalid, _) | (_, Invalid) => Invalid,
            (Unknown, _) | (_, Unknown) => Unknown,
            _ => Valid,
        }
    }

    /// The process exit code docs/results.md gives this verdict: 0, 1 or 2.
    pub fn exit_code(self) -> i32 {
        match self {
            Validity::Valid => 0,
            Validity::Invalid => 1,
            Validity::Unknown => 2,
        }
    }

    /// A word for summaries.
    pub fn word(self) -> &'static str {
        match self {
            Validity::Valid => "VALID",
            Validity::Invalid => "INVALID",
            Validity::Unknown => "UNKNOWN",
        }
    }
}

impl Serialize for Validity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Validity::Valid => s.serialize_bool(true),
            Validity::Invalid => s.serialize_bool(false),
            Validity::Unknown => s.serialize_str("unknown"),
        }
    }
}

impl<'de> Deserialize<'de> for Validity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(true) => Ok(Validity::Valid),
            serde_json::Value::Bool(false) => Ok(Validity::Invalid),
            serde_json::Value::String(s) if s == "unknown" => Ok(Validity::Unknown),
            other => Err(serde::de::Error::custom(format!(
                "expected true, false or \"unknown\", got {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Validity::*;
    use super::*;

    #[test]
    fn invalid_wins_then_unknown() {
        assert_eq!(Valid.combine(Unknown).combine(Invalid), Invalid);
        assert_eq!(Valid.combine(Unknown), Unknown);
        assert_eq!(Valid.combine(Valid), Valid);
    }

    #[test]
    fn serializes_as_design_says() {
        let text = serde_json::to_string(&[Valid, Invalid, Unknown]).expect("serialize");
        assert_eq!(text, r#"[true,false,"unknown"]"#);
        let back: Vec<Validity> = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, vec![Valid, Invalid, Unknown]);
    }
}
