//! The phases of a run: warm-up without faults, faults, heal, and final reads.

use serde::{Deserialize, Serialize};

/// How a run begins and ends around its faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phases {
    /// Seconds of load before the first fault.
    pub warmup_s: f64,
    /// Seconds to wait after every fault is undone, before the final reads.
    pub heal_s: f64,
    /// Run anti-entropy repair on every node during the heal.
    pub repair: bool,
    /// Read every counter from every node at ALL at the end.
    pub final_reads: bool,
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            warmup_s: 2.0,
            heal_s: 2.0,
            repair: false,
            final_reads: true,
        }
    }
}

impl Phases {
    /// Checks the durations.
    pub fn validate(&self) -> Result<(), String> {
        if [self.warmup_s, self.heal_s]
            .iter()
            .any(|s| !(s.is_finite() && *s >= 0.0 && *s <= 3600.0))
        {
            return Err(
                "`phases.warmup_s` and `phases.heal_s` must be between 0 and 3600 seconds".into(),
            );
        }
        Ok(())
    }
}
