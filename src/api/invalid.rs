//! A setting that parses but makes no sense: the field, and the rule it breaks.

/// A value that breaks a rule, naming its field as a workload file does (`cluster.rf`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {rule}")]
pub struct Invalid {
    /// The field, such as `nemesis.at_once`.
    pub field: &'static str,
    /// What it must be, such as `must be between 1 and 8`.
    pub rule: String,
}

/// `Err` naming `field` and `rule` when `bad`.
pub fn unless(bad: bool, field: &'static str, rule: impl Into<String>) -> Result<(), Invalid> {
    if bad {
        Err(Invalid {
            field,
            rule: rule.into(),
        })
    } else {
        Ok(())
    }
}
